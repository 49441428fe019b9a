package dev.sandbox.server.implementation;

import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Schedulers;

/**
 * Counts the commands running through the server (runs, streaming execs, background processes) against a limit. A
 * REST request over the limit is answered 429 at once (the connection limit already paces REST clients); a command of
 * the command channel, where one connection carries thousands, waits for a slot in a bounded FIFO queue instead: it
 * is answered {@code 503 ServerBusy} (nothing done, safe to send again) when the queue is full, and 429 as over REST
 * when no slot freed within its wait.
 */
public final class ExecLimit {
    /** The most commands waiting for a slot at once, server-wide. */
    static final int MAX_WAITING = 16_384;

    private final int max;
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger waiting = new AtomicInteger();
    private final ConcurrentLinkedQueue<Waiter> waiters = new ConcurrentLinkedQueue<>();

    /** A command waiting for a slot; handed one, or timed out, or cancelled, once. */
    private static final class Waiter {
        final MonoSink<Runnable> sink;
        final AtomicBoolean settled = new AtomicBoolean();
        volatile Disposable timer;

        Waiter(MonoSink<Runnable> sink) {
            this.sink = sink;
        }
    }

    /**
     * Creates the limit.
     *
     * @param max the most commands at once
     */
    public ExecLimit(int max) {
        this.max = max;
    }

    /**
     * Takes a slot or fails with 429.
     *
     * @return a release action, safe to run more than once
     */
    public Runnable acquire() {
        if (running.incrementAndGet() > max) {
            running.decrementAndGet();
            throw new HttpError(
                    429,
                    "TooManyExecs",
                    "the server already runs its maximum of " + max + " commands; wait for one to end");
        }
        return releaser();
    }

    private boolean tryAcquire() {
        if (running.incrementAndGet() > max) {
            running.decrementAndGet();
            return false;
        }
        return true;
    }

    private Runnable releaser() {
        AtomicBoolean released = new AtomicBoolean();
        return () -> {
            if (released.compareAndSet(false, true)) {
                running.decrementAndGet();
                handOn();
            }
        };
    }

    /**
     * Takes a slot, waiting for one in FIFO order up to {@code wait}; fails with {@code 503 ServerBusy} (nothing done,
     * send it again) when the queue is full, and with {@code 429 TooManyExecs} as {@link #acquire} does when no
     * command ended within the wait. Cancelling leaves the queue.
     *
     * @param wait the longest wait
     * @return the release action, safe to run more than once
     */
    public Mono<Runnable> acquireQueued(Duration wait) {
        return Mono.create(sink -> {
            if (waiters.isEmpty() && tryAcquire()) {
                sink.success(releaser());
                return;
            }
            if (waiting.incrementAndGet() > MAX_WAITING) {
                waiting.decrementAndGet();
                sink.error(busy("and " + MAX_WAITING + " more wait"));
                return;
            }
            Waiter w = new Waiter(sink);
            sink.onCancel(() -> {
                if (settle(w)) {
                    waiters.remove(w);
                }
            });
            w.timer = Schedulers.parallel()
                    .schedule(
                            () -> {
                                if (settle(w)) {
                                    waiters.remove(w);
                                    w.sink.error(new HttpError(
                                            429,
                                            "TooManyExecs",
                                            "the server already runs its maximum of " + max
                                                    + " commands and none ended within " + wait.toMillis()
                                                    + " ms; wait for one to end"));
                                }
                            },
                            wait.toMillis(),
                            TimeUnit.MILLISECONDS);
            waiters.add(w);
            handOn(); // a slot freed before this waiter was queued would otherwise wait for the next release
        });
    }

    /** Settles a waiter once; {@code true} for the caller that did. */
    private boolean settle(Waiter w) {
        if (!w.settled.compareAndSet(false, true)) {
            return false;
        }
        waiting.decrementAndGet();
        Disposable t = w.timer;
        if (t != null) {
            t.dispose();
        }
        return true;
    }

    /** Gives free slots to the waiters at the head of the queue. */
    private void handOn() {
        while (!waiters.isEmpty()) {
            if (!tryAcquire()) {
                return;
            }
            Waiter w = waiters.poll();
            if (w != null && settle(w)) {
                w.sink.success(releaser());
            } else {
                running.decrementAndGet(); // nobody took it: give it back and look again
                if (w == null) {
                    return;
                }
            }
        }
    }

    private HttpError busy(String detail) {
        return new HttpError(
                503,
                "ServerBusy",
                "the server already runs its maximum of " + max + " commands " + detail + "; nothing was done");
    }

    /**
     * How many commands run now.
     *
     * @return the count
     */
    public int running() {
        return running.get();
    }
}
