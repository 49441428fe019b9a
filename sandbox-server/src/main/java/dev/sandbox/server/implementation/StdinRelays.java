package dev.sandbox.server.implementation;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Joins a command's stdin with its upload: a command started with {@code "stdinId": X} reads its standard input from
 * the body of {@code PUT .../stdin/X}, whichever of the two requests comes first. Each side waits for the other up to
 * a timeout; the upload's answer is sent once the command has read the body (or stopped reading it).
 */
public final class StdinRelays {
    private final Map<String, Relay> relays = new ConcurrentHashMap<>();
    private final Duration timeout;

    /**
     * Creates the registry.
     *
     * @param timeout how long one side waits for the other
     */
    public StdinRelays(Duration timeout) {
        this.timeout = timeout;
    }

    private final class Relay {
        final String id;
        final Sinks.One<Flux<ByteBuffer>> body = Sinks.one();
        final Sinks.Empty<Void> started = Sinks.empty();
        final Sinks.Empty<Void> done = Sinks.empty();

        Relay(String id) {
            this.id = id;
        }

        void finish() {
            started.tryEmitEmpty();
            done.tryEmitEmpty();
            relays.remove(id, this);
        }
    }

    private Relay relay(String id) {
        return relays.computeIfAbsent(id, Relay::new);
    }

    /**
     * The stdin publisher of a command: the upload's body once it arrives.
     *
     * @param id the stdin id
     * @return the publisher, subscribed by the command's stdin pump
     */
    public Flux<ByteBuffer> stdin(String id) {
        Relay r = relay(id);
        return r.body.asMono()
                .timeout(
                        timeout,
                        Mono.error(() -> new HttpError(
                                408, "StdinTimeout", "no upload arrived for stdin " + id + " within " + timeout)))
                .flatMapMany(f -> f)
                .doFinally(s -> r.finish());
    }

    /**
     * Hands an upload's body to the command waiting for it.
     *
     * @param id the stdin id
     * @param body the body, as copied buffers
     * @return completes when the command has read the body or stopped reading it
     */
    public Mono<Void> upload(String id, Flux<ByteBuffer> body) {
        return Mono.defer(() -> {
            Relay r = relay(id);
            Flux<ByteBuffer> read =
                    body.doOnSubscribe(s -> r.started.tryEmitEmpty()).doFinally(s -> r.finish());
            if (r.body.tryEmitValue(read).isFailure()) {
                return Mono.error(new HttpError(409, "StdinInUse", "stdin " + id + " already has an upload"));
            }
            // the wait is bounded until the command starts reading; then the upload lasts as long as it reads
            return r.started
                    .asMono()
                    .timeout(timeout, Mono.defer(() -> {
                        r.finish();
                        return Mono.error(new HttpError(
                                408, "StdinTimeout", "no command read stdin " + id + " within " + timeout));
                    }))
                    .then(r.done.asMono());
        });
    }

    /**
     * Abandons a command's relay (its command ended or never started).
     *
     * @param id the stdin id
     */
    public void abandon(String id) {
        Relay r = relays.get(id);
        if (r != null) {
            r.finish();
        }
    }
}
