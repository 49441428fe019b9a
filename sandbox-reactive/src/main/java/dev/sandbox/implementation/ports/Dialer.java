package dev.sandbox.implementation.ports;

import java.nio.ByteBuffer;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

/** How a provider reaches a TCP port inside a sandbox: one connection per call. */
@FunctionalInterface
public interface Dialer {

    /**
     * Opens a connection to a port on the sandbox's loopback when subscribed.
     *
     * @param port the port inside the sandbox
     * @param toSandbox the bytes to send, subscribed once the connection is up and read as the sandbox takes them;
     *     its completion ends the sending side (a half-close)
     * @return what the sandbox's server sends, completing at its end of file; an error when the connection cannot be
     *     made or breaks; cancelling closes the connection
     */
    Flux<ByteBuffer> dial(int port, Publisher<ByteBuffer> toSandbox);
}
