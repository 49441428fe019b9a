package dev.sandbox;

import org.jspecify.annotations.Nullable;

/**
 * A connection to a port inside a sandbox ({@link SandboxPorts#connect}) could not be made or broke: nothing listens
 * on the port ({@code connection refused}), the server reset it, or the way into the sandbox failed. The message
 * names the port and what the sandbox's side said. Retryable: a server that is still starting listens soon.
 *
 * <pre>{@code
 * session.ports().connect(8080, Flux.just(request))
 *     .retryWhen(Retry.backoff(10, Duration.ofMillis(100)).filter(PortConnectionException.class::isInstance));
 * }</pre>
 */
public class PortConnectionException extends SandboxException {
    private static final long serialVersionUID = 1L;

    private final int port;

    /**
     * Creates the exception.
     *
     * @param port the port inside the sandbox
     * @param message what happened, naming the port
     * @param cause the underlying failure, if any
     */
    public PortConnectionException(int port, String message, @Nullable Throwable cause) {
        super(message, cause, true);
        this.port = port;
    }

    /**
     * The port inside the sandbox.
     *
     * @return the port
     */
    public int port() {
        return port;
    }
}
