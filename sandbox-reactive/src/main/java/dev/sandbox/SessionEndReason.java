package dev.sandbox;

/**
 * Why a session (or a handle to it) ended; reported by {@link SessionStatus#endReason()} and {@link
 * SessionClosedException#reason()}.
 *
 * <pre>{@code
 * session.exec(ExecOptions.of("true")).onErrorResume(SessionClosedException.class, e ->
 *         e.reason() == SessionEndReason.LIFETIME_EXPIRED ? recreate() : Flux.error(e));
 * }</pre>
 */
public enum SessionEndReason {
    /** This handle was closed with {@link SandboxSession#close()}; the session itself may still run. */
    HANDLE_CLOSED,
    /** The session was destroyed with {@link SandboxSession#destroy()}. */
    DESTROYED,
    /** The session reached the end of its lifetime. */
    LIFETIME_EXPIRED,
    /** The session saw no activity for its idle timeout. */
    IDLE_TIMEOUT,
    /** The provider that held the session was closed. */
    PROVIDER_CLOSED,
    /** The sandbox was stopped or removed from outside the SDK. */
    TERMINATED
}
