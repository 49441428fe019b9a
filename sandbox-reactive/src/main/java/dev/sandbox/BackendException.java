package dev.sandbox;

/**
 * The system behind a provider failed: a process could not be started, a daemon answered with an error, a
 * connection broke. The message says which operation failed; the cause carries the original error.
 *
 * <pre>{@code
 * session.run(ExecOptions.of("no-such-program"))
 *     .onErrorResume(BackendException.class, e -> Mono.just(fallback));
 * }</pre>
 */
public class BackendException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed
     * @param cause the original error, or {@code null}
     */
    public BackendException(String message, Throwable cause) {
        super(message, cause);
    }
}
