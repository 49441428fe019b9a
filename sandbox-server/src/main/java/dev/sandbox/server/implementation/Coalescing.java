package dev.sandbox.server.implementation;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Operators;

/**
 * Reads a body a few chunks ahead of demand and hands each request everything that is already there, joined into one
 * buffer of up to {@value #MAX_JOINED} bytes. A consumer that takes one buffer at a time on another thread (a
 * process's stdin pump) then makes one hop per batch of socket reads rather than per read, and still gets a lone chunk
 * at once when the body trickles in.
 */
final class Coalescing implements Publisher<ByteBuffer> {
    static final int MAX_JOINED = 256 * 1024;
    private static final int PREFETCH = 16;

    private final Publisher<byte[]> source;

    Coalescing(Publisher<byte[]> source) {
        this.source = source;
    }

    @Override
    public void subscribe(Subscriber<? super ByteBuffer> actual) {
        source.subscribe(new Inner(actual));
    }

    private static final class Inner implements Subscriber<byte[]>, Subscription {
        private Subscriber<? super ByteBuffer> actual; // dropped once terminated or cancelled (rule 3.13)
        private final Deque<byte[]> queue = new ArrayDeque<>(); // guarded by itself
        private final AtomicLong demand = new AtomicLong();
        private final AtomicInteger wip = new AtomicInteger();
        private Subscription upstream;
        private volatile boolean done;
        private volatile Throwable error;
        private volatile boolean cancelled;
        private volatile Throwable invalidRequest;
        private boolean terminated; // drain loop only

        Inner(Subscriber<? super ByteBuffer> actual) {
            this.actual = actual;
        }

        @Override
        public void onSubscribe(Subscription s) {
            upstream = s;
            actual.onSubscribe(this); // drain() has not run yet: actual is set
            s.request(PREFETCH);
        }

        @Override
        public void onNext(byte[] chunk) {
            synchronized (queue) {
                queue.add(chunk);
            }
            drain();
        }

        @Override
        public void onError(Throwable t) {
            error = t;
            done = true;
            drain();
        }

        @Override
        public void onComplete() {
            done = true;
            drain();
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                // rule 3.9: the consumer broke the protocol; the body is not read further
                upstream.cancel();
                invalidRequest = new IllegalArgumentException("rule 3.9: a request must be positive, got " + n);
                drain();
                return;
            }
            demand.getAndUpdate(d -> Operators.addCap(d, n));
            drain();
        }

        @Override
        public void cancel() {
            cancelled = true;
            upstream.cancel();
            drain(); // drops the queued chunks and the consumer (rule 3.13)
        }

        private void drain() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                Throwable invalid = invalidRequest;
                if (invalid != null && !terminated && !cancelled) {
                    terminated = true;
                    actual.onError(invalid);
                }
                while (!terminated && !cancelled) {
                    boolean finished = done;
                    int taken = 0;
                    ByteBuffer joined = null;
                    if (demand.get() > 0) {
                        synchronized (queue) {
                            int size = 0;
                            for (byte[] c : queue) {
                                if (taken > 0 && size + c.length > MAX_JOINED) {
                                    break;
                                }
                                size += c.length;
                                taken++;
                            }
                            if (taken > 0) {
                                joined = ByteBuffer.allocate(size);
                                for (int i = 0; i < taken; i++) {
                                    joined.put(queue.poll());
                                }
                                joined.flip();
                            }
                        }
                    }
                    if (joined != null) {
                        demand.decrementAndGet();
                        actual.onNext(joined);
                        upstream.request(taken);
                        continue;
                    }
                    boolean empty;
                    synchronized (queue) {
                        empty = queue.isEmpty();
                    }
                    if (finished && empty) {
                        terminated = true;
                        Throwable e = error;
                        if (e != null) {
                            actual.onError(e);
                        } else {
                            actual.onComplete();
                        }
                    }
                    break;
                }
                if (terminated || cancelled) {
                    actual = null;
                    synchronized (queue) {
                        queue.clear();
                    }
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }
    }
}
