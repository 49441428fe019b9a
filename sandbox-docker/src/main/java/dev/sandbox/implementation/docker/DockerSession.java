package dev.sandbox.implementation.docker;

import dev.sandbox.BackendException;
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

    /** How long a stats stream the daemon ended waits for the session to say it ended (and why). */
    private static final Duration END_WAIT = Duration.ofSeconds(5);

    /**
     * Samples the container's cgroup through the daemon's stats stream (see {@link DockerStats}): the daemon's first
     * reading at once, then the newest reading once per interval (the daemon reads once a second, so a shorter
     * interval gives a sample a second). Not activity: the sandbox's agent is not asked.
     */
    @Override
    public Flux<SessionStats> stats(Duration interval) {
        return Flux.defer(() -> {
            StatsStream.checkInterval(interval);
            checkOpen();
            StatsStream.Checker checker = new StatsStream.Checker();
            Flux<SessionStats> readings = sessions.statsStream(state)
                    .map(checker::check)
                    .concatWith(Mono.defer(this::streamEnded))
                    .onErrorMap(this::endedOr);
            return readings.publish(
                            shared -> Flux.merge(shared.take(1), shared.skip(1).sample(interval)), 1)
                    .onBackpressureLatest();
        });
    }

    /**
     * The daemon ended the stream: the container stopped. Waits, bounded, for the session to learn why (the daemon's
     * events reach it about then) and fails with that; otherwise says the daemon ended it.
     */
    private Mono<SessionStats> streamEnded() {
        return Flux.interval(Duration.ZERO, Duration.ofMillis(100))
                .take(END_WAIT.toMillis() / 100)
                .concatMap(tick -> {
                    checkOpen();
                    return Mono.<SessionStats>empty();
                })
                .then(Mono.error(() -> new BackendException(
                        "the daemon ended the stats stream of session " + state.id + ": its container no longer runs",
                        null)));
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
