package dev.sandbox.implementation.docker;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.Connection;

/**
 * One connection to a session's agent over its direct channel ({@link AgentChannels}): frames go straight between
 * this JVM and the agent's socket, without the daemon's exec stream or a relay process. The connection is read only
 * while the subscriber has demand (reactor-netty stops reading the socket without it), so a slow reader fills the
 * socket and the agent's credit does the rest. What the agent sends is read as hostile by the connection above, as on
 * the relay.
 */
final class DirectAgentTransport {
    private static final Logger LOG = LoggerFactory.getLogger(DirectAgentTransport.class);

    private DirectAgentTransport() {}

    /**
     * Runs the pipe on a connected channel socket; see {@link dev.sandbox.implementation.agent.AgentTransport#open}.
     *
     * @param conn the connection, closed when the returned flux ends or is cancelled
     * @param outbound the bytes to write; its end half-closes the connection
     * @param sessionId the session, for logs
     * @return the bytes that arrive
     */
    static Flux<ByteBuffer> open(Connection conn, Flux<ByteBuffer> outbound, String sessionId) {
        return Flux.usingWhen(
                Mono.just(conn),
                c -> {
                    Disposable pump = c.outbound()
                            .send(outbound.map(Unpooled::wrappedBuffer))
                            .then()
                            .onErrorResume(e -> {
                                LOG.debug("writing to the agent of session {} ended: {}", sessionId, e.toString());
                                return Mono.empty();
                            })
                            .then(Mono.defer(() -> DockerDataPlane.shutdownOutput(c)))
                            .subscribe();
                    return c.inbound().receive().map(ByteBuf::nioBuffer).doFinally(s -> pump.dispose());
                },
                c -> Mono.fromRunnable(c::dispose));
    }
}
