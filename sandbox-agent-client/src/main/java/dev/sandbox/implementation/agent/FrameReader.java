package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;

/**
 * The inbound side of a connection: reads the transport continuously (credit bounds what it can bring), decodes the
 * agent's frames and routes each one: stream 0's to the connection, the others to their stream, after charging the
 * stream's {@link StreamWindow}. A frame for an unknown stream is dropped and counted; a malformed frame, one beyond
 * its credit, or a handler that throws ends the connection with an {@link AgentProtocolException}.
 */
final class FrameReader extends BaseSubscriber<ByteBuffer> {
    private final AgentConnection conn;
    private final FrameDecoder<AgentFrame> decoder = FrameDecoder.ofAgent(); // guarded by this

    FrameReader(AgentConnection conn) {
        this.conn = conn;
    }

    /** Bytes the decoder holds between transport buffers (at most one frame). */
    int held() {
        synchronized (this) {
            return decoder.held();
        }
    }

    @Override
    protected void hookOnSubscribe(Subscription s) {
        s.request(1);
    }

    @Override
    protected void hookOnNext(ByteBuffer buf) {
        try {
            synchronized (this) {
                decoder.feed(buf, this::dispatch);
            }
        } catch (AgentProtocolException e) {
            conn.fail(e);
            return;
        } catch (RuntimeException e) {
            conn.fail(new AgentProtocolException("frame handling failed: " + e));
            return;
        }
        request(1);
    }

    @Override
    protected void hookOnComplete() {
        conn.fail(conn.options().lostError().apply(null));
    }

    @Override
    protected void hookOnError(Throwable t) {
        conn.fail(conn.options().lostError().apply(t));
    }

    private void dispatch(AgentFrame f) {
        int length = decoder.lastLength();
        if (f.stream() == 0) {
            connectionFrame(f);
            return;
        }
        if (f instanceof AgentFrame.Accepted a) {
            accepted(a);
            return;
        }
        AgentStream st;
        boolean pull = false;
        synchronized (conn.lock) {
            if (!conn.helloSeenLocked()) {
                throw new AgentProtocolException("expected HELLO first, got " + AgentStream.frameName(f) + " on stream "
                        + Integer.toUnsignedString(f.stream()));
            }
            st = conn.streamLocked(f.stream());
            if (st == null) {
                conn.dropped(length);
                return;
            }
            int fd = 0;
            long cost = 0;
            switch (f) {
                case AgentFrame.Output o -> {
                    fd = o.fd();
                    cost = o.bytes().length;
                }
                case AgentFrame.Data d -> cost = length;
                case AgentFrame.Entry e -> cost = length;
                case AgentFrame.Event e -> cost = length;
                case AgentFrame.Proc p -> cost = length;
                case AgentFrame.Started s -> {
                    st.accepting = true;
                    pull = grantData(st, s.dataCredit());
                }
                case AgentFrame.Ready r -> {
                    st.accepting = true;
                    pull = grantData(st, r.dataCredit());
                }
                case AgentFrame.Credit c -> {
                    if (c.fd() != 0) {
                        throw new AgentProtocolException("CREDIT for fd " + c.fd() + " on stream " + st.id
                                + " (only 0 is for the client's DATA)");
                    }
                    pull = grantData(st, c.bytes());
                }
                default -> {}
            }
            if (!st.window.charge(fd, cost)) {
                throw new AgentProtocolException(AgentStream.frameName(f) + " on stream " + st.id + " carries " + cost
                        + " bytes for fd " + fd + ", beyond its credit of " + st.window.available(fd));
            }
            if (f instanceof AgentFrame.Ok
                    || f instanceof AgentFrame.End
                    || f instanceof AgentFrame.Exit
                    || f instanceof AgentFrame.Error) {
                conn.leave(st);
            }
        }
        if (f instanceof AgentFrame.Credit) {
            if (pull) {
                conn.writer.drain();
            }
            DataPump.pull(st, conn.lock);
            return;
        }
        if (!st.open) {
            DataPump.dispose(st);
        }
        st.handler.onFrame(f, length);
        if (pull) {
            conn.writer.drain();
            DataPump.pull(st, conn.lock);
        }
    }

    /**
     * A connection of a {@code LISTEN} stream, on a stream the agent numbered: handed to the listener, which adopts
     * it into the table; closed at once when the listener is gone (it was closed meanwhile).
     */
    private void accepted(AgentFrame.Accepted a) {
        String id = Integer.toUnsignedString(a.stream());
        if (a.stream() >= 0) { // as a signed int, the agent's ids 2^31 and up are negative
            throw new AgentProtocolException("ACCEPTED on stream " + id + ", below the agent's ids (2^31 and up)");
        }
        AgentStream listener;
        synchronized (conn.lock) {
            if (!conn.helloSeenLocked()) {
                throw new AgentProtocolException("expected HELLO first, got ACCEPTED on stream " + id);
            }
            if (conn.streamLocked(a.stream()) != null) {
                throw new AgentProtocolException("ACCEPTED on stream " + id + ", which is open already");
            }
            listener = conn.streamLocked(a.listenStream());
        }
        if (listener != null && listener.handler instanceof AgentListener.Listening l) {
            l.accepted(a);
        } else {
            AgentStream orphan = new AgentStream(new AgentStream.Handler() {
                @Override
                public void onFrame(AgentFrame f, int payloadLength) {}

                @Override
                public void fail(Throwable t) {}
            });
            if (conn.adopt(orphan, a.stream(), 0, 0)) {
                conn.cancel(orphan); // its listener was closed: the connection is not wanted
            }
        }
    }

    /** The agent takes more of the stream's {@code DATA}; with the lock. */
    private boolean grantData(AgentStream st, long bytes) {
        st.window.grantData(bytes);
        if (st.dataWaiting()) {
            conn.writer.markReady(st);
        }
        return true;
    }

    private void connectionFrame(AgentFrame f) {
        switch (f) {
            case AgentFrame.Hello h -> conn.helloArrived(h.hello());
            case AgentFrame.Pong p -> conn.pongArrived(p.token());
            case AgentFrame.Error e -> {
                if (e.code() == AgentErrnoException.VERSION) {
                    throw new AgentVersionException("no common protocol version: the client speaks "
                            + AgentConnection.MIN_VERSION + ".." + AgentConnection.MAX_VERSION + "; the agent said: "
                            + e.message());
                }
                if (e.code() == AgentErrnoException.BAD_FRAME) {
                    throw new AgentProtocolException("the agent refused a frame of the client: " + e.message());
                }
                conn.fail(new AgentErrnoException("the agent connection", e.code(), e.message()));
            }
            default -> throw new AgentProtocolException("unexpected " + AgentStream.frameName(f) + " on stream 0");
        }
    }
}
