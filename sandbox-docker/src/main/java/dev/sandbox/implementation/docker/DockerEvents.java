package dev.sandbox.implementation.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * One subscription to the daemon's event stream per provider: the deaths ({@code die}), removals ({@code destroy})
 * and out-of-memory kills ({@code oom}) of containers labelled {@value DockerControl#SESSION_LABEL}. It starts with
 * the first session and runs until the provider closes; a broken or ended stream reconnects with a backoff (100 ms
 * doubling up to 5 s), asking for the events it missed since the last one it saw ({@code since}), so a death during a
 * reconnect is still seen.
 *
 * <p>Bounded: one connection, read as the handler keeps up (events are handled on the connection's thread and only
 * hand work on), and one event of at most {@value #MAX_EVENT_BYTES} bytes is held while it is split from the stream; a
 * longer one (the daemon repeats a container's labels in every event) is dropped whole.
 */
final class DockerEvents {
    private static final Logger LOG = LoggerFactory.getLogger(DockerEvents.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The longest event kept. */
    static final int MAX_EVENT_BYTES = 256 * 1024;

    private static final String FILTERS = "{\"type\":[\"container\"],\"event\":[\"die\",\"destroy\",\"oom\"],"
            + "\"label\":[\"" + DockerControl.SESSION_LABEL + "\"]}";

    /** How far back the first connection asks: a container that died between its start and our subscribing. */
    private static final long FIRST_LOOK_BACK_SECONDS = 60;

    /**
     * A container's event.
     *
     * @param action {@code die}, {@code destroy} or {@code oom}
     * @param containerId the container
     * @param attributes the event's attributes (labels, and {@code exitCode} on {@code die})
     */
    record Event(String action, String containerId, Map<String, String> attributes) {}

    private final DockerDataPlane data;
    private final Consumer<Event> handler;
    private Disposable subscription; // guarded by this
    private boolean closed; // guarded by this
    /** The daemon's time of the last event seen, in nanoseconds since the epoch; where a reconnect picks up. */
    private volatile long lastNanos;

    /**
     * Prepares the subscription; nothing is connected until {@link #watch()}.
     *
     * @param data the data plane whose HTTP client reaches the daemon
     * @param handler gets each event, on the connection's thread: must not block
     */
    DockerEvents(DockerDataPlane data, Consumer<Event> handler) {
        this.data = data;
        this.handler = handler;
    }

    /** Starts the subscription unless it runs (or this was closed). Idempotent, does not block. */
    void watch() {
        synchronized (this) {
            if (subscription != null || closed) {
                return;
            }
            lastNanos = (System.currentTimeMillis() / 1000 - FIRST_LOOK_BACK_SECONDS) * 1_000_000_000L;
            subscription = Flux.defer(this::connectOnce)
                    // the daemon ended the stream (a restart): the same as a broken one
                    .concatWith(Mono.error(() -> new IOException("the daemon ended the event stream")))
                    .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(100))
                            .maxBackoff(Duration.ofSeconds(5))
                            .transientErrors(true)
                            .doBeforeRetry(r -> LOG.debug(
                                    "docker event stream failed ({}); reconnecting",
                                    r.failure().toString())))
                    .subscribe(this::dispatch, e -> LOG.warn("docker event stream gave up: {}", e.toString()));
        }
    }

    /** Whether the subscription was started. */
    synchronized boolean watching() {
        return subscription != null && !subscription.isDisposed();
    }

    /** Ends the subscription; no event is handled afterwards. */
    void close() {
        Disposable s;
        synchronized (this) {
            closed = true;
            s = subscription;
        }
        if (s != null) {
            s.dispose();
        }
    }

    private void dispatch(Event e) {
        try {
            handler.accept(e);
        } catch (RuntimeException ex) {
            LOG.warn("handling docker event {} of container {} failed", e.action(), e.containerId(), ex);
        }
    }

    private Flux<Event> connectOnce() {
        long since = lastNanos;
        String uri = "/events?since=" + since / 1_000_000_000L + "." + String.format("%09d", since % 1_000_000_000L)
                + "&filters=" + URLEncoder.encode(FILTERS, StandardCharsets.UTF_8);
        LineSplitter lines = new LineSplitter(MAX_EVENT_BYTES);
        return data.http().get().uri(uri).response((resp, body) -> {
            int status = resp.status().code();
            if (status != 200) {
                return body.asByteArray()
                        .take(1)
                        .map(b -> new String(b, 0, Math.min(b.length, 1024), StandardCharsets.UTF_8))
                        .defaultIfEmpty(resp.status().reasonPhrase())
                        .flatMap(m -> Mono.<Event>error(DockerErrors.connection(
                                data.dockerHost(),
                                "the event stream (HTTP " + status + ")",
                                new IOException(m.strip()))));
            }
            return body.asByteArray().concatMapIterable(lines::feed).handle((line, sink) -> {
                Event e = parse(line);
                if (e != null) {
                    sink.next(e);
                }
            });
        });
    }

    /** One event line, or {@code null} when it is not a container event this subscription asked for. */
    Event parse(byte[] line) {
        JsonNode n;
        try {
            n = JSON.readTree(line);
        } catch (IOException e) {
            LOG.debug("ignoring a docker event that is not JSON: {}", e.toString());
            return null;
        }
        long nanos = n.path("timeNano").asLong(0);
        if (nanos > lastNanos) {
            lastNanos = nanos;
        }
        JsonNode actor = n.path("Actor");
        String id = actor.path("ID").asText(n.path("id").asText(""));
        String action = n.path("Action").asText(n.path("status").asText(""));
        if (id.isEmpty() || !n.path("Type").asText("container").equals("container")) {
            return null;
        }
        Map<String, String> attributes = new LinkedHashMap<>();
        actor.path("Attributes")
                .properties()
                .forEach(en -> attributes.put(en.getKey(), en.getValue().asText()));
        return new Event(action, id, attributes);
    }

    /**
     * Cuts a byte stream into lines ending in {@code \n}, holding at most {@code max} bytes of an unfinished line; a
     * longer line is dropped whole. Not thread-safe: fed by one stream.
     */
    static final class LineSplitter {
        private final int max;
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
        private boolean skipping;

        LineSplitter(int max) {
            this.max = max;
        }

        List<byte[]> feed(byte[] chunk) {
            List<byte[]> out = new ArrayList<>(1);
            int start = 0;
            for (int i = 0; i < chunk.length; i++) {
                if (chunk[i] != '\n') {
                    continue;
                }
                if (!skipping && pending.size() + (i - start) <= max) {
                    pending.write(chunk, start, i - start);
                    if (pending.size() > 0) {
                        out.add(pending.toByteArray());
                    }
                } else {
                    LOG.debug("dropping a docker event of more than {} bytes", max);
                }
                pending.reset();
                skipping = false;
                start = i + 1;
            }
            int rest = chunk.length - start;
            if (!skipping && pending.size() + rest <= max) {
                pending.write(chunk, start, rest);
            } else {
                pending.reset();
                skipping = true;
            }
            return out;
        }
    }
}
