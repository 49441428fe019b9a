package dev.sandbox.implementation.ports;

import java.nio.ByteBuffer;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/** How a provider listens on a port inside a sandbox and hands over each connection (reverse forwards). */
@FunctionalInterface
public interface Listener {

    /**
     * Listens when subscribed; cancelling closes the listener (connections handed out go on until closed).
     *
     * @param port the port on the sandbox's loopback
     * @param maxConnections connections open at once, beyond which one more is closed at once
     * @param listening told once the sandbox listens
     * @return the connections as they are accepted; an error when the sandbox cannot listen
     */
    Flux<Incoming> listen(int port, int maxConnections, Runnable listening);

    /** One connection accepted in the sandbox. */
    interface Incoming {
        /**
         * What the sandbox's client sends; completes at its end of file; cancelling closes the connection.
         *
         * @return the bytes
         */
        Flux<ByteBuffer> received();

        /**
         * Sends bytes to the sandbox's client, read as it takes them; their completion half-closes. Call once.
         *
         * @param bytes the bytes
         */
        void send(Publisher<ByteBuffer> bytes);

        /** Closes the connection. */
        void close();
    }
}
