package dev.sandbox.implementation.remote;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.implementation.wire.WireJson;
import dev.sandbox.remote.ServerBusyException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * Sends a request again when the server's connection guard answered {@code 503} with type {@code ServerBusy} and a
 * {@code Retry-After} header. The guard gives that answer only to a request it never handed to a route (held in its
 * queue until the queue timed out, or refused when the queue was full), so nothing of the request was done and even
 * a creating request ({@code POST /v1/sessions}, a run) is safe to send again; any other 503 (a server shutting
 * down, a proxy's page) is not retried here.
 *
 * <p>Bounded: at most {@code maxAttempts} requests in all and no wait that would end past {@code maxTotal} after the
 * first was sent; each wait is the answer's {@code Retry-After}, capped at {@link #MAX_WAIT}, plus up to half of it
 * again at random so that clients turned away together do not come back together. The waits are timers on {@link
 * Schedulers#parallel()}: no thread is blocked. When it gives up, the call fails with a {@link ServerBusyException}
 * saying how often and how long it tried.
 */
public final class BusyRetry extends Retry {
    /** The longest single wait, whatever {@code Retry-After} says. */
    public static final Duration MAX_WAIT = Duration.ofSeconds(10);
    /** The error type of the guard's answer. */
    public static final String TYPE = "ServerBusy";

    private final String baseUrl;
    private final int maxAttempts;
    private final Duration maxTotal;

    /**
     * Creates the policy.
     *
     * @param baseUrl the server's address, for messages
     * @param maxAttempts the most requests in all, the first included (1: no retry)
     * @param maxTotal the longest time from the first request to the last retry's start
     */
    public BusyRetry(String baseUrl, int maxAttempts, Duration maxTotal) {
        this.baseUrl = baseUrl;
        this.maxAttempts = maxAttempts;
        this.maxTotal = maxTotal;
    }

    /**
     * The error for an answer: a {@link ServerBusyException} for the guard's 503, else the SDK error it stands for.
     *
     * @param status the HTTP status
     * @param retryAfter the {@code Retry-After} header, or {@code null}
     * @param body the answer's body
     * @return the error
     */
    public static RuntimeException answer(int status, String retryAfter, byte[] body) {
        if (status == 503 && retryAfter != null) {
            JsonNode n = WireJson.lenient(body);
            JsonNode error = n == null ? null : n.get("error");
            if (error != null && TYPE.equals(error.path("type").asText())) {
                Duration wait = parseRetryAfter(retryAfter);
                return new ServerBusyException(
                        "the sandbox server is at its connection limit: "
                                + error.path("message").asText(""),
                        wait,
                        1,
                        null);
            }
        }
        return RemoteErrors.answer(status, body);
    }

    /** Seconds as the header gives them; a date or garbage counts as one second. Capped at {@link #MAX_WAIT}. */
    static Duration parseRetryAfter(String header) {
        try {
            long s = Long.parseLong(header.trim());
            return s < 0 ? Duration.ZERO : Duration.ofSeconds(Math.min(s, MAX_WAIT.toSeconds()));
        } catch (NumberFormatException e) {
            return Duration.ofSeconds(1);
        }
    }

    @Override
    public Publisher<?> generateCompanion(Flux<RetrySignal> signals) {
        return Flux.defer(() -> {
            long started = System.nanoTime();
            return signals.concatMap(signal -> {
                Throwable failure = signal.failure();
                if (!(failure instanceof ServerBusyException busy)) {
                    return Mono.error(failure);
                }
                int answered = (int) Math.min(Integer.MAX_VALUE, signal.totalRetries() + 1);
                long base = Math.min(busy.retryAfter().toNanos(), MAX_WAIT.toNanos());
                long wait = base + (base > 0 ? ThreadLocalRandom.current().nextLong(base / 2 + 1) : 0);
                long elapsed = System.nanoTime() - started;
                if (answered >= maxAttempts || elapsed + wait > maxTotal.toNanos()) {
                    return Mono.error(new ServerBusyException(
                            "the sandbox server at " + baseUrl + " was at its connection limit for " + answered
                                    + " attempts over " + elapsed / 1_000_000 + " ms; nothing of the request was"
                                    + " done, and it may be sent again later",
                            busy.retryAfter(),
                            answered,
                            busy));
                }
                return Mono.delay(Duration.ofNanos(wait), Schedulers.parallel());
            });
        });
    }
}
