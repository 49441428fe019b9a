package dev.sandbox;

import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A session's health and activity, as returned by {@link SandboxSession#ping()}. The first fields follow Polyaxon's
 * sandbox ping; the rest say how the session will end.
 *
 * <pre>{@code
 * SessionStatus status = session.ping().block(Duration.ofSeconds(5));
 * System.out.println(status.status() + ", " + status.execsRunning() + " running, ends at " + status.expiresAt());
 * }</pre>
 *
 * @param sessionId the session
 * @param status {@code "running"} while the session is usable, {@code "paused"} while it is {@linkplain
 *     SandboxSession#pause() paused}
 * @param version the SDK version serving the session
 * @param uptimeMs milliseconds since the session was created
 * @param lastActivity when the session last started a command or did another operation (ping excluded)
 * @param execsRunning commands currently running, in the foreground or the background
 * @param ptysRunning PTY sessions currently running
 * @param ptysAttached PTY sessions with a client attached
 * @param provider the provider's name, such as {@code local}
 * @param processLauncher how processes are spawned and read, such as {@code native-epoll} or {@code jdk-process}
 * @param expiresAt when the session's lifetime ends, or {@code null} when it is unlimited
 * @param idleTimeout the session's idle timeout, or {@code null} when it has none
 * @param endReason why the session ended, or {@code null} while it runs
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
        String processLauncher,
        @Nullable Instant expiresAt,
        @Nullable Duration idleTimeout,
        @Nullable SessionEndReason endReason) {}
