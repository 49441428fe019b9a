package dev.sandbox.implementation.exec;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.SandboxStateException;
import dev.sandbox.implementation.process.RawEvent;
import dev.sandbox.implementation.process.SpawnedProcess;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * A background process whose output lives in one {@link OutputRing} per stream. One subscriber to the raw output (on
 * the I/O thread) appends to the rings; any number of {@link Cursor}s read from them, each from its own offsets.
 */
public final class RingBackgroundProcess implements BackgroundProcess {
    private static final int CHUNK = 64 * 1024;
    private static final int CURSOR_PREFETCH = 4;

    /** What the session does around each operation: reject it when closed, note the activity. */
    public interface Guard {
        /** Throws when the session can no longer be used; otherwise records activity. */
        void check();
    }

    private final String id;
    private final ExecOptions options;
    private final BackgroundOptions background;
    private final Execution execution;
    private final Scheduler deliver;
    private final Guard guard;
    private final Instant startedAt = Instant.now();
    private final OutputRing[] rings;
    private final Set<Cursor> cursors = ConcurrentHashMap.newKeySet();
    private final Sinks.One<ExecEvent.Exit> exitSink = Sinks.one();
    private final AtomicBoolean collected = new AtomicBoolean();
    private final StdinChannel stdin;
    private final Feeder feeder = new Feeder();
    private volatile SpawnedProcess process;
    private volatile RawEvent.Exited rawExit;
    private volatile ExecEvent.Exit exit;
    private volatile Throwable failure;

    RingBackgroundProcess(
            String id,
            ExecOptions options,
            BackgroundOptions background,
            Execution execution,
            Scheduler deliver,
            Guard guard) {
        this.id = id;
        this.options = options;
        this.background = background;
        this.execution = execution;
        this.deliver = deliver;
        this.guard = guard;
        this.rings = new OutputRing[] {new OutputRing(background.ringBytes()), new OutputRing(background.ringBytes())};
        this.stdin = options.stdin().isPresent() ? null : new StdinChannel();
        // a killed process's last output must not wait for readers: stop throttling so its exit comes through
        execution.onKill(feeder::drainFreely);
    }

    /** Options for spawning: stdin is this process's open channel unless the caller gave one. */
    ExecOptions spawnOptions() {
        return stdin == null ? options : options.withStdin(stdin);
    }

    void started(SpawnedProcess p) {
        this.process = p;
        p.events().subscribe(feeder);
    }

    Execution execution() {
        return execution;
    }

    boolean running() {
        return exit == null && failure == null;
    }

    ProcessInfo info() {
        ExecEvent.Exit e = exit;
        return new ProcessInfo(id, options.argv(), pid().orElse(-1), startedAt, running(), e == null ? null : e.code());
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public OptionalLong pid() {
        SpawnedProcess p = process;
        return p == null ? OptionalLong.empty() : OptionalLong.of(p.pid());
    }

    @Override
    public List<String> argv() {
        return options.argv();
    }

    @Override
    public Instant startedAt() {
        return startedAt;
    }

    @Override
    public Mono<ExecEvent.Exit> exit() {
        return exitSink.asMono().publishOn(deliver);
    }

    @Override
    public Optional<ExecEvent.Exit> exitNow() {
        return Optional.ofNullable(exit);
    }

    @Override
    public Flux<ExecEvent> output(long stdoutOffset, long stderrOffset) {
        return lines(stdoutOffset, stderrOffset, true, guard);
    }

    @Override
    public Flux<ExecEvent> snapshot(long stdoutOffset, long stderrOffset) {
        return lines(stdoutOffset, stderrOffset, false, guard);
    }

    private Flux<ExecEvent> lines(long stdoutOffset, long stderrOffset, boolean follow, Guard g) {
        return Flux.defer(() -> {
            g.check();
            checkOffset("stdoutOffset", stdoutOffset);
            checkOffset("stderrOffset", stderrOffset);
            LineFramer framer = new LineFramer(options, e -> exit, stdoutOffset, stderrOffset);
            // a reader following the process sees a prompt as a partial line once the process is quiet; a snapshot
            // (or a stream that ends without the exit) ends with what is held as partial lines
            return QuietFlush.apply(
                            raw(stdoutOffset, stderrOffset, follow).publishOn(deliver, CURSOR_PREFETCH),
                            options,
                            deliver)
                    .concatMapIterable(framer::frame, 1)
                    .concatWith(Flux.defer(() -> Flux.fromIterable(framer::pending)));
        });
    }

    private static void checkOffset(String field, long offset) {
        if (offset < 0) {
            throw new InvalidArgumentException(field, field + " must not be negative, got " + offset);
        }
    }

    /**
     * The raw bytes of stdout from an offset ({@code -1}: the oldest held), following until the end.
     *
     * @param offset the first byte wanted, or -1
     * @return the bytes
     */
    Flux<ByteBuffer> stdoutBytes(long offset) {
        return raw(offset, -1, true)
                .<ByteBuffer>handle((e, sink) -> {
                    if (e instanceof RawEvent.Chunk chunk) {
                        sink.next(ByteBuffer.wrap(chunk.bytes()).asReadOnlyBuffer());
                    }
                })
                .publishOn(deliver, CURSOR_PREFETCH);
    }

    /** The guard that every operation runs. */
    Guard guard() {
        return guard;
    }

    private Flux<RawEvent> raw(long stdoutOffset, long stderrOffset, boolean follow) {
        return Flux.from(cursor(stdoutOffset, stderrOffset, follow));
    }

    /**
     * The rings read from offsets by a {@link Cursor} per subscriber: the bare publisher that {@link #raw} adapts, and
     * what the Reactive Streams TCK checks.
     *
     * @param stdoutOffset the first stdout byte wanted ({@code -1}: the oldest held)
     * @param stderrOffset the first stderr byte wanted ({@code -1}: the oldest held)
     * @param follow whether to wait for more output (until the exit) once caught up, rather than complete
     * @return the publisher
     */
    Publisher<RawEvent> cursor(long stdoutOffset, long stderrOffset, boolean follow) {
        return s -> {
            Objects.requireNonNull(s, "rule 1.9: the subscriber must not be null");
            Cursor cursor = new Cursor(s, stdoutOffset, stderrOffset, follow);
            cursors.add(cursor);
            s.onSubscribe(cursor);
            cursor.drain();
        };
    }

    @Override
    public Mono<ExecResult> collect() {
        return collect(guard);
    }

    private Mono<ExecResult> collect(Guard g) {
        return Mono.defer(() -> {
            g.check();
            if (!collected.compareAndSet(false, true)) {
                return Mono.error(new SandboxStateException(
                        "the output of process " + id + " was already collected; read it with output(offset)"));
            }
            OutputCollector collector = new OutputCollector(options.maxOutputBytes(), e -> exit);
            return raw(0, 0, true)
                    .doOnNext(collector::accept)
                    .then(Mono.fromSupplier(() -> collector.result(options.charset())))
                    .publishOn(deliver);
        });
    }

    @Override
    public Mono<Void> signal(int signal) {
        return signal(signal, guard);
    }

    private Mono<Void> signal(int signal, Guard g) {
        return Mono.fromRunnable(() -> {
            g.check();
            if (signal < 1 || signal > 64) {
                throw new InvalidArgumentException("signal", "signal must be from 1 to 64, got " + signal);
            }
            if (running()) {
                if (signal == 9) {
                    execution.kill();
                } else {
                    process.signal(signal);
                }
            }
        });
    }

    @Override
    public Mono<Void> kill() {
        return signal(9);
    }

    /**
     * Kills without the session check, because the session ends: its exit becomes {@code why}.
     *
     * @param why the session's end
     */
    void terminate(RuntimeException why) {
        execution.sessionEnded(why);
    }

    @Override
    public Mono<Void> writeStdin(ByteBuffer bytes) {
        return writeStdin(bytes, guard);
    }

    private Mono<Void> writeStdin(ByteBuffer bytes, Guard g) {
        return Mono.defer(() -> {
            g.check();
            if (stdin == null) {
                return Mono.error(new SandboxStateException(
                        "process " + id + " reads stdin from the publisher it was started with"));
            }
            return stdin.write(bytes);
        });
    }

    @Override
    public Mono<Void> closeStdin() {
        return closeStdin(guard);
    }

    private Mono<Void> closeStdin(Guard g) {
        return Mono.defer(() -> {
            g.check();
            return stdin == null ? Mono.empty() : stdin.close();
        });
    }

    /**
     * This process as seen through another handle of its session: the same process, with every operation checked by
     * that handle (so it keeps working after the handle that started it was closed, and stops when this one is).
     *
     * @param handleGuard the other handle's check
     * @return the view
     */
    public BackgroundProcess through(Guard handleGuard) {
        return new View(handleGuard);
    }

    /** A view of the process for another handle of the session. */
    private final class View implements BackgroundProcess {
        private final Guard g;

        View(Guard g) {
            this.g = g;
        }

        @Override
        public String id() {
            return id;
        }

        @Override
        public OptionalLong pid() {
            return RingBackgroundProcess.this.pid();
        }

        @Override
        public List<String> argv() {
            return RingBackgroundProcess.this.argv();
        }

        @Override
        public Instant startedAt() {
            return startedAt;
        }

        @Override
        public Mono<ExecEvent.Exit> exit() {
            return RingBackgroundProcess.this.exit();
        }

        @Override
        public Optional<ExecEvent.Exit> exitNow() {
            return RingBackgroundProcess.this.exitNow();
        }

        @Override
        public Flux<ExecEvent> output(long stdoutOffset, long stderrOffset) {
            return lines(stdoutOffset, stderrOffset, true, g);
        }

        @Override
        public Flux<ExecEvent> snapshot(long stdoutOffset, long stderrOffset) {
            return lines(stdoutOffset, stderrOffset, false, g);
        }

        @Override
        public Mono<ExecResult> collect() {
            return RingBackgroundProcess.this.collect(g);
        }

        @Override
        public Mono<Void> signal(int signal) {
            return RingBackgroundProcess.this.signal(signal, g);
        }

        @Override
        public Mono<Void> kill() {
            return RingBackgroundProcess.this.signal(9, g);
        }

        @Override
        public Mono<Void> writeStdin(ByteBuffer bytes) {
            return RingBackgroundProcess.this.writeStdin(bytes, g);
        }

        @Override
        public Mono<Void> closeStdin() {
            return RingBackgroundProcess.this.closeStdin(g);
        }

        @Override
        public String toString() {
            return "BackgroundProcess{" + id + ", " + options.argv() + "}";
        }
    }

    private boolean throttled() {
        return background.overflow() == BackgroundOptions.Overflow.THROTTLE && !feeder.free;
    }

    /** In throttle mode: drops what every live cursor has read, and asks for more output if there is room. */
    private void released() {
        if (!throttled()) {
            return;
        }
        for (int s = 0; s < 2; s++) {
            if (!cursors.isEmpty()) {
                long min = Long.MAX_VALUE;
                for (Cursor c : cursors) {
                    min = Math.min(min, c.offsets[s]);
                }
                rings[s].release(min);
            }
        }
        feeder.maybeRequest();
    }

    private void notifyCursors() {
        for (Cursor c : cursors) {
            c.drain();
        }
    }

    /** Appends the process's raw output to the rings. Runs on the I/O thread. */
    private final class Feeder extends BaseSubscriber<RawEvent> {
        private final AtomicBoolean requested = new AtomicBoolean();
        private volatile boolean free;

        /** From now on reads everything, dropping the oldest bytes when a ring is full. */
        void drainFreely() {
            if (!free) {
                free = true;
                request(Long.MAX_VALUE);
            }
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            if (throttled()) {
                maybeRequest();
            } else {
                subscription.request(Long.MAX_VALUE);
            }
        }

        void maybeRequest() {
            if (rings[0].free() >= CHUNK && rings[1].free() >= CHUNK && requested.compareAndSet(false, true)) {
                request(1);
            }
        }

        @Override
        protected void hookOnNext(RawEvent event) {
            switch (event) {
                case RawEvent.Chunk chunk -> {
                    execution.sawOutput();
                    rings[chunk.stream()].append(chunk.bytes());
                }
                case RawEvent.Flush flush -> {} // not from a process
                case RawEvent.Exited exited -> {
                    rawExit = exited;
                    exit = execution.plainExit(exited);
                    execution.finished();
                    RuntimeException ended = execution.sessionEnd();
                    if (ended != null) {
                        exitSink.tryEmitError(ended); // the session's end killed it, not a signal of its own
                    } else {
                        exitSink.tryEmitValue(exit);
                    }
                }
            }
            if (throttled()) {
                requested.set(false);
                maybeRequest();
            }
            notifyCursors();
        }

        @Override
        protected void hookOnError(Throwable t) {
            failure = t;
            exitSink.tryEmitError(t);
            notifyCursors();
        }
    }

    /** One reader of the rings, from its own offsets, with its own demand. */
    private final class Cursor implements Subscription {
        final long[] offsets = new long[2];
        private Subscriber<? super RawEvent> subscriber; // drain loop only; null once the reader is done with
        private final boolean follow;
        private final AtomicLong demand = new AtomicLong();
        private final AtomicInteger wip = new AtomicInteger();
        private volatile boolean cancelled;
        private volatile long invalidRequest; // the first request of 0 or less (rule 3.9), or 1 when none
        private boolean done; // drain loop only
        private int turn; // drain loop only: which stream goes first

        Cursor(Subscriber<? super RawEvent> subscriber, long stdoutOffset, long stderrOffset, boolean follow) {
            this.subscriber = subscriber;
            // a negative offset means the oldest byte still held
            this.offsets[0] = stdoutOffset < 0 ? rings[0].start() : stdoutOffset;
            this.offsets[1] = stderrOffset < 0 ? rings[1].start() : stderrOffset;
            this.follow = follow;
            this.invalidRequest = 1;
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                if (invalidRequest > 0) {
                    invalidRequest = n;
                }
            } else {
                demand.getAndUpdate(d -> Operators.addCap(d, n));
            }
            drain();
        }

        @Override
        public void cancel() {
            cancelled = true;
            cursors.remove(this);
            released();
            drain(); // the drain loop forgets the reader (rule 3.13)
        }

        void drain() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                emitReady();
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }

        private void emitReady() {
            if (cancelled) {
                subscriber = null;
                return;
            }
            long invalid = invalidRequest;
            if (invalid <= 0 && !done) {
                // rule 3.9: the reader broke the protocol; it gets the error
                finish(new IllegalArgumentException("rule 3.9: a request must be positive, got " + invalid));
                return;
            }
            boolean advanced = false;
            while (!done && !cancelled) {
                // read the end state first: data appended before the exit is then surely visible below
                boolean ended = rawExit != null;
                Throwable failed = failure;
                boolean progressed = false;
                for (int i = 0; i < 2 && demand.get() > 0; i++) {
                    int s = (turn + i) % 2;
                    byte[] bytes = rings[s].read(offsets[s], CHUNK);
                    if (bytes == null) {
                        finish(new OffsetUnavailableException(
                                id,
                                s == 0 ? ExecEvent.StreamKind.STDOUT : ExecEvent.StreamKind.STDERR,
                                offsets[s],
                                rings[s].start(),
                                rings[s].end()));
                        return;
                    }
                    if (bytes.length > 0) {
                        offsets[s] += bytes.length;
                        demand.decrementAndGet();
                        subscriber.onNext(new RawEvent.Chunk(s, bytes));
                        progressed = true;
                        advanced = true;
                    }
                }
                turn ^= 1;
                if (progressed) {
                    continue;
                }
                // at or past the end: a reader may ask for an offset not written yet and wait for it
                boolean caughtUp = offsets[0] >= rings[0].end() && offsets[1] >= rings[1].end();
                if (failed != null && caughtUp) {
                    finish(failed);
                } else if (ended && caughtUp) {
                    if (demand.get() > 0) {
                        done = true;
                        subscriber.onNext(rawExit);
                        complete();
                    }
                } else if (!follow && caughtUp) {
                    complete();
                }
                break;
            }
            if (advanced) {
                released();
            }
        }

        private void complete() {
            done = true;
            cursors.remove(this);
            Subscriber<? super RawEvent> s = subscriber;
            subscriber = null;
            s.onComplete();
            released();
        }

        private void finish(Throwable error) {
            done = true;
            cursors.remove(this);
            Subscriber<? super RawEvent> s = subscriber;
            subscriber = null;
            s.onError(error);
            released();
        }
    }
}
