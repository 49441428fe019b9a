package dev.sandbox;

import java.time.Duration;

/**
 * An operation did not finish within its timeout. A command that runs past its own {@link ExecOptions#timeout()}
 * is not an error: it ends with exit code 124 (see {@link ExecEvent.Exit#timedOut()}). This exception is for waits
 * the SDK itself bounds, such as a blocking call's default timeout.
 *
 * <pre>{@code
 * try {
 *     client.process().run(ExecOptions.of("sleep", "60"));
 * } catch (SandboxTimeoutException e) {
 *     log.warn("gave up after {}", e.timeout());
 * }
 * }</pre>
 */
public class SandboxTimeoutException extends SandboxException {
    private static final long serialVersionUID = 1L;

    private final Duration timeout;

    /**
     * Creates the exception.
     *
     * @param operation what timed out
     * @param timeout the limit that was exceeded
     */
    public SandboxTimeoutException(String operation, Duration timeout) {
        super(operation + " did not complete within " + timeout);
        this.timeout = timeout;
    }

    /**
     * Always {@code true}: the operation may finish in time when it is tried again (a slow daemon or server, a busy
     * host). An operation that always takes longer than its limit fails the same way again; raise the limit instead.
     *
     * @return {@code true}
     */
    @Override
    public boolean isRetryable() {
        return true;
    }

    /**
     * The limit that was exceeded.
     *
     * @return the timeout
     */
    public Duration timeout() {
        return timeout;
    }
}
