package dev.sandbox;

/**
 * The sandbox behind a session ended while the handle was still open: its container was stopped or removed from
 * outside, it reached its lifetime or idle timeout, or it ran out of memory as a whole. Unlike {@link
 * SessionClosedException} (this handle was closed by its owner), the handle was never closed; unlike {@link
 * SessionNotFoundException} (nothing with that id was found), the session existed when the handle was made. An
 * operation that was running when the sandbox ended fails with this error rather than hanging.
 *
 * <pre>{@code
 * session.run(ExecOptions.of("make"))
 *     .onErrorResume(SessionTerminatedException.class, e -> provider.create(options)
 *         .flatMap(fresh -> fresh.run(ExecOptions.of("make"))));
 * }</pre>
 */
public class SessionTerminatedException extends SandboxException {
    private static final long serialVersionUID = 1L;

    private final String sessionId;

    /**
     * Creates the exception.
     *
     * @param sessionId the session whose sandbox ended
     * @param reason what was found, such as {@code its container no longer exists}
     */
    public SessionTerminatedException(String sessionId, String reason) {
        super("session " + sessionId + " has terminated: " + reason);
        this.sessionId = sessionId;
    }

    /**
     * The id of the session whose sandbox ended.
     *
     * @return the session id
     */
    public String sessionId() {
        return sessionId;
    }
}
