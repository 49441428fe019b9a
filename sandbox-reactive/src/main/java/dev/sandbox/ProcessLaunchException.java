package dev.sandbox;

import org.jspecify.annotations.Nullable;

/**
 * A command could not be started: the program was not found or not executable, or the working directory does not
 * exist. A command that starts and then fails is not an error; it ends with its exit code.
 *
 * <p>Those causes are lasting ({@link #isRetryable()} is {@code false}); a start that failed because the host was
 * short of processes, memory or file descriptors ({@code EAGAIN}, {@code ENOMEM}, {@code EMFILE}, {@code ENFILE})
 * is retryable.
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
    public ProcessLaunchException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

    /**
     * Creates the exception, saying whether retrying can help.
     *
     * @param message what could not be started and why
     * @param cause the original error, or {@code null}
     * @param retryable whether the start failed for a passing shortage rather than for the program or directory
     */
    public ProcessLaunchException(String message, @Nullable Throwable cause, boolean retryable) {
        super(message, cause, retryable);
    }
}
