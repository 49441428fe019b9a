package dev.sandbox.docker;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.ProcessNotFoundException;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionStatus;
import dev.sandbox.implementation.Version;
import dev.sandbox.implementation.process.SpawnedProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A handle to a Docker session. */
final class DockerSession implements SandboxSession {
    private final DockerSandboxProvider provider;
    private final DockerSessionState state;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final SandboxFiles files;

    DockerSession(DockerSandboxProvider provider, DockerSessionState state) {
        this.provider = provider;
        this.state = state;
        this.files = provider.files(state, this::check);
    }

    @Override
    public String id() {
        return state.id;
    }

    @Override
    public Map<String, String> labels() {
        return state.labels;
    }

    /** Fails when this handle or its session has ended; otherwise records activity. */
    private void check() {
        checkOpen();
        state.touch();
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new SessionClosedException(state.id, SessionEndReason.HANDLE_CLOSED);
        }
        SessionEndReason ended = state.endReason();
        if (ended != null) {
            throw new SessionClosedException(state.id, ended);
        }
        if (provider.isClosed()) {
            throw new SessionClosedException(state.id, SessionEndReason.PROVIDER_CLOSED);
        }
    }

    private SpawnedProcess spawn(ExecOptions options) {
        return state.executor.spawn(options, state.secrets);
    }

    @Override
    public Flux<ExecEvent> exec(ExecOptions options) {
        return Flux.defer(() -> {
            check();
            return state.runner.exec(options, this::spawn);
        });
    }

    @Override
    public Mono<ExecResult> run(ExecOptions options) {
        return Mono.defer(() -> {
            check();
            return state.runner.run(options, this::spawn);
        });
    }

    @Override
    public Mono<BackgroundProcess> start(ExecOptions options, BackgroundOptions background) {
        return Mono.defer(() -> {
            check();
            return state.runner.start(options, background, this::spawn, this::check);
        });
    }

    @Override
    public Flux<ProcessInfo> processes() {
        return Flux.defer(() -> {
            check();
            return Flux.fromIterable(state.runner.processes());
        });
    }

    @Override
    public Mono<BackgroundProcess> process(String processId) {
        return Mono.fromCallable(() -> {
            check();
            BackgroundProcess p = state.runner.process(processId, this::check);
            if (p == null) {
                throw new ProcessNotFoundException(state.id, processId);
            }
            return p;
        });
    }

    @Override
    public Mono<PtySession> pty(PtyOptions options) {
        return Mono.defer(() -> {
            check();
            return state.runner.startPty(
                    options, (o, cols, rows) -> state.executor.spawnPty(o, state.secrets, cols, rows), this::check);
        });
    }

    @Override
    public Mono<PtySession> attachPty(String ptyId) {
        return Mono.fromCallable(() -> {
            check();
            PtySession pty = state.runner.pty(ptyId);
            if (pty == null) {
                throw new ProcessNotFoundException(state.id, ptyId);
            }
            return pty;
        });
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
            return provider.setTimers(state, fromNow, null);
        });
    }

    @Override
    public Mono<Void> setIdleTimeout(Duration idleTimeout) {
        return Mono.defer(() -> {
            check();
            positive("idleTimeout", idleTimeout);
            return provider.setTimers(state, null, idleTimeout);
        });
    }

    private static void positive(String field, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new InvalidArgumentException(field, field + " must be positive, got " + d);
        }
    }

    @Override
    public Mono<SessionStatus> ping() {
        return Mono.defer(() -> {
            checkOpen();
            return state.executor.checkRunning().then(Mono.fromSupplier(this::status));
        });
    }

    private SessionStatus status() {
        return new SessionStatus(
                state.id,
                "running",
                Version.get(),
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
            return provider.destroy(state).doOnSuccess(x -> closed.set(true));
        });
    }

    @Override
    public String toString() {
        return "DockerSession{" + state.id + ", container=" + state.containerId + "}";
    }
}
