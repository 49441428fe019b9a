package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import java.time.Duration;
import java.util.Objects;

/**
 * Makes blocking {@link SandboxClient}s over the application's provider, with the timeout and buffer of {@code
 * sandbox.client.*}. A {@code SandboxClient} is one session, so the starter provides this factory rather than a
 * single client: each piece of work takes its own and closes it. Its methods have the names of {@link SandboxClient}'s
 * own: {@link #create(SessionOptions)} is {@code SandboxClient.create(provider, options)}.
 *
 * <pre>{@code
 * try (SandboxClient client = clients.create()) {
 *     ExecResult result = client.process().run(ExecOptions.of("python3", "-c", "print(6 * 7)"));
 * }
 * }</pre>
 *
 * <p>Sessions made through the starter's provider get the {@code sandbox.session.*} defaults, and the ones still alive
 * when the application stops are destroyed then (see {@link ManagedSandboxProvider}).
 */
public final class SandboxClientFactory {
    private final SandboxProvider provider;
    private final Duration timeout;
    private final int streamPrefetch;

    /**
     * A factory of clients over {@code provider}.
     *
     * @param provider where the clients' sessions are created
     * @param timeout how long a call of a client waits when no timeout is passed to it
     * @param streamPrefetch how many events a client's output stream buffers ahead of its reader
     */
    public SandboxClientFactory(SandboxProvider provider, Duration timeout, int streamPrefetch) {
        this.provider = Objects.requireNonNull(provider, "provider");
        this.timeout = Objects.requireNonNull(timeout, "timeout");
        this.streamPrefetch = streamPrefetch;
        builder(); // checks the settings now rather than at the first client
    }

    /**
     * A client for a new session with default options. {@link SandboxClient#close()} destroys the session.
     *
     * @return the client
     */
    public SandboxClient create() {
        return create(SessionOptions.defaults());
    }

    /**
     * A client for a new session. {@link SandboxClient#close()} destroys the session; the provider stays open.
     *
     * @param options the session's options
     * @return the client
     */
    public SandboxClient create(SessionOptions options) {
        return builder().create(provider, options);
    }

    /**
     * A client for an existing session of the provider. {@link SandboxClient#close()} releases the handle only.
     *
     * @param sessionId the session's id
     * @return the client
     * @throws dev.sandbox.SessionNotFoundException when the provider has no such session
     */
    public SandboxClient attach(String sessionId) {
        return builder().attach(provider, sessionId);
    }

    /**
     * The provider the clients' sessions live on.
     *
     * @return the provider
     */
    public SandboxProvider provider() {
        return provider;
    }

    /**
     * How long a call of a client waits when no timeout is passed to it.
     *
     * @return the default timeout of the clients
     */
    public Duration timeout() {
        return timeout;
    }

    private SandboxClient.Builder builder() {
        return SandboxClient.builder().defaultTimeout(timeout).streamPrefetch(streamPrefetch);
    }
}
