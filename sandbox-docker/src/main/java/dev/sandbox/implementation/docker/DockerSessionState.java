package dev.sandbox.implementation.docker;

import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.implementation.exec.ExecRunner;
import dev.sandbox.implementation.session.SessionTimers;
import java.time.Instant;
import java.util.Map;
import java.util.function.Consumer;

/** One Docker session as this provider knows it, shared by every handle the provider gave out for it. */
final class DockerSessionState {
    final String id;
    final String containerId;
    final Map<String, String> labels;
    final Instant createdAt;
    /** Known only to the provider instance that created or restored the session; empty otherwise. */
    final Map<String, String> secrets;

    /** The way into the container: its agent. */
    final ContainerAgent agent;
    /** Where the session's deadline is recorded outside its container, or {@code null} without a reaper. */
    final DockerReaper reaper;

    final ExecRunner runner = new ExecRunner();
    /** Background processes and PTYs held by the agent that this provider has handles to. */
    final AgentProcesses processes = new AgentProcesses();
    /** When this state was made, after its container started; states made after a sweep's listing are kept. */
    final long registeredNanos = System.nanoTime();

    /** Lifetime and idle timeout as this client enforces them; the container's agent is the backstop. */
    final SessionTimers timers;

    private volatile SessionEndReason endReason;
    private volatile boolean destroying;
    /** Why the container ended on its own or from outside, once the daemon said so; {@code null} otherwise. */
    private volatile String terminationCause;

    DockerSessionState(
            String id,
            String containerId,
            Map<String, String> labels,
            Instant createdAt,
            Map<String, String> secrets,
            ContainerAgent agent,
            DockerReaper reaper,
            Consumer<SessionEndReason> end) {
        this.id = id;
        this.containerId = containerId;
        this.labels = Map.copyOf(labels);
        this.createdAt = createdAt;
        this.secrets = Map.copyOf(secrets);
        this.agent = agent;
        this.reaper = reaper;
        // activity as this provider knows it without a round trip: its running commands and the agent-held
        // processes and PTYs it has handles to (ones started by another provider instance count there)
        this.timers = new SessionTimers(
                id, () -> runner.runningCount() + processes.running(false) + processes.running(true), end);
    }

    void touch() {
        timers.touch();
    }

    boolean destroyed() {
        return endReason != null;
    }

    /**
     * Why the session ended.
     *
     * @return the reason, or {@code null} while it runs
     */
    SessionEndReason endReason() {
        return endReason;
    }

    /** Destroyed, or a destroy is under way: no new handle may be given out. */
    boolean ending() {
        return endReason != null || destroying;
    }

    void destroying(boolean on) {
        destroying = on;
    }

    void markEnded(SessionEndReason reason) {
        if (endReason == null) {
            endReason = reason;
        }
        timers.stop();
        runner.killAll(() -> endError(reason));
        // the container goes with the session: so do its processes
        processes.unwatchAll(() -> endError(reason));
        agent.ended(endError(endReason));
    }

    /**
     * The error of operations cut by the session's end: {@link dev.sandbox.SessionTerminatedException} naming the
     * cause when the container ended on its own, else a {@link dev.sandbox.SessionClosedException} with the reason.
     *
     * @param reason why the session ended
     * @return the error
     */
    RuntimeException endError(SessionEndReason reason) {
        String cause = terminationCause;
        return reason == SessionEndReason.TERMINATED && cause != null
                ? new dev.sandbox.SessionTerminatedException(id, cause)
                : new dev.sandbox.SessionClosedException(id, reason);
    }

    /**
     * Ends the session because its container ended without this SDK asking (the daemon's {@code die} or {@code
     * destroy} event): its running streams fail with {@link dev.sandbox.SessionTerminatedException} naming the cause,
     * and so does every later call on its handles. Nothing happens when the session already ended or a destroy is
     * under way (this SDK removing the container causes the same events).
     *
     * @param cause why, such as {@code its container is exited: it ran out of memory (...)}
     * @return whether this call ended the session
     */
    boolean terminate(String cause) {
        synchronized (this) {
            if (ending()) {
                return false;
            }
            terminationCause = cause;
            endReason = SessionEndReason.TERMINATED;
        }
        agent.terminated(cause);
        markEnded(SessionEndReason.TERMINATED);
        return true;
    }

    /**
     * Why the container ended, when {@link #terminate} ended the session.
     *
     * @return the cause, or {@code null}
     */
    String terminationCause() {
        return terminationCause;
    }

    SessionInfo info() {
        return new SessionInfo(id, DockerSandboxProvider.NAME, labels, createdAt);
    }
}
