package dev.sandbox.remote;

import dev.sandbox.BackendException;
import java.time.Duration;

/**
 * The sandbox server was at its connection limit and answered {@code 503 ServerBusy} with {@code Retry-After}, as many
 * times as the remote provider retries such an answer ({@link RemoteSandboxProvider.Builder#busyRetry}). Such an
 * answer comes from the server's connection guard before the request reaches any route, so nothing of the request
 * was done: the same call may be made again, whatever it does. Always {@linkplain #isRetryable() retryable}.
 *
 * <pre>{@code
 * remote.create(options)
 *     .retryWhen(Retry.backoff(3, Duration.ofSeconds(5)).filter(ServerBusyException.class::isInstance))
 * }</pre>
 */
public final class ServerBusyException extends BackendException {
    private static final long serialVersionUID = 1L;

    private final transient Duration retryAfter;
    private final int attempts;

    /**
     * Creates the exception.
     *
     * @param message what happened, naming the server
     * @param retryAfter the wait the server's last answer asked for
     * @param attempts how many times the request was sent and answered busy
     * @param cause the original error, or {@code null}
     */
    public ServerBusyException(String message, Duration retryAfter, int attempts, Throwable cause) {
        super(message, cause, true);
        this.retryAfter = retryAfter;
        this.attempts = attempts;
    }

    /**
     * The wait the server's last answer asked for ({@code Retry-After}) before the request is sent again.
     *
     * @return the wait
     */
    public Duration retryAfter() {
        return retryAfter;
    }

    /**
     * How many times the request was sent and answered busy.
     *
     * @return at least 1
     */
    public int attempts() {
        return attempts;
    }
}
