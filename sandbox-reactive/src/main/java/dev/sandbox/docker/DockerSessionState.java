package dev.sandbox.docker;

import dev.sandbox.SessionInfo;
import dev.sandbox.implementation.docker.ContainerExecutor;
import dev.sandbox.implementation.exec.ExecRunner;
import java.time.Instant;
import java.util.Map;

/** One Docker session as this provider knows it, shared by every handle the provider gave out for it. */
final class DockerSessionState {
    final String id;
    final String containerId;
    final Map<String, String> labels;
    final Instant createdAt;
    /** Known only to the provider instance that created or restored the session; empty otherwise. */
    final Map<String, String> secrets;

    final ContainerExecutor executor;
    final ExecRunner runner = new ExecRunner();
    /** When this state was made, after its container started; states made after a sweep's listing are kept. */
    final long registeredNanos = System.nanoTime();

    private volatile Instant lastActivity;
    private volatile boolean destroyed;
    private volatile boolean destroying;

    DockerSessionState(
            String id,
            String containerId,
            Map<String, String> labels,
            Instant createdAt,
            Map<String, String> secrets,
            ContainerExecutor executor) {
        this.id = id;
        this.containerId = containerId;
        this.labels = Map.copyOf(labels);
        this.createdAt = createdAt;
        this.secrets = Map.copyOf(secrets);
        this.executor = executor;
        this.lastActivity = createdAt;
    }

    void touch() {
        lastActivity = Instant.now();
    }

    Instant lastActivity() {
        return lastActivity;
    }

    boolean destroyed() {
        return destroyed;
    }

    /** Destroyed, or a destroy is under way: no new handle may be given out. */
    boolean ending() {
        return destroyed || destroying;
    }

    void destroying(boolean on) {
        destroying = on;
    }

    void markDestroyed() {
        destroyed = true;
        runner.killAll();
    }

    SessionInfo info() {
        return new SessionInfo(id, DockerSandboxProvider.NAME, labels, createdAt);
    }
}
