package dev.sandbox.implementation.exec;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.implementation.process.RawEvent;
import dev.sandbox.implementation.process.SpawnedProcess;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.scheduler.Scheduler;

/**
 * The life of one command: its process once spawned, its timers, and how it ended. Kill requests before the spawn
 * finishes are remembered and applied as soon as the process exists, so a cancel never leaves a process behind.
 */
public final class Execution {
    private final ExecOptions options;
    private final Scheduler timers;
    private final long startNanos = System.nanoTime();
    private final Disposable.Composite scheduled = Disposables.composite();
    private final AtomicLong outstanding = new AtomicLong();

    private SpawnedProcess process; // guarded by this
    private boolean stopped; // guarded by this
    private volatile boolean timedOut;
    private volatile boolean idleTimedOut;
    private volatile long lastOutputNanos = startNanos;
    private volatile Runnable onKill = () -> {};
    /** Set when the session's end killed the process: its exit is then this error, not a signal's exit code. */
    private volatile RuntimeException sessionEnd;

    Execution(ExecOptions options, Scheduler timers) {
        this.options = options;
        this.timers = timers;
    }

    /** Records the spawned process and starts the timers; kills it at once if the execution was stopped meanwhile. */
    void started(SpawnedProcess p) {
        synchronized (this) {
            if (!stopped) {
                process = p;
                options.timeout().ifPresent(t -> schedule(this::timeout, t));
                options.idleTimeout().ifPresent(t -> schedule(this::checkIdle, t));
                return;
            }
        }
        p.kill();
    }

    /** Sets what to do once the execution has been killed (a background process stops throttling). */
    void onKill(Runnable action) {
        this.onKill = action;
    }

    /** Kills the process (if any, or as soon as it exists) and cancels the timers. */
    public void kill() {
        SpawnedProcess p;
        synchronized (this) {
            stopped = true;
            p = process;
        }
        scheduled.dispose();
        if (p != null) {
            p.kill();
        }
        // after the kill: what runs here (a throttled reader draining freely) must not let the process run on
        onKill.run();
    }

    /**
     * Kills the process because its session ends: from now on its exit is reported as {@code why}, so a caller can
     * tell the session's end from a {@code kill -9} of its own.
     *
     * @param why the error its exit becomes
     */
    void sessionEnded(RuntimeException why) {
        sessionEnd = why;
        kill();
    }

    /**
     * The error the session's end made of this execution's exit, if it ended so.
     *
     * @return the error, or {@code null}
     */
    RuntimeException sessionEnd() {
        return sessionEnd;
    }

    /** Ends the execution after its stream ended normally: timers stop, the process is already gone. */
    void finished() {
        synchronized (this) {
            stopped = true;
        }
        scheduled.dispose();
    }

    void sawOutput() {
        lastOutputNanos = System.nanoTime();
    }

    void requested(long n) {
        long prev;
        long next;
        do {
            prev = outstanding.get();
            next = prev + n < 0 ? Long.MAX_VALUE : prev + n;
        } while (!outstanding.compareAndSet(prev, next));
        lastOutputNanos = System.nanoTime();
    }

    void emitted() {
        outstanding.decrementAndGet();
    }

    private void schedule(Runnable task, Duration delay) {
        scheduled.add(timers.schedule(task, Math.max(1, delay.toMillis()), TimeUnit.MILLISECONDS));
    }

    private void timeout() {
        timedOut = true;
        kill();
    }

    private void checkIdle() {
        Duration idle = options.idleTimeout().orElseThrow();
        long now = System.nanoTime();
        long quietFor = now - lastOutputNanos;
        if (outstanding.get() > 0 && quietFor >= idle.toNanos()) {
            idleTimedOut = true;
            kill();
            return;
        }
        // a subscriber that asks for nothing is pausing the command, which is not the command being idle
        long wait = outstanding.get() > 0 ? idle.toNanos() - quietFor : idle.toNanos();
        synchronized (this) {
            if (!stopped) {
                schedule(this::checkIdle, Duration.ofNanos(Math.max(wait, 1_000_000)));
            }
        }
    }

    Duration elapsed() {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    /**
     * How the command ended, from its raw exit and the timers; throws the session's end when that killed it.
     *
     * @param exited the raw exit
     * @return the exit event
     */
    ExecEvent.Exit exit(RawEvent.Exited exited) {
        RuntimeException ended = sessionEnd;
        if (ended != null) {
            throw ended;
        }
        return plainExit(exited);
    }

    /** How the command ended, from its raw exit and the timers, whatever killed it. */
    ExecEvent.Exit plainExit(RawEvent.Exited exited) {
        Duration took = elapsed();
        if (timedOut) {
            return new ExecEvent.Exit(124, ExecEvent.Termination.TIMED_OUT, took);
        }
        if (idleTimedOut) {
            return new ExecEvent.Exit(124, ExecEvent.Termination.IDLE_TIMED_OUT, took);
        }
        return LineFraming.exit(exited, took, false);
    }
}
