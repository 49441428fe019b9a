package dev.sandbox.blocking;

import dev.sandbox.SandboxTimeoutException;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;

/**
 * Hands a publisher's elements to one blocking reader through a queue, asking for at most {@code prefetch} elements
 * ahead of the reader and replenishing as it consumes. The shared engine of {@link ExecStream}, {@link ProcessOutput},
 * {@link FileWatch} and the file read stream; they add their own timeout and interrupt policies on top.
 *
 * <p>{@link #poll(long, String)} is for one reading thread at a time; {@link #close()} and {@link #ready()} may be
 * called from any thread.
 */
final class QueueReader<T> {
    private static final Object COMPLETE = new Object();
    private static final Object CLOSED = new Object();

    private record Failure(Throwable error) {}

    private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final Inner subscriber;
    private final int replenish;
    private final AtomicBoolean closed = new AtomicBoolean();

    // reader state: used by the one reading thread only
    private volatile boolean ended;
    private int consumed;

    QueueReader(int prefetch) {
        this.subscriber = new Inner(prefetch);
        this.replenish = Math.max(1, prefetch - (prefetch >> 2));
    }

    /** Subscribes to the source, with the calling thread's context (see {@link Blocking#withCallerContext}); call once. */
    QueueReader<T> subscribe(Publisher<? extends T> source) {
        Blocking.<T>withCallerContext(source).subscribe(subscriber);
        return this;
    }

    /**
     * Takes the next element, waiting at most {@code nanos}.
     *
     * @return the element, or {@code null} when the wait ran out or the source has ended; {@link #ended()} tells
     *     which
     * @throws InterruptedException when the reader was interrupted while waiting (nothing is closed)
     * @throws RuntimeException the source's error, unwrapped (see {@link Blocking#rethrow}); thrown once, after which
     *     the reader has ended
     */
    @SuppressWarnings("unchecked")
    @Nullable
    T poll(long nanos, String operation) throws InterruptedException {
        if (ended) {
            return null;
        }
        Object signal = queue.poll();
        if (signal == null) {
            signal = queue.poll(nanos, TimeUnit.NANOSECONDS);
            if (signal == null) {
                return null;
            }
        }
        if (signal == COMPLETE || signal == CLOSED) {
            ended = true;
            return null;
        }
        if (signal instanceof Failure failure) {
            ended = true;
            throw Blocking.rethrow(failure.error(), operation);
        }
        if (++consumed == replenish) {
            consumed = 0;
            subscriber.request(replenish);
        }
        return (T) signal;
    }

    /**
     * Takes the next element with the facade's policies: fails on a non-blocking thread; an interrupt (before or
     * during the wait) closes the reader, restores the flag and throws {@link SandboxInterruptedException}; a wait
     * longer than {@code timeout} closes the reader and throws {@link SandboxTimeoutException}.
     *
     * @param what the wait, for the timeout's message, such as "waiting for the next event of ..."
     * @return the element, or {@code null} when the source has ended or the reader was closed
     */
    @Nullable
    T take(Duration timeout, String method, String operation, String what) {
        if (ended()) {
            return null;
        }
        Blocking.checkCanBlock(method);
        if (Thread.currentThread().isInterrupted()) {
            close();
            throw new SandboxInterruptedException(operation, null);
        }
        T element;
        try {
            element = poll(Blocking.nanos(timeout), operation);
        } catch (InterruptedException e) {
            close();
            Thread.currentThread().interrupt();
            throw new SandboxInterruptedException(operation, e);
        }
        if (element != null || ended()) {
            return element;
        }
        close();
        throw new SandboxTimeoutException(what, timeout);
    }

    /** Whether the source has completed, failed (and the failure was thrown) or the reader was closed. */
    boolean ended() {
        return ended || closed.get();
    }

    /** Whether the next {@link #poll} returns without waiting. Never blocks. */
    boolean ready() {
        return ended() || !queue.isEmpty();
    }

    /** Cancels the subscription and ends the reading; wakes a reader waiting in {@link #poll}. Idempotent. */
    void close() {
        if (closed.compareAndSet(false, true)) {
            subscriber.dispose();
            queue.clear();
            queue.offer(CLOSED);
        }
    }

    boolean closed() {
        return closed.get();
    }

    /** Moves signals into the queue; asks for {@code prefetch} elements up front and more as the reader consumes. */
    private final class Inner extends BaseSubscriber<T> {
        private final int prefetch;

        Inner(int prefetch) {
            this.prefetch = prefetch;
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            subscription.request(prefetch);
        }

        @Override
        protected void hookOnNext(T value) {
            if (!closed.get()) {
                queue.offer(value);
            }
        }

        @Override
        protected void hookOnComplete() {
            queue.offer(COMPLETE);
        }

        @Override
        protected void hookOnError(Throwable throwable) {
            queue.offer(new Failure(throwable));
        }
    }
}
