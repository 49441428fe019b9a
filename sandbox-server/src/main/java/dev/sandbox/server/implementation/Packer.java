package dev.sandbox.server.implementation;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.Operators;

/**
 * Turns a stream's frames into the buffers written to its connection, on the connection's event loop: frames that
 * arrive from other threads are queued (a bounded number, fewer when they are large), and each time the loop runs it
 * frames everything queued into buffers of about {@value #PACK_BYTES} bytes. A fast stream is then written a few
 * large buffers at a time instead of one small write (and one thread hop) per event, and a slow one still gets each
 * event at once.
 */
final class Packer implements Publisher<ByteBuf> {
    static final int PACK_BYTES = 16 * 1024;
    /** Queued frames past which no more are asked for, whatever their number. */
    private static final int MAX_QUEUED_BYTES = 256 * 1024;

    private final Publisher<Http.Frame> source;
    private final Http.Format format;
    private final EventLoop loop;
    private final int prefetch;
    private final Duration heartbeat;

    /**
     * Creates the packer.
     *
     * @param source the frames
     * @param format how frames are written
     * @param loop the connection's event loop
     * @param prefetch the most frames asked for ahead of the connection
     * @param heartbeat how long the stream may stay quiet before a heartbeat is sent
     */
    Packer(Publisher<Http.Frame> source, Http.Format format, EventLoop loop, int prefetch, Duration heartbeat) {
        this.source = source;
        this.format = format;
        this.loop = loop;
        this.prefetch = prefetch;
        this.heartbeat = heartbeat;
    }

    @Override
    public void subscribe(Subscriber<? super ByteBuf> actual) {
        source.subscribe(new Inner(Objects.requireNonNull(actual, "rule 1.9: the subscriber must not be null")));
    }

    private final class Inner implements Subscriber<Http.Frame>, Subscription, Runnable {
        private Subscriber<? super ByteBuf> actual; // drain loop only once subscribed; null once the stream is over
        private final Deque<Http.Frame> queue = new ArrayDeque<>(); // guarded by itself
        private final AtomicLong demand = new AtomicLong();
        private final AtomicInteger wip = new AtomicInteger();
        private Subscription upstream;
        private volatile boolean done;
        private volatile Throwable error;
        private volatile boolean cancelled;
        private volatile IllegalArgumentException invalidRequest;
        private long queuedBytes; // guarded by queue
        private int owed; // drain loop only: frames consumed but not yet asked for again
        private boolean terminated; // drain loop only
        private boolean wroteSinceBeat; // drain loop only
        private volatile boolean beatDue;
        private ScheduledFuture<?> beats;

        Inner(Subscriber<? super ByteBuf> actual) {
            this.actual = actual;
        }

        @Override
        public void onSubscribe(Subscription s) {
            upstream = s;
            long every = heartbeat.toMillis();
            beats = loop.scheduleAtFixedRate(this::tick, every, every, TimeUnit.MILLISECONDS);
            actual.onSubscribe(this);
            s.request(prefetch);
        }

        /** On the event loop, every heartbeat period: a stream that wrote nothing since the last tick gets a beat. */
        private void tick() {
            beatDue = true;
            schedule();
        }

        @Override
        public void onNext(Http.Frame frame) {
            synchronized (queue) {
                queue.add(frame);
                queuedBytes += frame.json().length;
            }
            schedule();
        }

        @Override
        public void onError(Throwable t) {
            error = t;
            done = true;
            schedule();
        }

        @Override
        public void onComplete() {
            done = true;
            schedule();
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                // rule 3.9: the connection broke the protocol; it gets the error and the stream stops
                if (invalidRequest == null) {
                    invalidRequest = new IllegalArgumentException("rule 3.9: a request must be positive, got " + n);
                }
                upstream.cancel();
                schedule();
                return;
            }
            demand.getAndUpdate(d -> Operators.addCap(d, n));
            schedule();
        }

        @Override
        public void cancel() {
            cancelled = true;
            beats.cancel(false);
            upstream.cancel();
        }

        private void schedule() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            if (loop.inEventLoop()) {
                run();
            } else {
                loop.execute(this);
            }
        }

        /** The drain loop; runs on the event loop only. */
        @Override
        public void run() {
            int missed = 1;
            do {
                drain();
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }

        private void drain() {
            if (cancelled || terminated) {
                forget();
                return;
            }
            IllegalArgumentException invalid = invalidRequest;
            if (invalid != null) {
                terminated = true;
                beats.cancel(false);
                Subscriber<? super ByteBuf> a = actual;
                forget();
                a.onError(invalid);
                return;
            }
            while (!terminated && !cancelled) {
                boolean finished = done;
                byte[] packed = null;
                int taken = 0;
                long queued;
                if (demand.get() > 0) {
                    synchronized (queue) {
                        int size = 0;
                        for (Http.Frame f : queue) {
                            int n = Http.frameSize(f, format);
                            if (taken > 0 && size + n > PACK_BYTES) {
                                break;
                            }
                            size += n;
                            taken++;
                        }
                        if (taken > 0) {
                            packed = new byte[size];
                            int pos = 0;
                            for (int i = 0; i < taken; i++) {
                                Http.Frame f = queue.poll();
                                queuedBytes -= f.json().length;
                                pos = Http.writeFrame(f, format, packed, pos);
                            }
                        }
                    }
                }
                if (packed == null && beatDue && demand.get() > 0) {
                    beatDue = false;
                    if (!wroteSinceBeat) {
                        Http.Frame beat = Http.heartbeatFrame();
                        packed = new byte[Http.frameSize(beat, format)];
                        Http.writeFrame(beat, format, packed, 0);
                    }
                    wroteSinceBeat = false;
                    if (packed == null) {
                        continue;
                    }
                } else if (packed != null) {
                    wroteSinceBeat = true;
                }
                if (packed != null) {
                    demand.decrementAndGet();
                    owed += taken;
                    actual.onNext(Unpooled.wrappedBuffer(packed));
                    synchronized (queue) {
                        queued = queuedBytes;
                    }
                    if (queued < MAX_QUEUED_BYTES && owed > 0) {
                        int n = owed;
                        owed = 0;
                        upstream.request(n);
                    }
                    continue;
                }
                boolean empty;
                synchronized (queue) {
                    empty = queue.isEmpty();
                    queued = queuedBytes;
                }
                if (queued < MAX_QUEUED_BYTES && owed > 0) {
                    int n = owed;
                    owed = 0;
                    upstream.request(n);
                }
                if (finished && empty) {
                    terminated = true;
                    beats.cancel(false);
                    Subscriber<? super ByteBuf> a = actual;
                    forget();
                    Throwable e = error;
                    if (e != null) {
                        a.onError(e);
                    } else {
                        a.onComplete();
                    }
                }
                return;
            }
            if (cancelled) {
                forget();
            }
        }

        /** Drops the subscriber and what was queued for it, once the stream is over (drain loop only). */
        private void forget() {
            actual = null;
            synchronized (queue) {
                queue.clear();
                queuedBytes = 0;
            }
        }
    }
}
