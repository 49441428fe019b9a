package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import java.util.Objects;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * The network operations of one {@link AgentConnection} ({@link AgentConnection#net()}): a TCP connection from the
 * agent to a port on the sandbox's loopback, carried on a stream ({@code CONNECT}, PROTOCOL.md), with the agent's
 * credit in both directions.
 */
public final class AgentNetOps {
    /**
     * The credit of a connection's bytes toward the client: what a client that stops reading may leave queued here,
     * per connection.
     */
    public static final int CONNECT_WINDOW = 256 * 1024;

    private final AgentConnection conn;

    AgentNetOps(AgentConnection conn) {
        this.conn = conn;
    }

    /**
     * Connects to a port inside the sandbox when subscribed.
     *
     * @param port 1 to 65535
     * @param toServer the bytes to send, fed within the agent's credit once connected; its completion shuts the
     *     socket's sending side
     * @return what the server sends, in chunks of at most 64 KiB, completing at its end of file; {@link
     *     AgentErrnoException} when the connect fails ({@code ECONNREFUSED} when nothing listens) or the connection
     *     breaks; cancelling closes the socket in the sandbox
     */
    public Flux<ByteBuffer> connect(int port, Publisher<ByteBuffer> toServer) {
        Objects.requireNonNull(toServer, "toServer");
        if (port < 1 || port > 65535) {
            return Flux.error(new IllegalArgumentException("port must be within 1..65535, was " + port));
        }
        String what = "connect to port " + port;
        ItemStream<ByteBuffer> s = new ItemStream<ByteBuffer>(conn, what, CONNECT_WINDOW, 0) {
            @Override
            ClientFrame request(int sid) {
                return new ClientFrame.Connect(sid, port, CONNECT_WINDOW);
            }

            @Override
            ByteBuffer map(Item it) {
                return ByteBuffer.wrap(it.buf, 0, it.len);
            }

            @Override
            public void onFrame(AgentFrame f, int len) {
                switch (f) {
                    case AgentFrame.Ready r -> {}
                    case AgentFrame.Data d -> {
                        if (d.bytes().length > 0) {
                            push(Item.chunk(0, 0, d.bytes()));
                        }
                    }
                    case AgentFrame.End e -> complete();
                    case AgentFrame.Error e -> fault(new AgentErrnoException(what, e.code(), e.message()));
                    default -> throw AgentStream.unexpected(f, what);
                }
            }
        };
        s.st.source = toServer;
        return s;
    }

    /**
     * Listens on a port of the sandbox's loopback when subscribed; each connection accepted there is one {@link
     * AgentListener.Accepted}, whose bytes the agent carries. Cancelling closes the listener (connections already
     * handed out go on until closed).
     *
     * @param port 1 to 65535
     * @param maxConns connections open at once, 1 to 1024 (the agent closes one more at once)
     * @param listening told once the agent listens
     * @return the connections; {@link AgentErrnoException} when the agent cannot listen ({@code EADDRINUSE} ...)
     */
    public Flux<AgentListener.Accepted> listen(int port, int maxConns, Runnable listening) {
        Objects.requireNonNull(listening, "listening");
        if (port < 1 || port > 65535) {
            return Flux.error(new IllegalArgumentException("port must be within 1..65535, was " + port));
        }
        if (maxConns < 1 || maxConns > 1024) {
            return Flux.error(new IllegalArgumentException("maxConns must be within 1..1024, was " + maxConns));
        }
        String what = "listen on port " + port;
        return Flux.create(
                sink -> {
                    AgentListener.Listening handler = new AgentListener.Listening() {
                        @Override
                        public void onFrame(AgentFrame f, int len) {
                            switch (f) {
                                case AgentFrame.Ready r -> listening.run();
                                case AgentFrame.Error e ->
                                    sink.error(new AgentErrnoException(what, e.code(), e.message()));
                                default -> throw AgentStream.unexpected(f, what);
                            }
                        }

                        @Override
                        public void fail(Throwable t) {
                            sink.error(t);
                        }

                        @Override
                        public void accepted(AgentFrame.Accepted a) {
                            AgentListener.Received r = new AgentListener.Received(
                                    conn, "connection " + Integer.toUnsignedString(a.stream()) + " to port " + port);
                            if (conn.adopt(r.st, a.stream(), CONNECT_WINDOW, a.dataCredit())) {
                                if (sink.isCancelled()) {
                                    conn.cancel(r.st); // the listener was closed: nobody takes it
                                } else {
                                    sink.next(new AgentListener.Accepted(conn, r, a.peerPort()));
                                }
                            }
                        }
                    };
                    AgentStream st = new AgentStream(handler);
                    sink.onDispose(() -> conn.cancel(st));
                    Throwable e =
                            conn.open(st, sid -> new ClientFrame.Listen(sid, port, CONNECT_WINDOW, maxConns), 0, 0);
                    if (e != null) {
                        sink.error(e);
                    }
                },
                // at most maxConns connections are open at once, and each is handed on as it comes
                reactor.core.publisher.FluxSink.OverflowStrategy.BUFFER);
    }
}
