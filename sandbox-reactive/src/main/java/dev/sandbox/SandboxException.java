package dev.sandbox;

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
 */
public class SandboxException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception with a message.
     *
     * @param message what went wrong, naming the session, field or value involved
     */
    public SandboxException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a message and a cause.
     *
     * @param message what went wrong
     * @param cause the underlying failure
     */
    public SandboxException(String message, Throwable cause) {
        super(message, cause);
    }
}
