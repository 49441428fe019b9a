package dev.sandbox.implementation.exec;

import dev.sandbox.ExecOptions;
import dev.sandbox.implementation.process.RawEvent;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

/**
 * Sits between a command's raw output and its {@link LineFramer}: when a stream's last chunk did not end a line and
 * the stream then stays quiet for the partial-line delay while the framer is waiting for more (it has asked and
 * nothing came), inserts a {@link RawEvent.Flush} for that stream so that the framer delivers the pending bytes as a
 * partial line.
 *
 * <p>Costs nothing per line: a chunk only records its time and whether it ended mid-line. One timer per stream of
 * output is armed only while some stream has bytes pending, and re-arms itself for the earliest deadline; it is
 * cancelled with the stream. A flush is an item like the others: a subscriber that has not asked for one gets it when
 * it asks. Time during which the framer had not asked for more does not count as quiet (the command may have been
 * blocked by backpressure, not waiting).
 */
final class QuietFlush {
    private QuietFlush() {}

    /**
     * The raw output with flushes inserted as the options ask. Without a delay (zero, where the framer delivers
     * pending bytes after each chunk itself) or with byte output, the output as it is.
     *
     * @param raw the raw output
     * @param options the command's options
     * @param timer where the timer runs (and a flush is emitted from)
     * @return the output with flushes
     */
    static Flux<RawEvent> apply(Flux<RawEvent> raw, ExecOptions options, Scheduler timer) {
        Duration delay = options.partialLineDelay();
        if (delay.isZero() || options.byteOutput()) {
            return raw;
        }
        return apply(raw, delay.toNanos(), timer);
    }

    static Flux<RawEvent> apply(Flux<RawEvent> raw, long delayNanos, Scheduler timer) {
        return Flux.create(sink -> new State(sink, delayNanos, timer).start(raw), FluxSink.OverflowStrategy.BUFFER);
    }

    private static final class State extends BaseSubscriber<RawEvent> {
        private final FluxSink<RawEvent> sink;
        private final long delay;
        private final Scheduler timer;
        // guarded by this
        private final boolean[] pending = new boolean[2];
        private final long[] lastChunk = new long[2];
        private long readySince = System.nanoTime();
        private boolean armed;
        private long expectedAt;
        private final boolean[] candidate = new boolean[2];
        private final long[] candidateChunk = new long[2];
        private boolean subscribed;
        private long early;
        private boolean stopped;
        private Disposable task;

        State(FluxSink<RawEvent> sink, long delay, Scheduler timer) {
            this.sink = sink;
            this.delay = delay;
            this.timer = timer;
        }

        void start(Flux<RawEvent> raw) {
            sink.onDispose(this::stop);
            raw.subscribe(this);
            sink.onRequest(this::demand);
        }

        /** Passes the sink's demand upstream, keeping what comes before the upstream subscription. */
        private void demand(long n) {
            synchronized (this) {
                readySince = System.nanoTime();
                if (!subscribed) {
                    early = Operators.addCap(early, n);
                    return;
                }
            }
            request(n);
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            long n;
            synchronized (this) {
                subscribed = true;
                n = early;
                early = 0;
            }
            if (n > 0) {
                subscription.request(n);
            }
        }

        @Override
        protected void hookOnNext(RawEvent event) {
            if (event instanceof RawEvent.Chunk chunk && chunk.bytes().length > 0) {
                byte[] b = chunk.bytes();
                boolean mid = b[b.length - 1] != '\n';
                boolean arm;
                synchronized (this) {
                    int s = chunk.stream();
                    pending[s] = mid;
                    lastChunk[s] = System.nanoTime();
                    arm = mid && !armed && !stopped;
                    if (arm) {
                        armed = true;
                    }
                }
                if (arm) {
                    schedule(delay);
                }
            }
            sink.next(event);
        }

        @Override
        protected void hookOnComplete() {
            stop();
            sink.complete();
        }

        @Override
        protected void hookOnError(Throwable t) {
            stop();
            sink.error(t);
        }

        private void stop() {
            Disposable t;
            synchronized (this) {
                stopped = true;
                t = task;
                task = null;
            }
            if (t != null) {
                t.dispose();
            }
            if (!isDisposed()) {
                dispose(); // a cancel downstream cancels the raw output
            }
        }

        private void schedule(long nanos) {
            long wait = Math.max(1_000, nanos);
            synchronized (this) {
                expectedAt = System.nanoTime() + wait;
            }
            Disposable t = timer.schedule(this::check, wait / 1_000, TimeUnit.MICROSECONDS);
            boolean late;
            synchronized (this) {
                late = stopped;
                if (!late) {
                    task = t;
                }
            }
            if (late) {
                t.dispose();
            }
        }

        /**
         * The timer: flushes the streams quiet for the delay while asked for more; re-arms for the others. A stream
         * found quiet is flushed only when a second, punctual look a little later confirms it: a timer that fires
         * late (a loaded machine, a pause of the JVM) may run before the thread that reads the output has handed
         * over what arrived meanwhile, and line-shaped output must not be cut on such a stall.
         */
        private void check() {
            boolean[] flush = new boolean[2];
            long next = Long.MAX_VALUE;
            boolean waiting = sink.requestedFromDownstream() > 0;
            synchronized (this) {
                armed = false;
                if (stopped) {
                    return;
                }
                long now = System.nanoTime();
                long confirm = Math.max(1_000_000, delay / 4);
                boolean punctual = now - expectedAt <= confirm;
                for (int s = 0; s < 2; s++) {
                    if (!pending[s]) {
                        candidate[s] = false;
                        continue;
                    }
                    long due = Math.max(lastChunk[s], readySince) + delay;
                    if (waiting && now - due >= 0) {
                        if (punctual && candidate[s] && candidateChunk[s] == lastChunk[s]) {
                            pending[s] = false;
                            candidate[s] = false;
                            flush[s] = true;
                        } else {
                            candidate[s] = true;
                            candidateChunk[s] = lastChunk[s];
                            next = Math.min(next, confirm);
                        }
                    } else {
                        // not asked for more: look again a delay later (the request resets readySince)
                        candidate[s] = false;
                        next = Math.min(next, waiting ? due - now : delay);
                    }
                }
                if (next != Long.MAX_VALUE) {
                    armed = true;
                }
            }
            for (int s = 0; s < 2; s++) {
                if (flush[s]) {
                    sink.next(new RawEvent.Flush(s));
                }
            }
            if (next != Long.MAX_VALUE) {
                schedule(next);
            }
        }
    }
}
