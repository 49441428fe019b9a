package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import java.util.Objects;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/**
 * {@code LISTEN}'s connections ({@link AgentNetOps#listen}): a listener on the sandbox's loopback whose every accepted
 * connection the agent carries on a stream it numbered ({@code ACCEPTED}), credited both ways as a {@code CONNECT}
 * stream is.
 */
public final class AgentListener {
    private AgentListener() {}

    /** The handler of a {@code LISTEN} stream: the reader hands it each {@code ACCEPTED}. */
    interface Listening extends AgentStream.Handler {
        /**
         * A connection was accepted in the sandbox; on the reader's thread, before any later frame.
         *
         * @param a the frame
         */
        void accepted(AgentFrame.Accepted a);
    }

    /**
     * One connection accepted in the sandbox. Its bytes toward the host are read as {@link #received()} is read; what
     * {@link #send} is given goes to the sandbox's client within the agent's credit.
     */
    public static final class Accepted {
        private final AgentConnection conn;
        private final Received received;
        private final int peerPort;

        Accepted(AgentConnection conn, Received received, int peerPort) {
            this.conn = conn;
            this.received = received;
            this.peerPort = peerPort;
        }

        /**
         * The sandbox's client's port on its loopback.
         *
         * @return the port
         */
        public int peerPort() {
            return peerPort;
        }

        /**
         * What the sandbox's client sends, in chunks of at most 64 KiB; completes at its end of file, fails with
         * {@link AgentErrnoException} on a reset; cancelling closes the connection. Subscribe once.
         *
         * @return the bytes
         */
        public Flux<ByteBuffer> received() {
            return received;
        }

        /**
         * Sends bytes to the sandbox's client, read only as the agent takes them; their completion shuts the
         * socket's sending side. Call once.
         *
         * @param bytes the bytes
         */
        public void send(Publisher<ByteBuffer> bytes) {
            conn.feed(received.st, Objects.requireNonNull(bytes, "bytes"));
        }

        /** Closes the connection (the sandbox's client sees its end). */
        public void close() {
            conn.cancel(received.st);
        }
    }

    /** The bytes of an accepted connection: a stream the agent opened, adopted rather than requested. */
    static final class Received extends ItemStream<ByteBuffer> {
        Received(AgentConnection conn, String what) {
            super(conn, what, AgentNetOps.CONNECT_WINDOW, 0);
        }

        @Override
        ClientFrame request(int id) {
            throw new IllegalStateException(what + " was opened by the agent");
        }

        @Override
        boolean beforeOpen() {
            return false; // adopted when ACCEPTED came
        }

        @Override
        ByteBuffer map(Item it) {
            return ByteBuffer.wrap(it.buf, 0, it.len);
        }

        @Override
        public void onFrame(AgentFrame f, int len) {
            switch (f) {
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
    }
}
