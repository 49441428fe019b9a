package dev.sandbox.implementation.exec;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.ProcessInfo;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.implementation.process.RawEvent;
import dev.sandbox.implementation.process.SpawnedProcess;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The provider-independent part of running a command: spawning off the caller's thread, line framing with
 * backpressure, output collection with a cap, timeouts, and killing on cancel. A provider supplies only a function
 * that starts a process for validated options.
 */
public final class ExecRunner {
    /**
     * Chunks (up to 64 KiB each) handed from the I/O thread to the delivery thread ahead of demand, per command: the
     * most a command can hold in memory besides one partial line per stream.
     */
    private static final int CHUNK_PREFETCH = 4;

    private final Scheduler spawnScheduler;
    private final Scheduler deliverScheduler;
    /** Ended background processes kept for listing and late reads; the oldest ended ones go first. */
    private static final int MAX_ENDED_BACKGROUND = 256;

    private final Set<Execution> running = ConcurrentHashMap.newKeySet();
    private final Map<String, RingBackgroundProcess> background = new LinkedHashMap<>(); // guarded by itself
    private final AtomicLong nextProcessId = new AtomicLong();
    private final Map<String, PtyProcess> ptys = new LinkedHashMap<>(); // guarded by itself

    /**
     * Creates a runner.
     *
     * @param spawnScheduler where process creation (a short blocking call) runs
     * @param deliverScheduler where events are delivered to subscribers
     */
    public ExecRunner(Scheduler spawnScheduler, Scheduler deliverScheduler) {
        this.spawnScheduler = spawnScheduler;
        this.deliverScheduler = deliverScheduler;
    }

    /** A runner on Reactor's bounded-elastic (spawning) and parallel (delivery) schedulers. */
    public ExecRunner() {
        this(Schedulers.boundedElastic(), Schedulers.parallel());
    }

    /**
     * How many commands are running now.
     *
     * @return the count
     */
    public int runningCount() {
        int count = running.size();
        synchronized (background) {
            for (RingBackgroundProcess p : background.values()) {
                if (p.running()) {
                    count++;
                }
            }
        }
        return count;
    }

    /**
     * Kills every running command, in the foreground and the background, because the session ends: a command's
     * stream and a background process's or PTY's {@code exit()} then fail with {@code why}'s error rather than
     * reporting the kill as an exit code.
     *
     * @param why makes the error (one per process)
     */
    public void killAll(java.util.function.Supplier<? extends RuntimeException> why) {
        running.forEach(e -> e.sessionEnded(why.get()));
        List<RingBackgroundProcess> all;
        synchronized (background) {
            all = new ArrayList<>(background.values());
        }
        all.forEach(p -> p.terminate(why.get()));
        List<PtyProcess> terminals;
        synchronized (ptys) {
            terminals = new ArrayList<>(ptys.values());
        }
        terminals.forEach(p -> p.terminate(why.get()));
    }

    /**
     * Starts a background process.
     *
     * @param options validated by this call
     * @param backgroundOptions validated by this call
     * @param spawner starts the process (runs on the spawn scheduler)
     * @param guard the session's check, run before each operation on the process
     * @return the process, once spawned
     */
    public Mono<BackgroundProcess> start(
            ExecOptions options,
            BackgroundOptions backgroundOptions,
            Function<ExecOptions, SpawnedProcess> spawner,
            RingBackgroundProcess.Guard guard) {
        return Mono.defer(() -> {
            options.validate();
            backgroundOptions.validate();
            Execution execution = new Execution(options, Schedulers.parallel());
            execution.requested(Long.MAX_VALUE);
            String id = "p-" + nextProcessId.incrementAndGet();
            RingBackgroundProcess process =
                    new RingBackgroundProcess(id, options, backgroundOptions, execution, deliverScheduler, guard);
            return Mono.fromCallable(() -> {
                        SpawnedProcess p = spawner.apply(process.spawnOptions());
                        execution.started(p);
                        process.started(p);
                        register(process);
                        return (BackgroundProcess) process;
                    })
                    .subscribeOn(spawnScheduler)
                    .doOnCancel(execution::kill);
        });
    }

    /**
     * Starts a command on a pseudo-terminal.
     *
     * @param options the command and terminal
     * @param spawner starts the process on a terminal of the given size (runs on the spawn scheduler)
     * @param guard the session's check
     * @return the terminal session, once spawned
     */
    public Mono<PtySession> startPty(PtyOptions options, PtySpawner spawner, RingBackgroundProcess.Guard guard) {
        return Mono.defer(() -> {
            ExecOptions exec = options.toExecOptions();
            Execution execution = new Execution(exec, Schedulers.parallel());
            execution.requested(Long.MAX_VALUE);
            String id = "pty-" + nextProcessId.incrementAndGet();
            BackgroundOptions ring = BackgroundOptions.defaults().withRingBytes(options.replayBytes());
            RingBackgroundProcess process =
                    new RingBackgroundProcess(id, exec, ring, execution, deliverScheduler, guard);
            return Mono.fromCallable(() -> {
                        SpawnedProcess p = spawner.spawn(process.spawnOptions(), options.cols(), options.rows());
                        execution.started(p);
                        process.started(p);
                        PtyProcess pty = new PtyProcess(process, p);
                        synchronized (ptys) {
                            ptys.put(id, pty);
                            ptys.values().removeIf(old -> !old.running() && old != pty && ptys.size() > 64);
                        }
                        return (PtySession) pty;
                    })
                    .subscribeOn(spawnScheduler)
                    .doOnCancel(execution::kill);
        });
    }

    /** Starts a process on a terminal. */
    @FunctionalInterface
    public interface PtySpawner {
        /**
         * Starts the process.
         *
         * @param options the command, with the terminal's input as stdin
         * @param cols terminal columns
         * @param rows terminal rows
         * @return the process
         */
        SpawnedProcess spawn(ExecOptions options, int cols, int rows);
    }

    /**
     * A PTY by id.
     *
     * @param id the id
     * @return the PTY, or {@code null}
     */
    public PtySession pty(String id) {
        synchronized (ptys) {
            return ptys.get(id);
        }
    }

    /**
     * The PTYs, running and recently ended, oldest first.
     *
     * @return summaries
     */
    public List<ProcessInfo> ptys() {
        synchronized (ptys) {
            return ptys.values().stream().map(PtyProcess::info).toList();
        }
    }

    /**
     * PTYs running now.
     *
     * @return the count
     */
    public int ptysRunning() {
        synchronized (ptys) {
            return (int) ptys.values().stream().filter(PtyProcess::running).count();
        }
    }

    /**
     * Clients reading a PTY's output now.
     *
     * @return the count
     */
    public int ptysAttached() {
        synchronized (ptys) {
            return ptys.values().stream().mapToInt(PtyProcess::attached).sum();
        }
    }

    private void register(RingBackgroundProcess process) {
        synchronized (background) {
            background.put(process.id(), process);
            int ended = 0;
            for (RingBackgroundProcess p : background.values()) {
                if (!p.running()) {
                    ended++;
                }
            }
            Iterator<RingBackgroundProcess> it = background.values().iterator();
            while (ended > MAX_ENDED_BACKGROUND && it.hasNext()) {
                if (!it.next().running()) {
                    it.remove();
                    ended--;
                }
            }
        }
    }

    /**
     * The background processes, oldest first.
     *
     * @return summaries
     */
    public List<ProcessInfo> processes() {
        synchronized (background) {
            return background.values().stream().map(RingBackgroundProcess::info).toList();
        }
    }

    /**
     * A background process by id.
     *
     * @param id the id
     * @return the process, or {@code null}
     */
    public BackgroundProcess process(String id) {
        synchronized (background) {
            return background.get(id);
        }
    }

    /**
     * A background process by id, as seen through the handle asking: operations on it are checked by that handle,
     * not by the one that started it.
     *
     * @param id the id
     * @param guard the asking handle's check
     * @return the process, or {@code null}
     */
    public BackgroundProcess process(String id, RingBackgroundProcess.Guard guard) {
        RingBackgroundProcess p;
        synchronized (background) {
            p = background.get(id);
        }
        return p == null ? null : p.through(guard);
    }

    /**
     * Streams a command's lines and exit.
     *
     * @param options validated by this call; a problem is an error signal
     * @param spawner starts the process for the options (runs on the spawn scheduler)
     * @return the events
     */
    public Flux<ExecEvent> exec(ExecOptions options, Function<ExecOptions, SpawnedProcess> spawner) {
        return framed(options, spawner, framer -> framer::frame);
    }

    /**
     * Streams a command's output as runs of whole lines (made by {@code runs}) and line events (the events {@link
     * #exec} yields, with runs of whole lines batched), then its exit: for a server that sends lines in batches. Same
     * backpressure (one item per request), timeouts and cancel as {@link #exec}.
     *
     * @param options validated by this call; a problem is an error signal
     * @param spawner starts the process for the options (runs on the spawn scheduler)
     * @param runs makes the runs of lines
     * @param <R> the kind of run
     * @return the items
     */
    public <R extends LineRun> Flux<Framed<R>> execBatches(
            ExecOptions options, Function<ExecOptions, SpawnedProcess> spawner, LineRun.Factory<R> runs) {
        return framed(options, spawner, framer -> event -> framer.frameBatches(event, runs));
    }

    /** Spawns, reads and frames a command's output; {@code framing} picks what one chunk of output becomes. */
    private <T> Flux<T> framed(
            ExecOptions options,
            Function<ExecOptions, SpawnedProcess> spawner,
            Function<LineFramer, Function<RawEvent, Iterable<T>>> framing) {
        return Flux.defer(() -> {
            options.validate();
            Execution execution = track(new Execution(options, Schedulers.parallel()));
            LineFramer framer = new LineFramer(options, execution::exit, 0, 0);
            Function<RawEvent, Iterable<T>> frame = framing.apply(framer);
            Flux<RawEvent> raw = spawn(options, spawner, execution).flatMapMany(SpawnedProcess::events);
            if (options.idleTimeout().isEmpty()) {
                // nothing reads the output and demand accounting but the idle timer: skip its cost per line
                return QuietFlush.apply(raw.publishOn(deliverScheduler, CHUNK_PREFETCH), options, deliverScheduler)
                        .concatMapIterable(frame, 1)
                        .doFinally(signal -> end(execution, signal));
            }
            return QuietFlush.apply(
                            raw.doOnNext(e -> execution.sawOutput()).publishOn(deliverScheduler, CHUNK_PREFETCH),
                            options,
                            deliverScheduler)
                    .concatMapIterable(frame, 1)
                    .doOnRequest(execution::requested)
                    .doOnNext(e -> execution.emitted())
                    .doFinally(signal -> end(execution, signal));
        });
    }

    /**
     * Runs a command to its end and collects its output, keeping at most {@link ExecOptions#maxOutputBytes()} of
     * each stream.
     *
     * @param options validated by this call; a problem is an error signal
     * @param spawner starts the process for the options (runs on the spawn scheduler)
     * @return the result
     */
    public Mono<ExecResult> run(ExecOptions options, Function<ExecOptions, SpawnedProcess> spawner) {
        return run(options, spawner, deliverScheduler);
    }

    /**
     * {@link #run(ExecOptions, Function)} with the result delivered on the given scheduler (a server answering on
     * its connection's event loop saves a thread hop).
     *
     * @param options validated by this call; a problem is an error signal
     * @param spawner starts the process for the options (runs on the spawn scheduler)
     * @param deliverScheduler where the result is delivered
     * @return the result
     */
    public Mono<ExecResult> run(
            ExecOptions options, Function<ExecOptions, SpawnedProcess> spawner, Scheduler deliverScheduler) {
        return Mono.defer(() -> {
            options.validate();
            Execution execution = track(new Execution(options, Schedulers.parallel()));
            execution.requested(Long.MAX_VALUE);
            OutputCollector collector = new OutputCollector(options.maxOutputBytes(), execution::exit);
            return spawn(options, spawner, execution)
                    .flatMapMany(SpawnedProcess::events)
                    .doOnNext(e -> {
                        execution.sawOutput();
                        collector.accept(e);
                    })
                    .then(Mono.fromSupplier(() -> collector.result(options.charset())))
                    .publishOn(deliverScheduler)
                    .doFinally(signal -> end(execution, signal));
        });
    }

    private Mono<SpawnedProcess> spawn(
            ExecOptions options, Function<ExecOptions, SpawnedProcess> spawner, Execution execution) {
        return Mono.fromCallable(() -> {
                    SpawnedProcess p = spawner.apply(options);
                    execution.started(p);
                    return p;
                })
                .subscribeOn(spawnScheduler);
    }

    private Execution track(Execution execution) {
        running.add(execution);
        return execution;
    }

    private void end(Execution execution, SignalType signal) {
        running.remove(execution);
        if (signal == SignalType.ON_COMPLETE) {
            execution.finished();
        } else {
            execution.kill(); // cancelled or failed: nothing it started may outlive it
        }
    }
}
