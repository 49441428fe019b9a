package dev.sandbox;

import org.jspecify.annotations.Nullable;

/**
 * The system behind a provider failed: a process could not be started, a daemon answered with an error, a
 * connection broke. The message says which operation failed; the cause carries the original error.
 *
 * <p>Backend failures are both passing (a daemon that is restarting, a server answering 503, a dropped connection)
 * and lasting (an image that cannot be pulled, a protocol error), so each one carries its own {@link #isRetryable()}:
 * the providers map the daemon's and the server's answers to it in one place each.
 *
 * <pre>{@code
 * session.run(ExecOptions.of("no-such-program"))
 *     .onErrorResume(BackendException.class, e -> Mono.just(fallback));
 * }</pre>
 */
public class BackendException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception for a failure that a retry would not help with.
     *
     * @param message what failed
     * @param cause the original error, or {@code null}
     */
    public BackendException(String message, @Nullable Throwable cause) {
        super(message, cause, false);
    }

    /**
     * Creates the exception, saying whether retrying can help.
     *
     * @param message what failed
     * @param cause the original error, or {@code null}
     * @param retryable whether the same call, unchanged, may succeed if made again (see {@link
     *     SandboxException#isRetryable()})
     */
    public BackendException(String message, @Nullable Throwable cause, boolean retryable) {
        super(message, cause, retryable);
    }
}
