package dev.sandbox;

import java.net.InetSocketAddress;
import reactor.core.publisher.Mono;

/**
 * An open reverse forward ({@link SandboxPorts#reverse}): a listener on the sandbox's loopback whose every connection
 * is carried to a TCP service of the host (or one the host reaches). On Docker and Kubernetes the agent listens and
 * carries each connection on the SDK's connection to it, so the sandbox reaches that one service and nothing else,
 * still without a network.
 *
 * <pre>{@code
 * // a package mirror on the host, reachable inside the sandbox as http://127.0.0.1:3141/
 * ReverseForward mirror = session.ports().reverse(3141, new InetSocketAddress("127.0.0.1", 3141)).block();
 * session.run(ExecOptions.shell("pip install --index-url http://127.0.0.1:3141/simple/ requests")).block();
 * mirror.close().block();
 * }</pre>
 */
public interface ReverseForward {

    /**
     * The port the sandbox's code connects to, on its loopback.
     *
     * @return the port
     */
    int sandboxPort();

    /**
     * Where each connection goes from the host.
     *
     * @return the address
     */
    InetSocketAddress target();

    /**
     * How many connections the reverse forward carries now.
     *
     * @return the count
     */
    int openConnections();

    /**
     * How many connections the sandbox's code made since it opened.
     *
     * @return the count
     */
    long acceptedConnections();

    /**
     * Whether the sandbox-side listener is still open.
     *
     * @return false once closed, by {@link #close()}, its handle or the session's end
     */
    boolean isOpen();

    /**
     * Closes the listener in the sandbox and every connection of it; idempotent.
     *
     * @return completes once closed
     */
    Mono<Void> close();
}
