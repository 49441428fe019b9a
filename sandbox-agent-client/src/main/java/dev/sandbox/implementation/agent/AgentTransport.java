package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import reactor.core.publisher.Flux;

/**
 * A reliable duplex byte pipe to one agent connection: the stdin and stdout of {@code sandbox-agent relay} in a
 * container, a local {@code sandbox-agent stdio} child, or an in-memory fake.
 */
@FunctionalInterface
public interface AgentTransport {

    /**
     * Starts the pipe. Everything {@code outbound} emits is written in order (the transport requests from it as it
     * can write; the buffers become the transport's). The returned flux emits what arrives, as demanded by its
     * subscriber: the client reads each buffer during {@code onNext} only and keeps no reference to it. It completes
     * when the peer closes its side, errors when the pipe breaks; cancelling it closes the pipe.
     *
     * @param outbound the bytes to write
     * @return the bytes that arrive
     */
    Flux<ByteBuffer> open(Flux<ByteBuffer> outbound);
}
