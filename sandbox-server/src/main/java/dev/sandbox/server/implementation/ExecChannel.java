package dev.sandbox.server.implementation;

import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.implementation.exec.Framed;
import dev.sandbox.implementation.wire.ErrorBodies;
import dev.sandbox.implementation.wire.LineBatch;
import dev.sandbox.implementation.wire.StreamFrames;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;

/**
 * One streaming exec on the server, resumable after a dropped connection.
 *
 * <p>The command's events (from the session's own {@code exec}, with its demand) are encoded once and kept in a
 * window, in order, until the client acknowledges them by the offsets of the last line it delivered on each stream.
 * Runs of whole lines of one stream are kept as one {@link LineBatch} (made by the session itself when it is a
 * {@link dev.sandbox.implementation.exec.BatchedExec}, else joined here line by line), sent as one frame, and
 * acknowledged or resumed from any of their lines.
 * A sender (one HTTP response at a time) reads the window from any position. When a connection drops, a new request
 * with the client's last offsets drops what they cover and sends the rest again, so nothing is lost or repeated.
 *
 * <p>Backpressure: the window holds at most about {@code windowBytes} of unacknowledged events; more events are asked
 * of the command only when there is room, so a client that stops reading (or acknowledging) stops the command, which
 * then waits in {@code write} like on a full pipe. The sender writes only what the connection asks for.
 *
 * <p>A channel nobody is attached to for {@code resumeTimeout} is released, which kills its command if it still runs;
 * so is one whose client sends {@code DELETE} (a cancel, or the end of the stream).
 */
public final class ExecChannel {
    private static final int STDOUT = 0;
    private static final int STDERR = 1;
    private static final int OTHER = 2;
    /** The most events asked of the command at once. */
    private static final int MAX_REQUEST = 256;

    /**
     * One entry of the window: an encoded event, or a batch of whole lines of one stream (see {@link LineBatch})
     * that takes more lines until a sender reads it.
     */
    private static final class Entry {
        final byte[] json; // null for a batch
        final int stream;
        final long offset; // a line's offset; a batch's first line's
        final String type;
        final LineBatch batch;

        Entry(byte[] json, int stream, long offset, String type) {
            this.json = json;
            this.stream = stream;
            this.offset = offset;
            this.type = type;
            this.batch = null;
        }

        Entry(LineBatch batch) {
            this.json = null;
            this.stream = batch.stdout() ? STDOUT : STDERR;
            this.offset = batch.firstOffset();
            this.type = "lines";
            this.batch = batch;
        }

        /** The offset of the entry's last line. */
        long last() {
            return batch != null ? batch.lastOffset() : offset;
        }

        int bytes() {
            return batch != null ? batch.textBytes() : json.length;
        }
    }

    private final String id;
    private final String sessionId;
    private final int windowLimit;
    private final long perEventBound;
    private final Duration resumeTimeout;
    private final Runnable onTerminal;
    private final Runnable onRelease;
    private final AtomicBoolean terminalSignalled = new AtomicBoolean();
    private final Upstream upstream = new Upstream();

    // the window, a ring of entries addressed by sequence number; guarded by this
    private Entry[] ring = new Entry[64];
    private int head;
    private int size;
    private long headSeq;
    private long windowBytes;
    private long outstanding;
    private boolean terminal;
    private boolean released;
    private long ackedStdout = -1;
    private long ackedStderr = -1;
    private Sender sender;
    private Disposable detachTimer;

    /**
     * Creates a channel; {@link #start} subscribes to the command.
     *
     * @param id the exec id the client chose
     * @param sessionId the session it runs in
     * @param windowLimit the most unacknowledged bytes kept
     * @param maxLineLength the command's longest line, which bounds one event
     * @param resumeTimeout how long the channel waits for a client to reattach
     * @param onTerminal run once when the command has ended (frees its slot)
     * @param onRelease run once when the channel is released (removes it from the registry)
     */
    ExecChannel(
            String id,
            String sessionId,
            int windowLimit,
            int maxLineLength,
            Duration resumeTimeout,
            Runnable onTerminal,
            Runnable onRelease) {
        this.id = id;
        this.sessionId = sessionId;
        this.windowLimit = windowLimit;
        // an item is a line event, or a batch of lines (whose text stops growing past LineBatch.MAX_TEXT_BYTES
        // with one more line)
        this.perEventBound = maxLineLength + 64L + LineBatch.MAX_TEXT_BYTES;
        this.resumeTimeout = resumeTimeout;
        this.onTerminal = onTerminal;
        this.onRelease = onRelease;
    }

    String id() {
        return id;
    }

    String sessionId() {
        return sessionId;
    }

    /**
     * Subscribes to the command's events.
     *
     * @param events the session's exec stream
     */
    void start(Flux<Framed<LineBatch>> events) {
        events.subscribe(upstream);
    }

    /** The window size a client should acknowledge against. */
    int windowLimit() {
        return windowLimit;
    }

    // ------------------------------------------------------------------ window

    private Entry get(long seq) {
        return ring[(int) ((head + (seq - headSeq)) % ring.length)];
    }

    private void append(Entry e) {
        if (size == ring.length) {
            Entry[] bigger = new Entry[ring.length * 2];
            for (int i = 0; i < size; i++) {
                bigger[i] = ring[(head + i) % ring.length];
            }
            ring = bigger;
            head = 0;
        }
        ring[(head + size) % ring.length] = e;
        size++;
        windowBytes += e.bytes();
    }

    private void dropHead() {
        Entry e = ring[head];
        ring[head] = null;
        head = (head + 1) % ring.length;
        size--;
        headSeq++;
        windowBytes -= e.bytes();
    }

    /** Drops the entries the client has delivered; called with the lock held. */
    private void dropAcked() {
        while (size > 0) {
            Entry e = ring[head];
            boolean covered =
                    (e.stream == STDOUT && e.last() <= ackedStdout) || (e.stream == STDERR && e.last() <= ackedStderr);
            if (!covered) {
                return;
            }
            dropHead();
        }
    }

    /**
     * Records what the client has delivered and frees that part of the window.
     *
     * @param stdout the offset of the last stdout line delivered, or -1
     * @param stderr the offset of the last stderr line delivered, or -1
     */
    void ack(long stdout, long stderr) {
        synchronized (this) {
            ackedStdout = Math.max(ackedStdout, stdout);
            ackedStderr = Math.max(ackedStderr, stderr);
            dropAcked();
        }
        requestMore();
    }

    private void requestMore() {
        long n;
        synchronized (this) {
            n = toRequest();
        }
        if (n > 0) {
            upstream.request(n);
        }
    }

    /** How many more events to ask the command for now (counted as outstanding); called with the lock held. */
    private long toRequest() {
        if (terminal || released) {
            return 0;
        }
        long room = windowLimit - windowBytes;
        // events that fit in the room left, counting each at its largest size
        long batch = Math.min(MAX_REQUEST, room / perEventBound);
        if (batch <= 0) {
            if (outstanding > 0 || room <= 0) {
                return 0;
            }
            batch = 1; // one event at a time when events may be larger than the room left
        }
        // ask again only when half of the last batch has come: one request per many events
        if (outstanding > batch / 2) {
            return 0;
        }
        long n = batch - outstanding;
        outstanding += n;
        return n;
    }

    /** Adds a line to the open batch at the window's end, or starts one; called with the lock held. */
    private boolean appendLine(ExecEvent.Line line) {
        if (size > 0) {
            Entry tail = get(headSeq + size - 1);
            if (tail.batch != null) {
                int before = tail.batch.textBytes();
                if (tail.batch.append(line)) {
                    windowBytes += tail.batch.textBytes() - before;
                    return true;
                }
            }
        }
        LineBatch fresh = LineBatch.of(line);
        if (fresh == null) {
            return false;
        }
        append(new Entry(fresh));
        return true;
    }

    // ------------------------------------------------------------------ the command

    private final class Upstream extends BaseSubscriber<Framed<LineBatch>> {
        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            requestMore();
        }

        @Override
        protected void hookOnNext(Framed<LineBatch> item) {
            boolean exit = item instanceof Framed.Event<LineBatch>(ExecEvent.Exit x);
            Sender s;
            long n;
            synchronized (ExecChannel.this) {
                outstanding--;
                if (released) {
                    return;
                }
                // whole lines join the open batch (no encoding of their own); anything else is encoded once
                switch (item) {
                    case Framed.Run<LineBatch> run -> append(new Entry(run.run())); // a batch the reader made
                    case Framed.Event<LineBatch>(ExecEvent.Line line) when appendLine(line) -> {}
                    case Framed.Event<LineBatch>(ExecEvent.Stdout l) ->
                        append(new Entry(StreamFrames.event(l), STDOUT, l.offset(), "stdout"));
                    case Framed.Event<LineBatch>(ExecEvent.Stderr l) ->
                        append(new Entry(StreamFrames.event(l), STDERR, l.offset(), "stderr"));
                    case Framed.Event<LineBatch>(ExecEvent.Chunk c) ->
                        append(new Entry(
                                StreamFrames.event(c),
                                c.stream() == ExecEvent.StreamKind.STDOUT ? STDOUT : STDERR,
                                c.offset(),
                                "chunk"));
                    case Framed.Event<LineBatch>(ExecEvent.Exit x) ->
                        append(new Entry(StreamFrames.event(x), OTHER, -1, "exit"));
                }
                terminal |= exit;
                s = sender;
                n = toRequest();
            }
            if (exit) {
                terminated();
            } else if (n > 0) {
                upstream.request(n);
            }
            if (s != null) {
                s.signal();
            }
        }

        @Override
        protected void hookOnError(Throwable t) {
            end(new Entry(ErrorBodies.errorEvent(ErrorMapping.body(t)), OTHER, -1, "error"));
        }

        @Override
        protected void hookOnComplete() {
            synchronized (ExecChannel.this) {
                if (terminal) {
                    return;
                }
            }
            end(new Entry(
                    ErrorBodies.errorEvent(ErrorMapping.body(
                            new BackendException("the command's stream ended without an exit", null))),
                    OTHER,
                    -1,
                    "error"));
        }

        private void end(Entry entry) {
            Sender s;
            synchronized (ExecChannel.this) {
                if (terminal || released) {
                    return;
                }
                append(entry);
                terminal = true;
                s = sender;
            }
            terminated();
            if (s != null) {
                s.signal();
            }
        }
    }

    private void terminated() {
        if (terminalSignalled.compareAndSet(false, true)) {
            onTerminal.run();
        }
    }

    // ------------------------------------------------------------------ senders

    /**
     * Attaches a new sender that replays the window after the client's last offsets, replacing any earlier one.
     *
     * @param afterStdout the offset of the last stdout line the client delivered, or -1
     * @param afterStderr the offset of the last stderr line the client delivered, or -1
     * @param format the framing
     * @param lineFrames whether the client reads {@code lines} frames (else each line is its own event)
     * @param loop the connection's event loop, where the sender reads the window
     * @return the body to send
     */
    Publisher<Http.Frame> attach(
            long afterStdout, long afterStderr, Http.Format format, boolean lineFrames, Executor loop) {
        Sender old;
        Sender fresh;
        synchronized (this) {
            if (released) {
                throw new HttpError(404, "ExecNotFound", "exec " + id + " has ended and was released");
            }
            if (afterStdout < ackedStdout || afterStderr < ackedStderr) {
                throw new HttpError(
                        416,
                        "ExecOffsetUnavailable",
                        "exec " + id + " was acknowledged up to stdout " + ackedStdout + " and stderr " + ackedStderr
                                + "; it cannot resume from stdout " + afterStdout + ", stderr " + afterStderr);
            }
            ackedStdout = afterStdout;
            ackedStderr = afterStderr;
            dropAcked();
            old = sender;
            fresh = new Sender(headSeq, afterStdout, afterStderr, format, lineFrames, loop);
            sender = fresh;
            if (detachTimer != null) {
                detachTimer.dispose();
                detachTimer = null;
            }
        }
        if (old != null) {
            old.replaced();
        }
        requestMore();
        return fresh;
    }

    private void detached(Sender s) {
        synchronized (this) {
            if (sender != s || released) {
                return;
            }
            sender = null;
            if (detachTimer != null) {
                detachTimer.dispose();
            }
            detachTimer = Schedulers.parallel()
                    .schedule(this::expireIfDetached, resumeTimeout.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void expireIfDetached() {
        synchronized (this) {
            if (sender != null || released) {
                return;
            }
        }
        release();
    }

    /** Ends the channel: kills the command if it still runs, closes any sender and forgets the window. */
    void release() {
        Sender s;
        synchronized (this) {
            if (released) {
                return;
            }
            released = true;
            s = sender;
            sender = null;
            ring = new Entry[1];
            head = 0;
            size = 0;
            windowBytes = 0;
            if (detachTimer != null) {
                detachTimer.dispose();
                detachTimer = null;
            }
        }
        upstream.dispose();
        terminated();
        if (s != null) {
            s.replaced();
        }
        onRelease.run();
    }

    /** Whether the command has ended. */
    synchronized boolean ended() {
        return terminal;
    }

    /**
     * One HTTP response reading the window from a position, as fast as the connection asks, on the connection's event
     * loop. It emits the window's own encoded events (no copies) and one frame per batch of lines: a {@code lines}
     * frame for a client that asked for them, else the batch's line events written out in the stream's format. A
     * batch is sealed when it is read, so lines that arrive while the loop is busy are sent together. The
     * connection's {@link Packer} frames them into buffers.
     */
    private final class Sender implements Publisher<Http.Frame>, Subscription, Runnable {
        private final Http.Format format;
        private final boolean lineFrames;
        private final Executor loop;
        private final AtomicLong demand = new AtomicLong();
        private final AtomicInteger wip = new AtomicInteger();
        private final AtomicBoolean subscribed = new AtomicBoolean();
        private volatile Subscriber<? super Http.Frame> subscriber; // set once onSubscribe returned; null when over
        private volatile boolean cancelled;
        private volatile IllegalArgumentException invalidRequest;
        private volatile boolean stop;
        private long nextSeq; // drain loop only
        private long lastStdout; // drain loop only: the last line sent on each stream (and the SSE id)
        private long lastStderr;
        private boolean done; // drain loop only
        private final Entry[] batch = new Entry[16]; // drain loop only

        Sender(
                long fromSeq,
                long afterStdout,
                long afterStderr,
                Http.Format format,
                boolean lineFrames,
                Executor loop) {
            this.nextSeq = fromSeq;
            this.lastStdout = afterStdout;
            this.lastStderr = afterStderr;
            this.format = format;
            this.lineFrames = lineFrames;
            this.loop = loop;
        }

        @Override
        public void subscribe(Subscriber<? super Http.Frame> s) {
            if (!subscribed.compareAndSet(false, true)) {
                Operators.error(s, new IllegalStateException("an exec sender has one subscriber"));
                return;
            }
            s.onSubscribe(this);
            // rule 1.3: no onNext from the loop while onSubscribe still runs, so the loop starts only now
            subscriber = s;
            signal();
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                // rule 3.9: the connection broke the protocol; it gets the error, and the client may resume
                if (invalidRequest == null) {
                    invalidRequest = new IllegalArgumentException("rule 3.9: a request must be positive, got " + n);
                }
            } else {
                demand.getAndUpdate(d -> Operators.addCap(d, n));
            }
            signal();
        }

        @Override
        public void cancel() {
            cancelled = true;
            detached(this);
            try {
                signal(); // the loop forgets the subscriber (rule 3.13)
            } catch (RejectedExecutionException loopGone) {
                subscriber = null; // the connection's loop has stopped: nothing emits any more
            }
        }

        /** Another request took over (or the channel was released): end this response. */
        void replaced() {
            stop = true;
            signal();
        }

        /** Something changed: read the window on the event loop (once, however many signals come meanwhile). */
        void signal() {
            if (subscriber == null || wip.getAndIncrement() != 0) {
                return;
            }
            loop.execute(this);
        }

        @Override
        public void run() {
            int missed = 1;
            do {
                emit();
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }

        private void emit() {
            Subscriber<? super Http.Frame> s = subscriber;
            if (s == null) {
                return;
            }
            if (cancelled) {
                subscriber = null;
                return;
            }
            IllegalArgumentException invalid = invalidRequest;
            if (invalid != null && !done) {
                done = true;
                subscriber = null;
                detached(this);
                s.onError(invalid);
                return;
            }
            while (!done && !cancelled) {
                if (stop) {
                    // taken over by a newer request, or released: end this response early; a client still reading
                    // it sees the stream end before the exit and reconnects (or learns the exec is gone)
                    done = true;
                    subscriber = null;
                    s.onComplete();
                    return;
                }
                long wanted = demand.get();
                if (wanted == 0) {
                    return;
                }
                int count;
                boolean complete;
                synchronized (ExecChannel.this) {
                    if (nextSeq < headSeq) {
                        nextSeq = headSeq; // acknowledged meanwhile: nothing to resend
                    }
                    long available = headSeq + size - nextSeq;
                    complete = available == 0 && terminal;
                    count = (int) Math.min(Math.min(available, wanted), batch.length);
                    for (int i = 0; i < count; i++) {
                        Entry e = get(nextSeq + i);
                        if (e.batch != null) {
                            e.batch.seal(); // read now: later lines start a new batch
                        }
                        batch[i] = e;
                    }
                    nextSeq += count;
                }
                if (complete) {
                    done = true;
                    subscriber = null;
                    s.onComplete();
                    detached(this);
                    return;
                }
                if (count == 0) {
                    return;
                }
                int sent = 0;
                for (int i = 0; i < count; i++) {
                    Entry e = batch[i];
                    batch[i] = null;
                    Http.Frame f = frame(e);
                    if (f != null) {
                        sent++;
                        s.onNext(f);
                    }
                }
                demand.addAndGet(-sent);
            }
        }

        /** The frame of an entry, or {@code null} when the client has all of it (a resume within a batch). */
        private Http.Frame frame(Entry e) {
            boolean sse = format == Http.Format.SSE;
            if (e.batch != null) {
                LineBatch b = e.batch;
                long after = e.stream == STDOUT ? lastStdout : lastStderr;
                if (b.lastOffset() <= after) {
                    return null;
                }
                Http.Frame f;
                if (lineFrames) {
                    byte[] json = b.frame(after);
                    advance(e.stream, b.lastOffset());
                    f = new Http.Frame("lines", json, sse ? lastStdout + ":" + lastStderr : null);
                } else {
                    f = Http.Frame.raw(expand(b, after, e.stream));
                }
                return f;
            }
            if (e.stream == OTHER) {
                return new Http.Frame(e.type, e.json, null);
            }
            if (e.offset <= (e.stream == STDOUT ? lastStdout : lastStderr)) {
                return null;
            }
            advance(e.stream, e.offset);
            return new Http.Frame(e.type, e.json, sse ? lastStdout + ":" + lastStderr : null);
        }

        private void advance(int stream, long offset) {
            if (stream == STDOUT) {
                lastStdout = offset;
            } else {
                lastStderr = offset;
            }
        }

        /** A batch's lines after {@code after} as separate line events, framed for this response. */
        private byte[] expand(LineBatch b, long after, int stream) {
            StreamFrames.Bytes out = new StreamFrames.Bytes(b.textBytes() + 64 * Math.max(1, b.lines()));
            boolean sse = format == Http.Format.SSE;
            String type = stream == STDOUT ? "stdout" : "stderr";
            b.forEachLine(after, (offset, next, text, from, to) -> {
                advance(stream, offset);
                if (sse) {
                    out.ascii("id: " + lastStdout + ":" + lastStderr + "\nevent: " + type + "\ndata: ");
                }
                StreamFrames.lineEvent(out, stream == STDOUT, offset, next, text, from, to);
                out.ascii(sse ? "\n\n" : "\n");
            });
            return out.toByteArray();
        }
    }
}
