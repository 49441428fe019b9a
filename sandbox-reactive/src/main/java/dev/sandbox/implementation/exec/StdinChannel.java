package dev.sandbox.implementation.exec;

import dev.sandbox.SandboxStateException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Operators;

/**
 * An open standard input: a publisher the process's stdin pump subscribes to, fed by {@link #write(ByteBuffer)}. A
 * write completes when the pump asks for the next buffer, which it does once the previous one is in the pipe; so a
 * writer that waits for each write is paced by the process. At most {@value #MAX_PENDING} writes may wait at once.
 */
final class StdinChannel implements Publisher<ByteBuffer> {
    static final int MAX_PENDING = 16;

    private record Pending(ByteBuffer bytes, MonoSink<Void> sink) {}

    private final Deque<Pending> queue = new ArrayDeque<>();
    private Subscriber<? super ByteBuffer> subscriber; // guarded by this
    private boolean hadReader; // guarded by this
    private long demand; // guarded by this
    private Pending inFlight; // guarded by this
    private boolean closing; // guarded by this
    private boolean terminated; // guarded by this
    private MonoSink<Void> closeSink; // guarded by this
    private IllegalArgumentException invalidRequest; // guarded by this
    private boolean draining; // guarded by this: a thread is in drain()'s loop

    @Override
    public void subscribe(Subscriber<? super ByteBuffer> s) {
        synchronized (this) {
            if (hadReader) {
                Operators.error(s, new IllegalStateException("stdin has one reader"));
                return;
            }
            hadReader = true;
            subscriber = s;
        }
        s.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
                synchronized (StdinChannel.this) {
                    if (n <= 0) {
                        // rule 3.9: the reader broke the protocol; it gets the error, the writers fail
                        if (invalidRequest == null) {
                            invalidRequest =
                                    new IllegalArgumentException("rule 3.9: a request must be positive, got " + n);
                        }
                    } else {
                        demand = Operators.addCap(demand, n);
                    }
                    completeInFlight();
                }
                drain();
            }

            @Override
            public void cancel() {
                // the process's stdin is gone: fail what waits
                synchronized (StdinChannel.this) {
                    terminated = true;
                    subscriber = null; // rule 3.13: a cancelled reader is not kept
                    failAll(new SandboxStateException("the process's standard input is closed"));
                }
            }
        });
    }

    Mono<Void> write(ByteBuffer bytes) {
        ByteBuffer copy =
                ByteBuffer.allocate(bytes.remaining()).put(bytes.duplicate()).flip();
        return Mono.<Void>create(sink -> {
            synchronized (this) {
                if (terminated || closing) {
                    sink.error(new SandboxStateException("the process's standard input is closed"));
                    return;
                }
                if (queue.size() >= MAX_PENDING) {
                    sink.error(new SandboxStateException(
                            "too many stdin writes pending (" + MAX_PENDING + "); wait for earlier writes"));
                    return;
                }
                queue.add(new Pending(copy, sink));
            }
            drain();
        });
    }

    Mono<Void> close() {
        return Mono.<Void>create(sink -> {
            synchronized (this) {
                if (terminated) {
                    sink.success();
                    return;
                }
                closing = true;
                closeSink = sink;
            }
            drain();
        });
    }

    private void completeInFlight() {
        if (inFlight != null) {
            inFlight.sink().success();
            inFlight = null;
        }
    }

    private void failAll(RuntimeException e) {
        if (inFlight != null) {
            inFlight.sink().error(e);
            inFlight = null;
        }
        Pending p;
        while ((p = queue.poll()) != null) {
            p.sink().error(e);
        }
        if (closeSink != null) {
            closeSink.success();
            closeSink = null;
        }
    }

    /**
     * Signals what the reader may have: buffers while it has demand, then the end once closed and empty. One thread
     * at a time runs the loop, and a call made while it runs (a request from inside {@code onNext}, a write) leaves
     * the work to it, so signals never nest or overlap (rules 1.3 and 3.3). A write completes when its buffer is
     * delivered with demand to spare, or else at the reader's next request: a reader that asks for one buffer at a
     * time (the stdin pump) paces its writers.
     */
    private void drain() {
        synchronized (this) {
            if (draining) {
                return;
            }
            draining = true;
        }
        for (; ; ) {
            Subscriber<? super ByteBuffer> s;
            ByteBuffer next = null;
            MonoSink<Void> delivered = null;
            Throwable error = null;
            boolean complete = false;
            synchronized (this) {
                s = subscriber;
                if (s == null || terminated) {
                    draining = false;
                    return;
                }
                if (invalidRequest != null) {
                    terminated = true;
                    error = invalidRequest;
                    failAll(new SandboxStateException("the process's standard input is closed"));
                } else if (inFlight == null && demand > 0 && !queue.isEmpty()) {
                    Pending p = queue.poll();
                    demand--;
                    next = p.bytes();
                    if (demand > 0) {
                        delivered = p.sink();
                    } else {
                        inFlight = p;
                    }
                } else if (inFlight == null && queue.isEmpty() && closing) {
                    terminated = true;
                    complete = true;
                    if (closeSink != null) {
                        closeSink.success();
                        closeSink = null;
                    }
                } else {
                    draining = false;
                    return;
                }
            }
            if (next != null) {
                s.onNext(next);
                if (delivered != null) {
                    delivered.success();
                }
            } else if (error != null) {
                s.onError(error);
            } else if (complete) {
                s.onComplete();
            }
        }
    }
}
