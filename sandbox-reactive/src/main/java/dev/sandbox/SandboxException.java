package dev.sandbox;

import org.jspecify.annotations.Nullable;

/**
 * Root of every error the SDK signals. All SDK errors are unchecked and arrive in the error channel of the
 * {@code Mono}/{@code Flux} that failed; the blocking facade rethrows them unchanged.
 *
 * <pre>{@code
 * session.run(ExecOptions.of("ls", "/nope"))
 *     .onErrorResume(SessionClosedException.class, e -> Mono.empty())
 *     .subscribe();
 * }</pre>
 *
 * <p>Subtypes: {@link SessionClosedException} (and its {@link SessionTerminatedException}), {@link
 * SessionNotFoundException}, {@link SandboxTimeoutException}, {@link InvalidArgumentException}, {@link
 * UnsupportedFeatureException} and {@link BackendException}.
 *
 * <p>Every error says whether retrying can help ({@link #isRetryable()}), so a caller can retry only what may pass:
 *
 * <pre>{@code
 * provider.create(options)
 *     .retryWhen(Retry.backoff(3, Duration.ofMillis(200))
 *         .filter(e -> e instanceof SandboxException s && s.isRetryable()));
 * }</pre>
 */
public class SandboxException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final boolean retryable;

    /**
     * Creates an exception with a message.
     *
     * @param message what went wrong, naming the session, field or value involved
     */
    public SandboxException(String message) {
        super(message);
        this.retryable = false;
    }

    /**
     * Creates an exception with a message and a cause.
     *
     * @param message what went wrong
     * @param cause the underlying failure, or {@code null}
     */
    public SandboxException(String message, @Nullable Throwable cause) {
        super(message, cause);
        this.retryable = false;
    }

    /**
     * Creates an exception that says whether retrying can help; for providers that know (see {@link
     * #isRetryable()}).
     *
     * @param message what went wrong
     * @param cause the underlying failure, or {@code null}
     * @param retryable whether the same call, unchanged, may succeed if made again
     */
    public SandboxException(String message, @Nullable Throwable cause, boolean retryable) {
        super(message, cause);
        this.retryable = retryable;
    }

    /**
     * Whether making the same call again, unchanged, may succeed: the failure came from a passing condition, not
     * from the request, the session or the sandbox's contents. A retry may still fail the same way; back off between
     * tries and give up after a few.
     *
     * <p>Retryable: the Docker daemon or the sandbox server could not be reached, did not answer in time, or answered
     * 429, 502, 503 or 504 (the server's own JSON error says so explicitly); a connection dropped (and could not be
     * resumed); the host was short of processes, memory or file descriptors when a command was to start ({@code
     * EAGAIN}, {@code ENOMEM}, {@code EMFILE}); a container was paused (for a snapshot); a wait the SDK bounds ran
     * out ({@link SandboxTimeoutException}).
     *
     * <p>Not retryable: a bad argument ({@link InvalidArgumentException}), a session, process or image that does not
     * exist ({@link SessionNotFoundException}, {@link ProcessNotFoundException}), a closed handle, session or provider
     * ({@link SessionClosedException}, {@link SessionTerminatedException}, {@link ProviderClosedException}), a file
     * error such as {@code NOT_FOUND} or {@code PERMISSION_DENIED} ({@link FileOperationException}), a program that
     * cannot be started ({@link ProcessLaunchException} for a missing or non-executable program), an unsupported
     * feature, and any failure whose cause the SDK does not know. A command that starts and then fails is not an
     * error at all: it ends with its exit code.
     *
     * <p>The flag says nothing about what the failed call did: a {@code create} whose answer was lost may have made
     * a session, and a retried write replaces the file again. Retry what is safe to repeat, or look first (list
     * sessions by a label you set).
     *
     * @return {@code true} when a retry of the same call may succeed
     */
    public boolean isRetryable() {
        return retryable;
    }
}
