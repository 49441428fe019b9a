package dev.sandbox;

import java.util.List;
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
            public List<PortForward> forwards() {
                return List.of();
            }
        };
    }
}
