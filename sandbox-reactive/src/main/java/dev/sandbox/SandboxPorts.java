package dev.sandbox;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The ports of a session, from {@link SandboxSession#ports()}: forwards from the host to TCP servers inside the
 * sandbox. A forward belongs to the handle that opened it: closing that handle, or the end of the session, closes it.
 *
 * <p>What a forward reaches is the sandbox's loopback ({@code 127.0.0.1} inside it): a server listening there, or on
 * every address, is reached; one listening only on another interface is not. On the local provider, whose commands
 * run on the host, that is the host's loopback.
 *
 * <pre>{@code
 * session.start(ExecOptions.shell("busybox httpd -f -p 8080 -h /srv")).block();
 * PortForward forward = session.ports().forward(8080).block();
 * // http://127.0.0.1:<forward.localAddress().getPort()>/ now serves the sandbox's /srv
 * }</pre>
 *
 * <p>A provider that cannot forward ports fails {@link #forward} with {@link UnsupportedFeatureException}.
 */
public interface SandboxPorts {

    /**
     * Forwards a port on the host's loopback (a free one the system picks) to a port inside the sandbox.
     *
     * @param sandboxPort the port inside the sandbox, 1 to 65535
     * @return the open forward; {@link InvalidArgumentException} for a port out of range, {@link
     *     SessionClosedException} after the handle or session ended
     */
    default Mono<PortForward> forward(int sandboxPort) {
        return Mono.defer(() -> forward(PortForwardOptions.to(sandboxPort)));
    }

    /**
     * Opens a port forward.
     *
     * @param options the port inside the sandbox and where the forward listens on the host
     * @return the open forward; a {@link SandboxException} when the host port cannot be bound (naming the address),
     *     {@link SessionClosedException} after the handle or session ended
     */
    Mono<PortForward> forward(PortForwardOptions options);

    /**
     * Opens one TCP connection to a port on the sandbox's loopback, without a host listener: the reactive form of a
     * forward's connection, for code that speaks a protocol itself (or relays it, as {@code sandbox serve} does).
     * Bytes flow with backpressure both ways: {@code toServer} is read only as the connection takes it, and the
     * server's bytes are read from the sandbox only as the subscriber asks.
     *
     * <pre>{@code
     * String reply = session.ports()
     *     .connect(6379, Flux.just(ByteBuffer.wrap("PING\r\n".getBytes(US_ASCII))))
     *     .map(b -> US_ASCII.decode(b).toString())
     *     .blockFirst();
     * }</pre>
     *
     * @param sandboxPort the port inside the sandbox, 1 to 65535
     * @param toServer the bytes to send, subscribed once the connection is up; its completion ends the sending side
     *     (a half-close: the server sees end of file and may still answer)
     * @return what the server sends, completing when it closes its side; {@link PortConnectionException} when
     *     nothing listens on the port or the connection breaks, {@link InvalidArgumentException} for a port out of
     *     range, {@link SessionClosedException} after the handle or session ended; cancelling closes the connection
     */
    default Flux<ByteBuffer> connect(int sandboxPort, Publisher<ByteBuffer> toServer) {
        return Flux.error(new UnsupportedFeatureException(getClass().getSimpleName(), "port connections"));
    }

    /**
     * Offers a TCP service of the host to the sandbox: a listener on {@code 127.0.0.1:sandboxPort} inside it whose
     * every connection is carried to {@code target}, dialled from the host (as {@code ssh -R} does). The sandbox
     * reaches that one service and nothing else; on Docker and Kubernetes it needs no network for it.
     *
     * <pre>{@code
     * ReverseForward db = session.ports().reverse(5432, new InetSocketAddress("127.0.0.1", 5432)).block();
     * }</pre>
     *
     * <p>A connection whose target refuses it is closed in the sandbox at once. At most {@value
     * PortForwardOptions#DEFAULT_MAX_CONNECTIONS} connections are carried at once; one more is closed as soon as it is
     * accepted. Closing it, its handle, or the session's end closes the listener and its connections.
     *
     * @param sandboxPort the port to listen on inside the sandbox, 1 to 65535
     * @param target where the host connects for each connection
     * @return the open reverse forward, once the sandbox listens; {@link InvalidArgumentException} for a port out of
     *     range or one in use in the sandbox (naming {@code sandboxPort}), {@link UnsupportedFeatureException} on a
     *     provider without reverse forwards
     */
    default Mono<ReverseForward> reverse(int sandboxPort, InetSocketAddress target) {
        return Mono.error(new UnsupportedFeatureException(getClass().getSimpleName(), "reverse port forwards"));
    }

    /**
     * The forwards this handle opened that are still open.
     *
     * @return a snapshot, oldest first
     */
    List<PortForward> forwards();

    /**
     * The ports of a provider that cannot forward any: {@link #forward} fails with {@link
     * UnsupportedFeatureException}.
     *
     * @param provider the provider's name, for the message
     * @return the ports
     */
    static SandboxPorts unsupported(String provider) {
        return new SandboxPorts() {
            @Override
            public Mono<PortForward> forward(PortForwardOptions options) {
                return Mono.error(new UnsupportedFeatureException(provider, "port forwards"));
            }

            @Override
            public Flux<ByteBuffer> connect(int sandboxPort, Publisher<ByteBuffer> toServer) {
                return Flux.error(new UnsupportedFeatureException(provider, "port connections"));
            }

            @Override
            public Mono<ReverseForward> reverse(int sandboxPort, InetSocketAddress target) {
                return Mono.error(new UnsupportedFeatureException(provider, "reverse port forwards"));
            }

            @Override
            public List<PortForward> forwards() {
                return List.of();
            }
        };
    }
}
