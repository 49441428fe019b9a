package dev.sandbox;

/**
 * An operation was asked of a {@linkplain SandboxSession#pause() paused} session created without {@linkplain
 * SessionOptions#withAutoResume(boolean) auto-resume}: {@link SandboxSession#resume()} it first.
 *
 * <pre>{@code
 * session.run(ExecOptions.shell("date"))
 *     .onErrorResume(SessionPausedException.class, e -> session.resume().then(session.run(ExecOptions.shell("date"))));
 * }</pre>
 */
public class SessionPausedException extends SandboxStateException {
    private static final long serialVersionUID = 1L;

    /** The session. */
    private final String sessionId;

    /**
     * Creates the exception.
     *
     * @param sessionId the paused session
     */
    public SessionPausedException(String sessionId) {
        super("session " + sessionId + " is paused and was created without auto-resume: resume it first");
        this.sessionId = sessionId;
    }

    /**
     * The paused session.
     *
     * @return its id
     */
    public String sessionId() {
        return sessionId;
    }
}
