package dev.sandbox;

import java.time.Instant;

/**
 * A session's health and activity, as returned by {@link SandboxSession#ping()}. The fields follow Polyaxon's
 * sandbox ping.
 *
 * <pre>{@code
 * SessionStatus status = session.ping().block(Duration.ofSeconds(5));
 * System.out.println(status.status() + " " + status.execsRunning() + " running");
 * }</pre>
 *
 * @param sessionId the session
 * @param status {@code "running"} while the session is usable, {@code "closed"} after close or destroy
 * @param version the SDK version serving the session
 * @param uptimeMs milliseconds since the session was created
 * @param lastActivity when the session last started a command or another operation
 * @param execsRunning commands currently running
 * @param ptysRunning PTY sessions currently running
 * @param ptysAttached PTY sessions with a client attached
 * @param provider the provider's name, such as {@code local}
 * @param processLauncher how processes are spawned and read, such as {@code native-epoll} or {@code jdk-process}
 */
public record SessionStatus(
        String sessionId,
        String status,
        String version,
        long uptimeMs,
        Instant lastActivity,
        int execsRunning,
        int ptysRunning,
        int ptysAttached,
        String provider,
        String processLauncher) {}
