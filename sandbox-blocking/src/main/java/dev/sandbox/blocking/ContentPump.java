package dev.sandbox.blocking;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
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
    private Subscriber<? super ByteBuffer> subscriber; // guarded by lock
    private boolean subscribed; // guarded by lock: onSubscribe has returned
    private long demand; // guarded by lock
    private boolean stopped; // guarded by lock

    @Override
    public void subscribe(Subscriber<? super ByteBuffer> s) {
        synchronized (lock) {
            if (subscriber != null) {
                Operators.error(s, new IllegalStateException("the content can be consumed only once"));
                return;
            }
            subscriber = s;
        }
        s.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
                synchronized (lock) {
                    demand = n <= 0 ? demand : Operators.addCap(demand, n);
                    lock.notifyAll();
                }
            }

            @Override
            public void cancel() {
                stop();
            }
        });
        synchronized (lock) {
            subscribed = true;
            lock.notifyAll();
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
        Subscriber<? super ByteBuffer> s;
        synchronized (lock) {
            demand--;
            s = subscriber;
        }
        s.onNext(buffer);
    }

    /** Signals the end of the content. */
    void complete() {
        Subscriber<? super ByteBuffer> s;
        synchronized (lock) {
            s = subscribed ? subscriber : null;
        }
        if (s != null) {
            s.onComplete();
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
