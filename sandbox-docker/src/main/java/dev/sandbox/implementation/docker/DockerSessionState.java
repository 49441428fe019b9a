package dev.sandbox.implementation.docker;

import dev.sandbox.SessionEndReason;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.implementation.agentsession.AgentSessionState;
import dev.sandbox.implementation.agentsession.SessionAgent;
import java.time.Instant;
import java.util.Map;
import java.util.function.Consumer;
import reactor.core.publisher.Mono;

/**
 * One Docker session as this provider knows it, shared by every handle the provider gave out for it: the
 * agent-backed state every such provider keeps, with what is Docker's own (its container, the reaper that records
 * its deadline, what the daemon's events said).
 */
final class DockerSessionState extends AgentSessionState {
    final String containerId;
    /** How the session's agent is reached. */
    final DockerAgentHost host;
    /** Where the session's deadline is recorded outside its container, or {@code null} without a reaper. */
    final DockerReaper reaper;
    /** When this state was made, after its container started; states made after a sweep's listing are kept. */
    final long registeredNanos = System.nanoTime();

    /** The daemon, for pause and unpause. */
    private final DockerControl control;

    /** Whether the daemon reported an out-of-memory kill in the container. */
    private volatile boolean oomEventSeen;

    DockerSessionState(
            String id,
            String containerId,
            Map<String, String> labels,
            Instant createdAt,
            Map<String, String> secrets,
            SessionAgent agent,
            DockerAgentHost host,
            DockerReaper reaper,
            DockerControl control,
            Consumer<SessionEndReason> end) {
        super(DockerSandboxProvider.NAME, id, labels, createdAt, secrets, agent, end);
        this.control = control;
        this.containerId = containerId;
        this.host = host;
        this.reaper = reaper;
    }

    @Override
    protected boolean pausable() {
        return true;
    }

    /**
     * Tells the container's agent to stop its idle clock (it would otherwise count the frozen time and end the
     * session the moment it is thawed), then pauses the container with the cgroup freezer ({@code docker pause}).
     * The reaper still removes the paused container at its deadline or when its lease runs out: the daemon kills a
     * paused container on a forced removal.
     */
    @Override
    protected Mono<Void> freeze() {
        return DockerTimers.agentIdle(this, true)
                .then(DockerSessions.blocking(() -> {
                    DockerFreezer.set(control, id, containerId, true);
                    return Boolean.TRUE;
                }))
                .then();
    }

    /** Unpauses the container, then gives its agent its idle timeout again (counted from now). */
    @Override
    protected Mono<Void> thaw() {
        return DockerSessions.blocking(() -> {
                    DockerFreezer.set(control, id, containerId, false);
                    return Boolean.TRUE;
                })
                .then(DockerTimers.agentIdle(this, false));
    }

    void oomEvent() {
        oomEventSeen = true;
    }

    boolean oomEventSeen() {
        return oomEventSeen;
    }
}
