package dev.sandbox.implementation.session;

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
import dev.sandbox.SandboxSession;
import dev.sandbox.implementation.exec.BatchedExec;
import dev.sandbox.implementation.exec.ExecRunner;
import dev.sandbox.implementation.exec.Framed;
import dev.sandbox.implementation.exec.LineRun;
import dev.sandbox.implementation.process.SpawnedProcess;
import java.time.Duration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * The process half of a session whose commands run through an {@link ExecRunner}: exec, run, background processes
 * and PTYs, each after the session's check, and the server's shortcuts of {@link BatchedExec}. A provider supplies the check and how to spawn a process; the rest of
 * {@link SandboxSession} (files, lifetime, status, close) stays its own.
 */
public abstract class RunnerSession implements SandboxSession, BatchedExec {
    private final String sessionId;
    private final ExecRunner runner;

    /**
     * Creates the handle's process half.
     *
     * @param sessionId the session
     * @param runner the session's runner, shared by every handle of the session
     */
    protected RunnerSession(String sessionId, ExecRunner runner) {
        this.sessionId = sessionId;
        this.runner = runner;
    }

    @Override
    public final String id() {
        return sessionId;
    }

    /** Fails when this handle or its session has ended; otherwise records activity. */
    protected abstract void check();

    /**
     * What a call that starts a process must wait for first: a paused session's resume, or its refusal. The default
     * is {@code null}, nothing (a provider whose agent connection waits for the resume itself).
     *
     * @return {@code null}, or what to wait for
     */
    protected Mono<Void> beforeCall() {
        return null;
    }

    /**
     * Starts a process for validated options; runs on a thread that may block briefly.
     *
     * @param options what to run
     * @return the process
     */
    protected abstract SpawnedProcess spawn(ExecOptions options);

    /**
     * Starts a process on a terminal for validated options; runs on a thread that may block briefly.
     *
     * @param options what to run, with the terminal's input as stdin
     * @param cols terminal columns
     * @param rows terminal rows
     * @return the process
     */
    protected abstract SpawnedProcess spawnPty(ExecOptions options, int cols, int rows);

    @Override
    public final Flux<ExecEvent> exec(ExecOptions options) {
        return Flux.defer(() -> {
            Mono<Void> first = beforeCall();
            if (first != null) {
                return first.thenMany(exec(options));
            }
            check();
            return runner.exec(options, this::spawn);
        });
    }

    @Override
    public final Mono<ExecResult> run(ExecOptions options) {
        return Mono.defer(() -> {
            Mono<Void> first = beforeCall();
            if (first != null) {
                return first.then(run(options));
            }
            check();
            return runner.run(options, this::spawn);
        });
    }

    @Override
    public final <R extends LineRun> Flux<Framed<R>> execBatches(ExecOptions options, LineRun.Factory<R> runs) {
        return Flux.defer(() -> {
            Mono<Void> first = beforeCall();
            if (first != null) {
                return first.thenMany(execBatches(options, runs));
            }
            check();
            return runner.execBatches(options, this::spawn, runs);
        });
    }

    @Override
    public final Mono<ExecResult> run(ExecOptions options, Scheduler deliver) {
        return Mono.defer(() -> {
            Mono<Void> first = beforeCall();
            if (first != null) {
                return first.then(run(options, deliver));
            }
            check();
            return runner.run(options, this::spawn, deliver);
        });
    }

    /** {@inheritDoc} A provider whose sandbox holds its processes (not this JVM) overrides this. */
    @Override
    public Mono<BackgroundProcess> start(ExecOptions options, BackgroundOptions background) {
        return Mono.defer(() -> {
            Mono<Void> first = beforeCall();
            if (first != null) {
                return first.then(start(options, background));
            }
            check();
            return runner.start(options, background, this::spawn, this::check);
        });
    }

    /** {@inheritDoc} A provider whose sandbox holds its processes (not this JVM) overrides this. */
    @Override
    public Flux<ProcessInfo> processes() {
        return Flux.defer(() -> {
            check();
            return Flux.fromIterable(runner.processes());
        });
    }

    /** {@inheritDoc} A provider whose sandbox holds its processes (not this JVM) overrides this. */
    @Override
    public Mono<BackgroundProcess> process(String processId) {
        return Mono.fromCallable(() -> {
            check();
            BackgroundProcess p = runner.process(processId, this::check);
            if (p == null) {
                throw new ProcessNotFoundException(sessionId, processId);
            }
            return p;
        });
    }

    /** {@inheritDoc} A provider whose sandbox holds its processes (not this JVM) overrides this. */
    @Override
    public Mono<PtySession> pty(PtyOptions options) {
        return Mono.defer(() -> {
            Mono<Void> first = beforeCall();
            if (first != null) {
                return first.then(pty(options));
            }
            check();
            return runner.startPty(options, this::spawnPty, this::check);
        });
    }

    /** {@inheritDoc} A provider whose sandbox holds its processes (not this JVM) overrides this. */
    @Override
    public Flux<ProcessInfo> ptys() {
        return Flux.defer(() -> {
            check();
            return Flux.fromIterable(runner.ptys());
        });
    }

    /** {@inheritDoc} A provider whose sandbox holds its processes (not this JVM) overrides this. */
    @Override
    public Mono<PtySession> attachPty(String ptyId) {
        return Mono.fromCallable(() -> {
            check();
            PtySession pty = runner.pty(ptyId);
            if (pty == null) {
                throw new ProcessNotFoundException(sessionId, ptyId);
            }
            return pty;
        });
    }

    /**
     * Checks a lifetime or idle timeout argument.
     *
     * @param field the argument's name
     * @param d its value
     * @throws InvalidArgumentException unless it is positive
     */
    protected static void positive(String field, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new InvalidArgumentException(field, field + " must be positive, got " + d);
        }
    }
}
