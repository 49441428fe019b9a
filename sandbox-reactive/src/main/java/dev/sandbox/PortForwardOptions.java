package dev.sandbox;

import java.net.InetAddress;
import java.util.Objects;

/**
 * What {@link SandboxPorts#forward(PortForwardOptions)} opens: the port inside the sandbox, and where on the host the
 * forward listens. Immutable; the {@code with} methods return a copy.
 *
 * <p>By default a forward listens on the host's loopback address ({@code 127.0.0.1}) on a free port the system
 * picks, and carries at most {@value #DEFAULT_MAX_CONNECTIONS} connections at once (a connection beyond that is
 * closed as soon as it is accepted). Listening on another address makes the sandbox's server reachable by whoever can
 * reach that address: the forward does no authentication of its own.
 *
 * <pre>{@code
 * PortForwardOptions options = PortForwardOptions.to(8080).withHostPort(18080).withMaxConnections(64);
 * PortForward forward = session.ports().forward(options).block();
 * }</pre>
 *
 * @param sandboxPort the TCP port on the sandbox's loopback, 1 to 65535
 * @param hostAddress the host address the forward listens on
 * @param hostPort the host port, 0 for one the system picks
 * @param maxConnections how many connections the forward carries at once, 1 to {@value #MAX_CONNECTIONS}
 */
public record PortForwardOptions(int sandboxPort, InetAddress hostAddress, int hostPort, int maxConnections) {

    /** The default bound on a forward's connections at once. */
    public static final int DEFAULT_MAX_CONNECTIONS = 256;

    /** The largest bound a forward takes: each connection is a stream of the sandbox's agent connection. */
    public static final int MAX_CONNECTIONS = 2048;

    /**
     * Checks the options.
     *
     * @throws InvalidArgumentException naming the field and value when one is out of range
     */
    public PortForwardOptions {
        Objects.requireNonNull(hostAddress, "hostAddress");
        if (sandboxPort < 1 || sandboxPort > 65535) {
            throw new InvalidArgumentException(
                    "sandboxPort", "sandboxPort must be within 1..65535, got " + sandboxPort);
        }
        if (hostPort < 0 || hostPort > 65535) {
            throw new InvalidArgumentException(
                    "hostPort", "hostPort must be within 0..65535 (0: any free port), got " + hostPort);
        }
        if (maxConnections < 1 || maxConnections > MAX_CONNECTIONS) {
            throw new InvalidArgumentException(
                    "maxConnections",
                    "maxConnections must be within 1.." + MAX_CONNECTIONS + ", got " + maxConnections);
        }
    }

    /**
     * A forward to a port in the sandbox, listening on the host's loopback on a free port.
     *
     * @param sandboxPort the port inside the sandbox
     * @return the options
     * @throws InvalidArgumentException when the port is out of range
     */
    public static PortForwardOptions to(int sandboxPort) {
        return new PortForwardOptions(sandboxPort, InetAddress.getLoopbackAddress(), 0, DEFAULT_MAX_CONNECTIONS);
    }

    /**
     * The same options listening on another host address.
     *
     * @param address the address, such as {@code InetAddress.getByName("0.0.0.0")} for every interface
     * @return the copy
     */
    public PortForwardOptions withHostAddress(InetAddress address) {
        return new PortForwardOptions(sandboxPort, address, hostPort, maxConnections);
    }

    /**
     * The same options on a fixed host port.
     *
     * @param port the port, 0 for one the system picks
     * @return the copy
     */
    public PortForwardOptions withHostPort(int port) {
        return new PortForwardOptions(sandboxPort, hostAddress, port, maxConnections);
    }

    /**
     * The same options with another bound on connections at once.
     *
     * @param max the bound
     * @return the copy
     */
    public PortForwardOptions withMaxConnections(int max) {
        return new PortForwardOptions(sandboxPort, hostAddress, hostPort, max);
    }
}
