package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * The outbound side of a connection. Nothing is queued as frames: connection frames ({@code HELLO}, {@code PING}) wait
 * in a small queue, and each stream with something to send waits once in the queue of ready streams, its pending
 * frames made from its state when the transport asks for bytes. Frames go out in batches of up to {@value #BATCH}
 * bytes, so many small frames cost one write.
 */
final class FrameWriter {
    /** Size a batch of small frames grows to before it is sent. */
    static final int BATCH = 64 * 1024;

    private final AgentConnection conn;
    // guarded by conn.lock
    private final ArrayDeque<AgentStream> ready = new ArrayDeque<>();
    private final ArrayDeque<ByteBuffer> control = new ArrayDeque<>();
    // end guarded
    private volatile FluxSink<ByteBuffer> out;
    private final AtomicInteger wip = new AtomicInteger();

    FrameWriter(AgentConnection conn) {
        this.conn = conn;
    }

    /** The bytes to write, for the transport: what is pending, as it demands. */
    Flux<ByteBuffer> outbound() {
        return Flux.create(
                sink -> {
                    out = sink;
                    sink.onRequest(n -> drain());
                },
                FluxSink.OverflowStrategy.ERROR);
    }

    /** Queues a connection frame; with the lock. */
    void queue(ClientFrame f) {
        control.add(FrameEncoder.encode(f));
    }

    /** Queues a stream that has something to send; with the lock. */
    void markReady(AgentStream st) {
        if (!st.queued) {
            st.queued = true;
            ready.add(st);
        }
    }

    /** Queues a signal for a stream's process; a signal already queued is sent once. */
    void signal(AgentStream st, int signal) {
        if (signal < 1 || signal > 64) {
            throw new IllegalArgumentException("signal must be 1..64, was " + signal);
        }
        synchronized (conn.lock) {
            if (!st.open) {
                return;
            }
            st.signals |= 1L << (signal - 1);
            st.controlFirst |= st.dataPending == null;
            markReady(st);
        }
        drain();
    }

    /** Queues a terminal size for a stream's process; only the last one queued is sent. */
    void resize(AgentStream st, int cols, int rows) {
        if (cols < 1 || cols > 0xFFFF || rows < 1 || rows > 0xFFFF) {
            throw new IllegalArgumentException("terminal size must be 1..65535, was " + cols + "x" + rows);
        }
        synchronized (conn.lock) {
            if (!st.open) {
                return;
            }
            st.resizePending = true;
            st.cols = cols;
            st.rows = rows;
            st.controlFirst |= st.dataPending == null;
            markReady(st);
        }
        drain();
    }

    /** The subscriber consumed an item: its bytes go back to the agent as credit, in steps. */
    void consumed(AgentStream st, int fd, int cost) {
        if (cost <= 0) {
            return;
        }
        synchronized (conn.lock) {
            if (!st.open) {
                return;
            }
            if (!st.window.consumed(fd, cost)) {
                return;
            }
            markReady(st);
        }
        drain();
    }

    /** Drops everything queued; with the lock, when the connection ends. */
    void clear() {
        ready.clear();
        control.clear();
    }

    /** Ends the outbound bytes, when the connection ends. */
    void complete() {
        FluxSink<ByteBuffer> o = out;
        if (o != null) {
            o.complete();
        }
    }

    /** Sends what is pending, as the transport demands, in batches. */
    void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            FluxSink<ByteBuffer> sink = out;
            while (sink != null && sink.requestedFromDownstream() > 0) {
                List<AgentStream> pulls = new ArrayList<>(0);
                ByteBuffer batch;
                synchronized (conn.lock) {
                    batch = conn.closedLocked() ? null : batch(pulls);
                }
                for (AgentStream st : pulls) {
                    DataPump.pull(st, conn.lock);
                }
                if (batch == null) {
                    break;
                }
                sink.next(batch);
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    /** Collects frames up to {@link #BATCH} bytes (or one larger frame); with the lock. */
    private ByteBuffer batch(List<AgentStream> pulls) {
        Batch b = new Batch();
        while (!control.isEmpty()) {
            if (!b.add(control.peek())) {
                return b.build();
            }
            control.poll();
        }
        AgentStream st;
        while ((st = ready.poll()) != null) {
            st.queued = false;
            if (!serialize(st, b, pulls)) {
                st.queued = true;
                ready.addFirst(st);
                break;
            }
        }
        return b.build();
    }

    /** Writes a stream's pending frames; {@code false} when the batch filled first. */
    private boolean serialize(AgentStream st, Batch b, List<AgentStream> pulls) {
        if (st.request != null) {
            if (!b.add(st.request)) {
                return false;
            }
            st.request = null;
            st.requestSent = true;
        }
        if (st.closePending) {
            if (!b.add(FrameEncoder.encode(new ClientFrame.Close(st.id)))) {
                return false;
            }
            st.closePending = false;
            conn.closeSent();
            return true;
        }
        if (!st.open) {
            return true;
        }
        if (st.controlFirst) {
            // a resize or signal asked for before this data was handed over goes first: the call order
            if (!controls(st, b)) {
                return false;
            }
            st.controlFirst = false;
        }
        StreamWindow w = st.window;
        while (st.dataPending != null && w.dataCredit() > 0) {
            int room = b.dataRoom();
            if (room <= 0) {
                return false;
            }
            int n = (int) Math.min(
                    Math.min(st.dataPending.remaining(), w.dataCredit()), Math.min(AgentFrames.MAX_DATA, room));
            ByteBuffer head = ByteBuffer.allocate(AgentFrames.HEADER)
                    .putInt(n)
                    .put((byte) AgentFrames.DATA)
                    .putInt(st.id)
                    .flip();
            ByteBuffer body = st.dataPending.slice(st.dataPending.position(), n);
            st.dataPending.position(st.dataPending.position() + n);
            b.addData(head, body);
            w.dataSent(n);
            if (!st.dataPending.hasRemaining()) {
                st.dataPending = null;
                pulls.add(st);
            }
        }
        if (st.source != null && st.sourceDone && st.dataPending == null && !st.eofSent && st.accepting) {
            if (!b.add(FrameEncoder.encode(new ClientFrame.Eof(st.id)))) {
                return false;
            }
            st.eofSent = true;
        }
        if (!controls(st, b)) {
            return false;
        }
        for (int fd = 0; fd < 3; fd++) {
            long n = w.creditToSend(fd);
            if (n > 0) {
                if (!b.add(FrameEncoder.encode(new ClientFrame.Credit(st.id, fd, n)))) {
                    return false;
                }
                w.creditSent(fd, n);
            }
        }
        return true;
    }

    /** Writes a pending resize and signals; {@code false} when the batch filled first. */
    private static boolean controls(AgentStream st, Batch b) {
        if (st.resizePending) {
            if (!b.add(FrameEncoder.encode(new ClientFrame.Resize(st.id, st.cols, st.rows)))) {
                return false;
            }
            st.resizePending = false;
        }
        while (st.signals != 0) {
            int signal = Long.numberOfTrailingZeros(st.signals) + 1;
            if (!b.add(FrameEncoder.encode(new ClientFrame.Signal(st.id, signal)))) {
                return false;
            }
            st.signals &= ~(1L << (signal - 1));
        }
        return true;
    }

    /** Frames gathered for one write. */
    private static final class Batch {
        private final List<ByteBuffer> parts = new ArrayList<>();
        private int size;

        boolean add(ByteBuffer frame) {
            if (size > 0 && size + frame.remaining() > BATCH) {
                return false;
            }
            parts.add(frame);
            size += frame.remaining();
            return true;
        }

        /** Adds a DATA frame that {@link #dataRoom()} made room for. */
        void addData(ByteBuffer head, ByteBuffer body) {
            parts.add(head);
            parts.add(body);
            size += head.remaining() + body.remaining();
        }

        /** Room for one more DATA payload. */
        int dataRoom() {
            return size == 0 ? AgentFrames.MAX_DATA : BATCH - size - AgentFrames.HEADER;
        }

        ByteBuffer build() {
            if (parts.isEmpty()) {
                return null;
            }
            if (parts.size() == 1) {
                return parts.get(0).duplicate();
            }
            ByteBuffer all = ByteBuffer.allocate(size);
            for (ByteBuffer p : parts) {
                all.put(p.duplicate());
            }
            return all.flip();
        }
    }
}
