package dev.sandbox.blocking;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Operators;

/**
 * A publisher of content that the caller's thread feeds: the caller waits for demand with {@link #awaitDemand}, reads
 * its source (a stream or a local file) itself, and emits one buffer per unit of demand. So a blocking source is read
 * on the thread that is allowed to block, and never further ahead than the consumer asks.
 */
final class ContentPump implements Publisher<ByteBuffer> {
    /** What {@link #awaitDemand} saw. */
    enum Wait {
        /** A buffer may be emitted. */
        DEMAND,
        /** The consumer cancelled, or its result is in: stop feeding. */
        STOPPED,
        /** Neither happened in time. */
        TIMEOUT
    }

    private final Object lock = new Object();
    /** Held while a signal is made, so that signals from the feeder and from a bad request never overlap (rule 1.3). */
    private final Object signalling = new Object();

    private @Nullable Subscriber<? super ByteBuffer> subscriber; // guarded by lock; dropped once terminated (rule 3.13)
    private boolean hadSubscriber; // guarded by lock
    private boolean subscribed; // guarded by lock: onSubscribe has returned
    private long demand; // guarded by lock
    private boolean stopped; // guarded by lock
    private boolean terminated; // guarded by lock: onComplete or onError was signalled, or the consumer cancelled
    private boolean completePending; // guarded by lock: complete() came before onSubscribe returned

    @Override
    public void subscribe(Subscriber<? super ByteBuffer> s) {
        synchronized (lock) {
            if (hadSubscriber) {
                Operators.error(s, new IllegalStateException("the content can be consumed only once"));
                return;
            }
            hadSubscriber = true;
            subscriber = s;
        }
        s.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
                if (n <= 0) {
                    fail(new IllegalArgumentException("rule 3.9: a request must be positive, got " + n));
                    return;
                }
                synchronized (lock) {
                    demand = Operators.addCap(demand, n);
                    lock.notifyAll();
                }
            }

            @Override
            public void cancel() {
                synchronized (lock) {
                    terminated = true;
                    subscriber = null;
                }
                stop();
            }
        });
        boolean completeNow;
        synchronized (lock) {
            subscribed = true;
            completeNow = completePending;
            lock.notifyAll();
        }
        if (completeNow) {
            complete();
        }
    }

    /** Waits until a buffer may be emitted, the consumer stopped, or {@code nanos} passed. */
    Wait awaitDemand(long nanos) throws InterruptedException {
        long start = System.nanoTime();
        synchronized (lock) {
            while (true) {
                if (stopped) {
                    return Wait.STOPPED;
                }
                if (subscribed && demand > 0) {
                    return Wait.DEMAND;
                }
                long left = nanos - (System.nanoTime() - start);
                if (left <= 0) {
                    return Wait.TIMEOUT;
                }
                TimeUnit.NANOSECONDS.timedWait(lock, left);
            }
        }
    }

    /** Emits one buffer; call only after {@link #awaitDemand} returned {@link Wait#DEMAND}. */
    void emit(ByteBuffer buffer) {
        synchronized (signalling) {
            Subscriber<? super ByteBuffer> s;
            synchronized (lock) {
                s = subscriber;
                if (terminated || s == null) { // null only once terminated (or before a subscriber came)
                    return;
                }
                demand--;
            }
            s.onNext(buffer);
        }
    }

    /** Signals the end of the content; before the consumer has subscribed, as soon as it has. */
    void complete() {
        synchronized (signalling) {
            Subscriber<? super ByteBuffer> s;
            synchronized (lock) {
                if (terminated) {
                    return;
                }
                if (!subscribed) {
                    completePending = true;
                    return;
                }
                terminated = true;
                s = subscriber;
                subscriber = null;
            }
            if (s != null) { // subscribed and not terminated: always set
                s.onComplete();
            }
        }
    }

    /** Ends the content with an error the consumer caused (a request that breaks the rules), and stops feeding. */
    private void fail(Throwable error) {
        stop();
        synchronized (signalling) {
            Subscriber<? super ByteBuffer> s;
            synchronized (lock) {
                if (terminated) {
                    return;
                }
                terminated = true;
                s = subscriber;
                subscriber = null;
            }
            if (s != null) { // a request came through the subscription, so the subscriber is set
                s.onError(error);
            }
        }
    }

    /** Stops feeding: the consumer cancelled or has finished. Wakes the feeder. */
    void stop() {
        synchronized (lock) {
            stopped = true;
            lock.notifyAll();
        }
    }
}
