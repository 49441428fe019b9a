package dev.sandbox.local;

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
import dev.sandbox.implementation.exec.BatchedExec;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** A handle to a local session. */
final class LocalSession implements SandboxSession, BatchedExec {
    private final LocalSessionState state;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final LocalFiles files;

    LocalSession(LocalSessionState state) {
        this.state = state;
        this.files = state.files(this::check);
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
    }

    @Override
    public Flux<ExecEvent> exec(ExecOptions options) {
        return Flux.defer(() -> {
            check();
            return state.runner.exec(options, state::spawn);
        });
    }

    @Override
    public Flux<Object> execBatches(ExecOptions options) {
        return Flux.defer(() -> {
            check();
            return state.runner.execBatches(options, state::spawn);
        });
    }

    @Override
    public Mono<ExecResult> run(ExecOptions options, Scheduler deliver) {
        return Mono.defer(() -> {
            check();
            return state.runner.run(options, state::spawn, deliver);
        });
    }

    @Override
    public Mono<ExecResult> run(ExecOptions options) {
        return Mono.defer(() -> {
            check();
            return state.runner.run(options, state::spawn);
        });
    }

    @Override
    public Mono<BackgroundProcess> start(ExecOptions options, BackgroundOptions background) {
        return Mono.defer(() -> {
            check();
            return state.runner.start(options, background, state::spawn, this::check);
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
            return state.runner.startPty(options, state::spawnPty, this::check);
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
        return Mono.fromRunnable(() -> {
            check();
            positive("lifetime", fromNow);
            state.setLifetime(fromNow);
        });
    }

    @Override
    public Mono<Void> setIdleTimeout(Duration idleTimeout) {
        return Mono.fromRunnable(() -> {
            check();
            positive("idleTimeout", idleTimeout);
            state.setIdleTimeout(idleTimeout);
        });
    }

    private static void positive(String field, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new InvalidArgumentException(field, field + " must be positive, got " + d);
        }
    }

    @Override
    public Mono<SessionStatus> ping() {
        return Mono.fromSupplier(() -> {
            checkOpen();
            return state.status();
        });
    }

    @Override
    public Mono<Void> close() {
        return Mono.fromRunnable(() -> closed.set(true));
    }

    @Override
    public Mono<Void> destroy() {
        return Mono.<Void>fromRunnable(() -> {
                    if (closed.get() || state.destroyed()) {
                        closed.set(true);
                        return; // idempotent
                    }
                    state.destroy(SessionEndReason.DESTROYED);
                    closed.set(true);
                })
                .subscribeOn(Schedulers.boundedElastic());
    }

    @Override
    public String toString() {
        return "LocalSession{" + state.id + ", workdir=" + state.workdir + "}";
    }
}
