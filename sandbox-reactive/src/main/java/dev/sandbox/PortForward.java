package dev.sandbox;

import java.net.InetSocketAddress;
import reactor.core.publisher.Mono;

/**
 * An open port forward ({@link SandboxPorts#forward(int)}): a listening socket on the host whose every connection is
 * carried to a TCP port on the sandbox's loopback. On Docker and Kubernetes each connection is a stream of the
 * connection the SDK already has to the sandbox's agent, so the sandbox needs no network at all (it stays on network
 * {@code none}); bytes flow with backpressure both ways, and a client that stops reading slows only its own
 * connection.
 *
 * <p>A connection the sandbox refuses (nothing listens on the port yet) is closed at once on the host. Closing the
 * forward, closing the handle that opened it, or the end of the session stops listening and closes every connection.
 *
 * <pre>{@code
 * session.start(ExecOptions.shell("python3 -m http.server 8000")).block();
 * PortForward web = session.ports().forward(8000).block();
 * HttpClient.newHttpClient().send(
 *         HttpRequest.newBuilder(URI.create("http://" + web.hostString() + "/")).build(),
 *         HttpResponse.BodyHandlers.ofString());
 * web.close().block();
 * }</pre>
 */
public interface PortForward {

    /**
     * The port inside the sandbox.
     *
     * @return the port
     */
    int sandboxPort();

    /**
     * Where the forward listens on the host.
     *
     * @return the address and port
     */
    InetSocketAddress localAddress();

    /**
     * {@link #localAddress()} as {@code host:port} (an IPv6 address in brackets), ready for a URL.
     *
     * @return the address
     */
    default String hostString() {
        InetSocketAddress a = localAddress();
        String host = a.getAddress().getHostAddress();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    /**
     * How many connections the forward carries now.
     *
     * @return the count
     */
    int openConnections();

    /**
     * How many connections the forward accepted since it opened, those closed at once included.
     *
     * @return the count
     */
    long acceptedConnections();

    /**
     * Whether the forward still listens.
     *
     * @return false once closed, by {@link #close()}, its handle or the session's end
     */
    boolean isOpen();

    /**
     * Stops listening and closes every connection of the forward; idempotent.
     *
     * @return completes once the listening socket is closed
     */
    Mono<Void> close();
}
