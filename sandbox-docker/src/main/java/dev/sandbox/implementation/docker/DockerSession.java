package dev.sandbox.implementation.docker;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionStatus;
import dev.sandbox.SessionTerminatedException;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.implementation.Version;
import dev.sandbox.implementation.process.SpawnedProcess;
import dev.sandbox.implementation.session.RunnerSession;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Mono;

/** A handle to a Docker session. */
final class DockerSession extends RunnerSession {
    /** Read once, when the first handle is made (off the event loops): it reads a resource from the jar. */
    private static final String VERSION = Version.get();

    private final DockerSessions sessions;
    private final DockerSessionState state;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final SandboxFiles files;

    DockerSession(DockerSessions sessions, DockerSessionState state) {
        super(state.id, state.runner);
        this.sessions = sessions;
        this.state = state;
        this.files = new AgentFiles(state.agent, this::check);
    }

    @Override
    public Map<String, String> labels() {
        return state.labels;
    }

    /** Fails when this handle or its session has ended; otherwise records activity. */
    @Override
    protected void check() {
        checkOpen();
        state.touch();
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new SessionClosedException(state.id, SessionEndReason.HANDLE_CLOSED);
        }
        SessionEndReason ended = state.endReason();
        String terminated = state.terminationCause();
        if (ended == SessionEndReason.TERMINATED && terminated != null) {
            throw new SessionTerminatedException(state.id, terminated);
        }
        if (ended != null) {
            throw new SessionClosedException(state.id, ended);
        }
        if (sessions.isClosed()) {
            throw new SessionClosedException(state.id, SessionEndReason.PROVIDER_CLOSED);
        }
    }

    @Override
    protected SpawnedProcess spawn(ExecOptions options) {
        return state.agent.spawn(options, state.secrets, 0, 0);
    }

    @Override
    protected SpawnedProcess spawnPty(ExecOptions options, int cols, int rows) {
        return state.agent.spawn(options, state.secrets, cols, rows);
    }

    @Override
    public SandboxFiles files() {
        return files;
    }

    @Override
    public Mono<Void> setLifetime(Duration fromNow) {
        return Mono.defer(() -> {
            check();
            positive("lifetime", fromNow);
            return DockerTimers.setTimers(state, fromNow, null);
        });
    }

    @Override
    public Mono<Void> setIdleTimeout(Duration idleTimeout) {
        return Mono.defer(() -> {
            check();
            positive("idleTimeout", idleTimeout);
            return DockerTimers.setTimers(state, null, idleTimeout);
        });
    }

    @Override
    public Mono<SessionStatus> ping() {
        return Mono.defer(() -> {
            checkOpen();
            // a round trip to the agent; a container that ended is named by one inspect
            return state.agent
                    .untilTerminated(state.agent.connection().flatMap(c -> c.ping()))
                    .then(Mono.fromSupplier(this::status));
        });
    }

    private SessionStatus status() {
        return new SessionStatus(
                state.id,
                "running",
                VERSION,
                Math.max(0, Duration.between(state.createdAt, Instant.now()).toMillis()),
                state.timers.lastActivity(),
                state.runner.runningCount(),
                state.runner.ptysRunning(),
                state.runner.ptysAttached(),
                DockerSandboxProvider.NAME,
                DockerSandboxProvider.PROCESS_LAUNCHER,
                state.timers.expiresAt(),
                state.timers.idleTimeout(),
                null);
    }

    @Override
    public Mono<Void> close() {
        return Mono.fromRunnable(() -> closed.set(true));
    }

    @Override
    public Mono<Void> destroy() {
        return Mono.defer(() -> {
            if (closed.get() || state.destroyed()) {
                closed.set(true);
                return Mono.empty(); // idempotent: this handle or its session already ended
            }
            return sessions.destroy(state).doOnSuccess(x -> closed.set(true));
        });
    }

    @Override
    public String toString() {
        return "DockerSession{" + state.id + ", container=" + state.containerId + "}";
    }
}
