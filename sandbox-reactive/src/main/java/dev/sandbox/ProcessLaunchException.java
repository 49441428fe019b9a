package dev.sandbox;

/**
 * A command could not be started: the program was not found or not executable, or the working directory does not
 * exist. A command that starts and then fails is not an error; it ends with its exit code.
 *
 * <pre>{@code
 * session.run(ExecOptions.of("no-such-program"))
 *     .onErrorResume(ProcessLaunchException.class, e -> Mono.just(notInstalled(e.getMessage())));
 * }</pre>
 */
public class ProcessLaunchException extends BackendException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what could not be started and why
     * @param cause the original error, or {@code null}
     */
    public ProcessLaunchException(String message, Throwable cause) {
        super(message, cause);
    }
}
