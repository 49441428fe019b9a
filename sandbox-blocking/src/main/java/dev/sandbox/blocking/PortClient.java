package dev.sandbox.blocking;

import dev.sandbox.PortForward;
import dev.sandbox.PortForwardOptions;
import dev.sandbox.ReverseForward;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;

/**
 * Forwards host ports to TCP servers inside the client's session; the blocking form of {@link
 * dev.sandbox.SandboxSession#ports()}, with the same names: {@link #forward(int)}, {@link
 * #forward(PortForwardOptions)}, {@link #forwards()}, {@link #reverse}. Get it from {@link SandboxClient#ports()}.
 *
 * <p>Each call waits at most for the client's default timeout and follows the facade's rules: the SDK's exceptions
 * unchanged, {@link SandboxInterruptedException} when the waiting thread is interrupted, {@link
 * IllegalStateException} on a Reactor non-blocking thread, {@link dev.sandbox.SessionClosedException} after the client
 * is closed. Closing the client closes its forwards. A provider without forwards answers {@link
 * dev.sandbox.UnsupportedFeatureException}.
 *
 * <pre>{@code
 * client.process().start(ExecOptions.shell("busybox httpd -f -p 127.0.0.1:8080 -h /srv"));
 * try (PortClient.Forward web = client.ports().forward(8080)) {
 *     URI page = URI.create("http://" + web.hostString() + "/index.html");
 *     // read it with any HTTP client
 * }
 * }</pre>
 */
public final class PortClient {
    private final ClientCore core;

    PortClient(ClientCore core) {
        this.core = core;
    }

    /**
     * Forwards a free port on the host's loopback to a port inside the session.
     *
     * @param sandboxPort the port inside the sandbox, 1 to 65535
     * @return the open forward
     * @throws dev.sandbox.InvalidArgumentException for a port out of range
     * @throws dev.sandbox.UnsupportedFeatureException when the provider has no forwards
     * @throws SandboxInterruptedException when the thread was interrupted
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public Forward forward(int sandboxPort) {
        return forward(PortForwardOptions.to(sandboxPort));
    }

    /**
     * Opens a port forward.
     *
     * @param options the port inside the sandbox and where the forward listens on the host
     * @return the open forward
     * @throws dev.sandbox.InvalidArgumentException for bad options, or a host port that cannot be bound
     * @throws dev.sandbox.UnsupportedFeatureException when the provider has no forwards
     * @throws SandboxInterruptedException when the thread was interrupted
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public Forward forward(PortForwardOptions options) {
        Blocking.checkCanBlock("PortClient.forward");
        Objects.requireNonNull(options, "options");
        core.ensureOpen();
        return new Forward(
                core,
                Blocking.awaitValue(
                        core.session.ports().forward(options),
                        core.defaultTimeout,
                        "PortClient.forward",
                        "forward to sandbox port " + options.sandboxPort()));
    }

    /**
     * Offers a TCP service of the host to the session: a listener on the sandbox's loopback at {@code sandboxPort}
     * whose connections are carried to {@code target}; the blocking form of {@link
     * dev.sandbox.SandboxPorts#reverse}.
     *
     * <pre>{@code
     * try (PortClient.Reverse db = client.ports().reverse(5432, new InetSocketAddress("127.0.0.1", 5432))) {
     *     client.process().run(ExecOptions.shell("psql -h 127.0.0.1 -c 'select 1'"));
     * }
     * }</pre>
     *
     * @param sandboxPort the port inside the sandbox, 1 to 65535
     * @param target where the host connects for each connection
     * @return the open reverse forward, once the sandbox listens
     * @throws dev.sandbox.InvalidArgumentException for a port out of range or in use in the sandbox
     * @throws dev.sandbox.UnsupportedFeatureException when the provider has no reverse forwards
     * @throws SandboxInterruptedException when the thread was interrupted
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public Reverse reverse(int sandboxPort, InetSocketAddress target) {
        Blocking.checkCanBlock("PortClient.reverse");
        Objects.requireNonNull(target, "target");
        core.ensureOpen();
        return new Reverse(
                core,
                Blocking.awaitValue(
                        core.session.ports().reverse(sandboxPort, target),
                        core.defaultTimeout,
                        "PortClient.reverse",
                        "reverse forward of sandbox port " + sandboxPort + " to " + target));
    }

    /**
     * The forwards of this client that are open.
     *
     * @return a snapshot, oldest first
     */
    public List<Forward> forwards() {
        core.ensureOpen();
        return core.session.ports().forwards().stream()
                .map(f -> new Forward(core, f))
                .toList();
    }

    /**
     * An open reverse forward; {@link #close()} stops it.
     *
     * <pre>{@code
     * try (PortClient.Reverse mirror = client.ports().reverse(3141, mirrorAddress)) {
     *     client.process().run(ExecOptions.shell("pip install --index-url http://127.0.0.1:3141/simple/ x"));
     * }
     * }</pre>
     */
    public static final class Reverse implements AutoCloseable {
        private final ClientCore core;
        private final ReverseForward reverse;

        Reverse(ClientCore core, ReverseForward reverse) {
            this.core = core;
            this.reverse = reverse;
        }

        /**
         * The port inside the sandbox.
         *
         * @return the port
         */
        public int sandboxPort() {
            return reverse.sandboxPort();
        }

        /**
         * Where each connection goes.
         *
         * @return the target
         */
        public InetSocketAddress target() {
            return reverse.target();
        }

        /**
         * How many connections it carries now.
         *
         * @return the count
         */
        public int openConnections() {
            return reverse.openConnections();
        }

        /**
         * Whether the sandbox-side listener is still open.
         *
         * @return false once closed
         */
        public boolean isOpen() {
            return reverse.isOpen();
        }

        /**
         * Closes the listener in the sandbox and its connections; idempotent.
         *
         * @throws IllegalStateException when called on a Reactor non-blocking thread
         */
        @Override
        public void close() {
            Blocking.checkCanBlock("PortClient.Reverse.close");
            Blocking.await(reverse.close(), core.defaultTimeout, "PortClient.Reverse.close", "closing " + reverse);
        }

        @Override
        public String toString() {
            return reverse.toString();
        }
    }

    /**
     * An open forward; {@link #close()} stops it.
     *
     * <pre>{@code
     * try (PortClient.Forward f = client.ports().forward(5432)) {
     *     connectTo(f.localAddress());
     * }
     * }</pre>
     */
    public static final class Forward implements AutoCloseable {
        private final ClientCore core;
        private final PortForward forward;

        Forward(ClientCore core, PortForward forward) {
            this.core = core;
            this.forward = forward;
        }

        /**
         * The port inside the sandbox.
         *
         * @return the port
         */
        public int sandboxPort() {
            return forward.sandboxPort();
        }

        /**
         * Where the forward listens on the host.
         *
         * @return the address
         */
        public InetSocketAddress localAddress() {
            return forward.localAddress();
        }

        /**
         * The host address as {@code host:port}, ready for a URL.
         *
         * @return the address
         */
        public String hostString() {
            return forward.hostString();
        }

        /**
         * How many connections the forward carries now.
         *
         * @return the count
         */
        public int openConnections() {
            return forward.openConnections();
        }

        /**
         * Whether the forward still listens.
         *
         * @return false once closed
         */
        public boolean isOpen() {
            return forward.isOpen();
        }

        /**
         * Stops listening and closes the forward's connections; idempotent.
         *
         * @throws IllegalStateException when called on a Reactor non-blocking thread
         */
        @Override
        public void close() {
            Blocking.checkCanBlock("PortClient.Forward.close");
            Blocking.await(forward.close(), core.defaultTimeout, "PortClient.Forward.close", "closing " + forward);
        }

        @Override
        public String toString() {
            return forward.toString();
        }
    }
}
