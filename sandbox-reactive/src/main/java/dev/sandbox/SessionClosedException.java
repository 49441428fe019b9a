package dev.sandbox;

/**
 * A session handle was used after the handle was closed or the session ended; {@link #reason()} says which.
 *
 * <pre>{@code
 * session.close().then(session.run(ExecOptions.of("true"))) // fails with SessionClosedException
 * }</pre>
 */
public class SessionClosedException extends SandboxException {
    private static final long serialVersionUID = 1L;

    private final String sessionId;
    private final SessionEndReason reason;

    /**
     * Creates the exception for a handle closed by its owner.
     *
     * @param sessionId the session whose handle is closed
     */
    public SessionClosedException(String sessionId) {
        this(sessionId, SessionEndReason.HANDLE_CLOSED);
    }

    /**
     * Creates the exception.
     *
     * @param sessionId the session
     * @param reason why the session or handle ended
     */
    public SessionClosedException(String sessionId, SessionEndReason reason) {
        super("session " + sessionId + " is closed (" + describe(reason) + ")");
        this.sessionId = sessionId;
        this.reason = reason;
    }

    /**
     * Creates the exception with a message of its own, for subtypes that know more.
     *
     * @param sessionId the session
     * @param reason why the session or handle ended
     * @param message the message
     */
    protected SessionClosedException(String sessionId, SessionEndReason reason, String message) {
        super(message);
        this.sessionId = sessionId;
        this.reason = reason;
    }

    private static String describe(SessionEndReason reason) {
        return switch (reason) {
            case HANDLE_CLOSED -> "this handle was closed";
            case DESTROYED -> "the session was destroyed";
            case LIFETIME_EXPIRED -> "its lifetime expired";
            case IDLE_TIMEOUT -> "it was idle for its idle timeout";
            case PROVIDER_CLOSED -> "its provider was closed";
            case TERMINATED -> "it was stopped from outside";
        };
    }

    /**
     * The id of the closed session.
     *
     * @return the session id
     */
    public String sessionId() {
        return sessionId;
    }

    /**
     * Why the session or handle ended.
     *
     * @return the reason
     */
    public SessionEndReason reason() {
        return reason;
    }
}
