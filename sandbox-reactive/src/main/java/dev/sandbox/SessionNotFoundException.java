package dev.sandbox;

/**
 * No session with the given id exists (any more) at the provider.
 *
 * <pre>{@code
 * provider.attach("missing").onErrorResume(SessionNotFoundException.class, e -> provider.create(options));
 * }</pre>
 */
public class SessionNotFoundException extends SandboxException {
    private static final long serialVersionUID = 1L;

    private final String sessionId;

    /**
     * Creates the exception.
     *
     * @param sessionId the id that was looked up
     */
    public SessionNotFoundException(String sessionId) {
        super("session not found: " + sessionId);
        this.sessionId = sessionId;
    }

    /**
     * The id that was looked up.
     *
     * @return the session id
     */
    public String sessionId() {
        return sessionId;
    }
}
