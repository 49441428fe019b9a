package dev.sandbox;

/**
 * The sandbox behind a session ended while the handle was still open: its container was stopped or removed from
 * outside, or it reached a lifetime or idle timeout that its sandbox enforced on its own while no client was watching.
 * Its {@link #reason()} is {@link SessionEndReason#TERMINATED}. Unlike the other closed reasons, nothing this SDK did
 * ended it; unlike {@link
 * SessionNotFoundException} (nothing with that id was found), the session existed when the handle was made. An
 * operation that was running when the sandbox ended fails with this error rather than hanging.
 *
 * <pre>{@code
 * session.run(ExecOptions.of("make"))
 *     .onErrorResume(SessionTerminatedException.class, e -> provider.create(options)
 *         .flatMap(fresh -> fresh.run(ExecOptions.of("make"))));
 * }</pre>
 */
public class SessionTerminatedException extends SessionClosedException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param sessionId the session whose sandbox ended
     * @param reason what was found, such as {@code its container no longer exists}
     */
    public SessionTerminatedException(String sessionId, String reason) {
        super(sessionId, SessionEndReason.TERMINATED, "session " + sessionId + " has terminated: " + reason);
    }
}
