package dev.sandbox.implementation.docker;

import dev.sandbox.SessionStats;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.implementation.agentsession.AgentSession;
import dev.sandbox.implementation.stats.StatsStream;
import java.time.Duration;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A handle to a Docker session: the agent-backed session, with the daemon's container behind it. */
final class DockerSession extends AgentSession {
    private final DockerSessions sessions;
    private final DockerSessionState state;

    DockerSession(DockerSessions sessions, DockerSessionState state) {
        super(state);
        this.sessions = sessions;
        this.state = state;
    }

    @Override
    protected String providerName() {
        return DockerSandboxProvider.NAME;
    }

    @Override
    protected String processLauncher() {
        return state.host.path();
    }

    @Override
    protected boolean providerClosed() {
        return sessions.isClosed();
    }

    @Override
    protected Mono<Void> setTimers(Duration lifetime, Duration idleTimeout) {
        return DockerTimers.setTimers(state, lifetime, idleTimeout);
    }

    @Override
    protected String[] reservedLabelPrefixes() {
        return new String[] {DockerControl.INTERNAL_PREFIX};
    }

    @Override
    protected Mono<Void> recordLabels(Map<String, String> labels) {
        return sessions.recordLabels(state, labels);
    }

    /** Samples the container's cgroup through the daemon's stats API; see {@link DockerStats}. */
    @Override
    public Flux<SessionStats> stats(Duration interval) {
        return StatsStream.of(interval, () -> {
            checkOpen(); // not activity: sampling leaves the idle clock alone
            return sessions.readStats(state).onErrorMap(this::endedOr);
        });
    }

    /** A reading that failed because the session ended says so; any other failure stays as it is. */
    private Throwable endedOr(Throwable e) {
        try {
            checkOpen();
            return e;
        } catch (RuntimeException ended) {
            return ended;
        }
    }

    @Override
    protected Mono<Void> destroySession() {
        return sessions.destroy(state);
    }

    @Override
    public String toString() {
        return "DockerSession{" + state.id + ", container=" + state.containerId + "}";
    }
}
