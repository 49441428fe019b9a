package dev.sandbox;

/**
 * An operation is not possible in the current state of a process or session, for example collecting a background
 * process's full output a second time, or running a command in a {@linkplain SandboxSession#pause() paused} session
 * created without {@linkplain SessionOptions#withAutoResume(boolean) auto-resume}.
 *
 * <pre>{@code
 * process.collect().then(process.collect()) // fails with SandboxStateException: already collected
 * }</pre>
 */
public class SandboxStateException extends SandboxException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is not possible and why
     */
    public SandboxStateException(String message) {
        super(message);
    }
}
