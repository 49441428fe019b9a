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
    private long demand; // guarded by this
    private Pending inFlight; // guarded by this
    private boolean closing; // guarded by this
    private boolean terminated; // guarded by this
    private MonoSink<Void> closeSink; // guarded by this

    @Override
    public void subscribe(Subscriber<? super ByteBuffer> s) {
        synchronized (this) {
            if (subscriber != null) {
                Operators.error(s, new IllegalStateException("stdin has one reader"));
                return;
            }
            subscriber = s;
        }
        s.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
                synchronized (StdinChannel.this) {
                    demand = Operators.addCap(demand, n);
                    completeInFlight();
                }
                drain();
            }

            @Override
            public void cancel() {
                // the process's stdin is gone: fail what waits
                synchronized (StdinChannel.this) {
                    terminated = true;
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

    private void drain() {
        Subscriber<? super ByteBuffer> s;
        ByteBuffer next = null;
        boolean complete = false;
        synchronized (this) {
            s = subscriber;
            if (s == null || terminated) {
                return;
            }
            if (inFlight == null && demand > 0 && !queue.isEmpty()) {
                inFlight = queue.poll();
                demand--;
                next = inFlight.bytes();
            } else if (inFlight == null && queue.isEmpty() && closing) {
                terminated = true;
                complete = true;
                if (closeSink != null) {
                    closeSink.success();
                    closeSink = null;
                }
            }
        }
        if (next != null) {
            s.onNext(next);
        } else if (complete) {
            s.onComplete();
        }
    }
}
