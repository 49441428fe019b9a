package dev.sandbox.implementation.agentsession;

import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxStateException;
import dev.sandbox.implementation.agent.AgentAttachEvent;
import dev.sandbox.implementation.agent.AgentConnection;
import dev.sandbox.implementation.agent.AgentErrnoException;
import dev.sandbox.implementation.agent.AgentProcInfo;
import dev.sandbox.implementation.exec.LineFraming;
import dev.sandbox.implementation.process.RawEvent;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * What this provider knows about one background process (or PTY) that the session's agent holds, shared by every
 * handle this provider gives out for it ({@link AgentBackgroundProcess}, {@link AgentPty}). The output lives in the
 * agent's rings, not here: every read is an {@code ATTACH}, so another provider instance reads the same bytes.
 *
 * <p>The exit is learnt by a watcher: an {@code ATTACH} from an offset no output reaches, which receives nothing but
 * the {@code EXIT} (and never holds a throttled ring, since it has no bytes to lack). Stdin writes of this provider
 * go out one at a time, in the order they were subscribed.
 */
final class AgentHeldProcess {
    /** An offset no output reaches: an {@code ATTACH} from it gets only the exit. */
    private static final long FAR = Long.MAX_VALUE;
    /** Stdin writes and closes that may wait at once (the public contract). */
    private static final int MAX_PENDING_WRITES = 16;
    /** The largest {@code INPUT} payload. */
    private static final int MAX_INPUT = 64 * 1024;
    /** Chunks handed to the delivery thread ahead of demand, per reader. */
    private static final int PREFETCH = 4;
    /** How often a lost watcher is made again before its exit fails. */
    private static final int WATCH_RETRIES = 8;
    /** The longest pause between tries of a write the process's full stdin pipe refused. */
    private static final Duration MAX_STDIN_BACKOFF = Duration.ofMillis(200);

    final SessionAgent agent;
    final String sessionId;
    final String id;
    final long pid;
    final List<String> argv;
    final Instant startedAt;
    final boolean terminal;
    /** Charset, line length and output cap of reads through this provider. */
    final ExecOptions options;
    /** Whether this provider feeds stdin from the publisher the process was started with. */
    final boolean stdinFromPublisher;

    final AtomicBoolean collected = new AtomicBoolean();
    /** Readers of a PTY's output through this provider now. */
    final AtomicInteger attached = new AtomicInteger();

    private final Sinks.One<ExecEvent.Exit> exitSink = Sinks.one();
    private volatile ExecEvent.Exit exit;
    private volatile boolean timedOut;
    private volatile Disposable watcher;
    private volatile Disposable timer;

    private final ArrayDeque<Pending> pending = new ArrayDeque<>(); // guarded by itself
    private boolean writing; // guarded by pending

    AgentHeldProcess(
            SessionAgent agent,
            String sessionId,
            String id,
            long pid,
            List<String> argv,
            Instant startedAt,
            boolean terminal,
            ExecOptions options,
            boolean stdinFromPublisher) {
        this.agent = agent;
        this.sessionId = sessionId;
        this.id = id;
        this.pid = pid;
        this.argv = List.copyOf(argv);
        this.startedAt = startedAt;
        this.terminal = terminal;
        this.options = options;
        this.stdinFromPublisher = stdinFromPublisher;
    }

    /** A process found in the agent's listing (started by any provider instance). */
    static AgentHeldProcess found(SessionAgent agent, String sessionId, AgentProcInfo info) {
        ExecOptions options = ExecOptions.of(info.argv().isEmpty() ? List.of("?") : info.argv());
        return new AgentHeldProcess(
                agent,
                sessionId,
                info.id(),
                info.pid(),
                info.argv(),
                Instant.ofEpochMilli(info.startedMs()),
                info.kind() == 1,
                options,
                false);
    }

    /** Starts watching for the exit; with a timeout (a process this provider started), kills it then. */
    void watch(Duration timeout) {
        if (timeout != null) {
            timer = Schedulers.parallel()
                    .schedule(
                            () -> {
                                if (exit == null) {
                                    timedOut = true;
                                    agent.connection()
                                            .flatMap(c -> c.processes().signal(id, 9))
                                            .subscribe(x -> {}, e -> {});
                                }
                            },
                            Math.max(1, timeout.toMillis()),
                            TimeUnit.MILLISECONDS);
        }
        watcher = agent.untilTerminated(
                        agent.connection().flatMapMany(c -> c.processes().attach(id, FAR, FAR, true)),
                        e -> e instanceof AgentAttachEvent.Exit)
                .ofType(AgentAttachEvent.Exit.class)
                .next()
                .switchIfEmpty(Mono.error(
                        () -> new BackendException("the exit watch of process " + id + " ended early", null, true)))
                .retryWhen(Retry.backoff(WATCH_RETRIES, Duration.ofMillis(100))
                        .maxBackoff(Duration.ofSeconds(2))
                        .filter(e -> e instanceof SandboxException s && s.isRetryable())
                        .onRetryExhaustedThrow((spec, signal) -> signal.failure()))
                .subscribe(
                        x -> {
                            ExecEvent.Exit e = toExit(x);
                            exit = e;
                            Disposable t = timer;
                            if (t != null) {
                                t.dispose();
                            }
                            exitSink.tryEmitValue(e);
                        },
                        exitSink::tryEmitError);
    }

    /**
     * Stops watching (this provider closes, or the session ended); the process itself goes on in the agent, or ends
     * with its sandbox. Whoever still waits for the exit through this provider gets {@code why}.
     *
     * @param why the error for waiters of the exit
     */
    void unwatch(RuntimeException why) {
        exitSink.tryEmitError(why);
        Disposable w = watcher;
        if (w != null) {
            w.dispose();
        }
        Disposable t = timer;
        if (t != null) {
            t.dispose();
        }
    }

    boolean running() {
        return exit == null;
    }

    ExecEvent.Exit exitNow() {
        return exit;
    }

    Mono<ExecEvent.Exit> exit() {
        return exitSink.asMono().publishOn(Schedulers.parallel());
    }

    private ExecEvent.Exit toExit(AgentAttachEvent.Exit x) {
        Duration took = Duration.ofMillis(Math.max(0, x.endedMs() - startedAt.toEpochMilli()));
        return LineFraming.exit(new RawEvent.Exited(x.status(), x.signaled(), x.oomKilled()), took, timedOut);
    }

    ProcessInfo info() {
        ExecEvent.Exit e = exit;
        return new ProcessInfo(id, argv, pid, startedAt, e == null, e == null ? null : e.code());
    }

    /** A listing entry as the public type; the exit code as an exit event would give it. */
    static ProcessInfo info(AgentProcInfo p) {
        Integer code = p.running() ? null : p.signaled() ? 128 + p.status() : p.status();
        return new ProcessInfo(p.id(), p.argv(), p.pid(), Instant.ofEpochMilli(p.startedMs()), p.running(), code);
    }

    // ---------------------------------------------------------------- output

    static void checkOffset(String field, long offset) {
        if (offset < 0) {
            throw new InvalidArgumentException(field, field + " must not be negative, got " + offset);
        }
    }

    /**
     * The raw output from offsets, as the agent's rings hold it. A gap in the offsets (the ring dropped bytes this
     * reader had not had yet) ends it with {@link OffsetUnavailableException}, as a reader overtaken by its ring.
     *
     * @param exitOut receives the exit event before the raw exit is emitted
     */
    Flux<RawEvent> raw(long stdoutFrom, long stderrFrom, boolean follow, AtomicReference<ExecEvent.Exit> exitOut) {
        return Flux.defer(() -> {
            long[] next = {stdoutFrom, stderrFrom};
            return agent.untilTerminated(
                            agent.connection()
                                    .flatMapMany(c -> c.processes().attach(id, stdoutFrom, stderrFrom, follow)),
                            e -> e instanceof AgentAttachEvent.Exit)
                    .<RawEvent>handle((ev, sink) -> {
                        switch (ev) {
                            case AgentAttachEvent.Started s -> {}
                            case AgentAttachEvent.Output o -> {
                                int s = o.fd() == 1 ? RawEvent.STDOUT : RawEvent.STDERR;
                                if (o.offset() != next[s]) {
                                    sink.error(new OffsetUnavailableException(
                                            id,
                                            s == RawEvent.STDOUT
                                                    ? ExecEvent.StreamKind.STDOUT
                                                    : ExecEvent.StreamKind.STDERR,
                                            next[s],
                                            o.offset(),
                                            o.offset() + o.bytes().length));
                                    return;
                                }
                                next[s] += o.bytes().length;
                                sink.next(new RawEvent.Chunk(s, o.bytes()));
                            }
                            case AgentAttachEvent.Exit x -> {
                                ExecEvent.Exit known = exit;
                                exitOut.set(known != null ? known : toExit(x));
                                sink.next(new RawEvent.Exited(x.status(), x.signaled(), x.oomKilled()));
                            }
                        }
                    })
                    .publishOn(Schedulers.parallel(), PREFETCH);
        });
    }

    /** Line events from offsets, framed as {@code exec} frames them. */
    Flux<ExecEvent> lines(long stdoutFrom, long stderrFrom, boolean follow, Runnable guard) {
        return Flux.defer(() -> {
            guard.run();
            checkOffset("stdoutOffset", stdoutFrom);
            checkOffset("stderrOffset", stderrFrom);
            AtomicReference<ExecEvent.Exit> exitOut = new AtomicReference<>();
            return LineFraming.frame(
                    raw(stdoutFrom, stderrFrom, follow, exitOut), options, stdoutFrom, stderrFrom, e -> exitOut.get());
        });
    }

    // ---------------------------------------------------------------- control

    Mono<Void> signal(int signal, Runnable guard) {
        return Mono.defer(() -> {
            guard.run();
            if (signal < 1 || signal > 64) {
                throw new InvalidArgumentException("signal", "signal must be from 1 to 64, got " + signal);
            }
            if (exit != null) {
                return Mono.empty();
            }
            return agent.untilTerminated(
                    agent.connection().flatMap(c -> c.processes().signal(id, signal)));
        });
    }

    /** Sends bytes to stdin in pieces the agent takes, after the writes subscribed before. */
    Mono<Void> write(ByteBuffer bytes) {
        byte[] all = new byte[bytes.remaining()];
        bytes.duplicate().get(all);
        return enqueue(c -> Flux.range(0, (all.length + MAX_INPUT - 1) / MAX_INPUT)
                .concatMap(i -> {
                    int from = i * MAX_INPUT;
                    byte[] piece = java.util.Arrays.copyOfRange(all, from, Math.min(all.length, from + MAX_INPUT));
                    return input(c, piece);
                })
                .then());
    }

    /** Closes stdin after the writes subscribed before; closing a closed stdin does nothing. */
    Mono<Void> closeInput() {
        return enqueue(c -> c.processes()
                .closeInput(id)
                .onErrorResume(
                        e -> e instanceof AgentErrnoException a && a.code() == 32 /* EPIPE */, e -> Mono.empty()));
    }

    /** One piece: a full pipe ({@code EAGAIN}) is tried again after a pause, until the process reads or ends. */
    private Mono<Void> input(AgentConnection c, byte[] piece) {
        return c.processes()
                .input(id, piece)
                .retryWhen(Retry.backoff(Long.MAX_VALUE, Duration.ofMillis(2))
                        .maxBackoff(MAX_STDIN_BACKOFF)
                        .filter(e -> e instanceof AgentErrnoException a && a.code() == 11 /* EAGAIN */))
                .onErrorMap(
                        e -> e instanceof AgentErrnoException,
                        e -> new SandboxStateException("cannot write to the stdin of process " + id + ": "
                                + ((AgentErrnoException) e).agentMessage()));
    }

    private Mono<Void> enqueue(Function<AgentConnection, Mono<Void>> op) {
        return Mono.create(sink -> {
            Pending p = new Pending(op, sink);
            synchronized (pending) {
                if (pending.size() + (writing ? 1 : 0) >= MAX_PENDING_WRITES) {
                    sink.error(new SandboxStateException("more than " + MAX_PENDING_WRITES + " stdin writes of process "
                            + id + " are waiting; wait for one to complete"));
                    return;
                }
                pending.add(p);
            }
            sink.onCancel(() -> {
                p.cancelled = true;
                Disposable d = p.running;
                if (d != null) {
                    d.dispose();
                }
            });
            drain();
        });
    }

    private void drain() {
        Pending p;
        synchronized (pending) {
            if (writing) {
                return;
            }
            do {
                p = pending.poll();
            } while (p != null && p.cancelled);
            if (p == null) {
                return;
            }
            writing = true;
        }
        Pending current = p;
        // the turn is released before the caller hears of the end: a caller that writes again on completion
        // (flatMap with 16 in flight) finds the place free
        current.running = agent.untilTerminated(agent.connection().flatMap(current.op))
                .doOnCancel(() -> {
                    release();
                    drain();
                })
                .subscribe(
                        x -> {},
                        e -> {
                            release();
                            current.sink.error(e);
                            drain();
                        },
                        () -> {
                            release();
                            current.sink.success();
                            drain();
                        });
    }

    private void release() {
        synchronized (pending) {
            writing = false;
        }
    }

    /** A stdin operation waiting for its turn. */
    private static final class Pending {
        final Function<AgentConnection, Mono<Void>> op;
        final MonoSink<Void> sink;
        volatile boolean cancelled;
        volatile Disposable running;

        Pending(Function<AgentConnection, Mono<Void>> op, MonoSink<Void> sink) {
            this.op = op;
            this.sink = sink;
        }
    }
}
