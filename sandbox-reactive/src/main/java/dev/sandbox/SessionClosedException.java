package dev.sandbox;

/**
 * A session handle was used after {@link SandboxSession#close()} or {@link SandboxSession#destroy()}.
 *
 * <pre>{@code
 * session.close().then(session.run(ExecOptions.of("true"))) // fails with SessionClosedException
 * }</pre>
 */
public class SessionClosedException extends SandboxException {
    private static final long serialVersionUID = 1L;

    private final String sessionId;

    /**
     * Creates the exception.
     *
     * @param sessionId the session whose handle is closed
     */
    public SessionClosedException(String sessionId) {
        super("session " + sessionId + " is closed");
        this.sessionId = sessionId;
    }

    /**
     * The id of the closed session.
     *
     * @return the session id
     */
    public String sessionId() {
        return sessionId;
    }
}
