package dev.sandbox.remote;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.implementation.ProviderCloser;
import dev.sandbox.implementation.remote.Leases;
import dev.sandbox.implementation.remote.RemoteErrors;
import dev.sandbox.implementation.remote.RemoteSession;
import dev.sandbox.implementation.remote.RemoteTls;
import dev.sandbox.implementation.remote.RemoteTransport;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import io.netty.handler.codec.http.HttpMethod;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Sessions on a sandbox server ({@code sandbox-server}), reached over HTTP: the same session API as the local and
 * Docker providers, with the sandbox on another machine. Streams are backpressured through TCP, and a stream whose
 * connection drops reconnects and resumes from the last event it delivered, losing and repeating nothing.
 *
 * <p>The bearer token is sent with every request; it is never logged nor shown by {@link #toString()}.
 *
 * <pre>{@code
 * try (RemoteSandboxProvider provider = RemoteSandboxProvider.builder()
 *         .baseUrl("http://127.0.0.1:7070")
 *         .token(System.getenv("SANDBOX_TOKEN").toCharArray())
 *         .build()) {
 *     provider.withSession(SessionOptions.defaults(), session -> session.exec(ExecOptions.of("uname", "-a")))
 *         .doOnNext(System.out::println)
 *         .blockLast(Duration.ofSeconds(30));
 * }
 * }</pre>
 */
public final class RemoteSandboxProvider implements SandboxProvider {
    /** The provider's name. */
    public static final String NAME = RemoteSession.PROVIDER;

    /** How long {@link #close()} waits for the connections to close. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(10);

    private final RemoteTransport transport;
    private final Leases leases;
    private final ProviderCloser closer;

    private RemoteSandboxProvider(RemoteTransport transport) {
        this.transport = transport;
        this.leases = new Leases(transport);
        this.closer = new ProviderCloser(NAME, () -> {
            leases.close();
            return transport.closeAsync();
        });
    }

    /**
     * Starts configuring a provider.
     *
     * @return a builder
     */
    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return NAME;
    }

    /**
     * The server's base URL.
     *
     * @return the URL this provider talks to
     */
    public String baseUrl() {
        return transport.baseUrl();
    }

    @Override
    public Mono<SandboxSession> create(SessionOptions options) {
        return Mono.defer(() -> {
            closer.ensureOpen();
            options.validate();
            return transport
                    .call(HttpMethod.POST, "/v1/sessions", RequestBodies.SessionBody.of(options))
                    .switchIfEmpty(Mono.error(() -> RemoteErrors.protocol("the server sent no session")))
                    .map(n -> RemoteSession.of(transport, n, leases));
        });
    }

    @Override
    public Mono<SandboxSession> attach(String sessionId) {
        return Mono.defer(() -> {
            closer.ensureOpen();
            return transport
                    .call(HttpMethod.GET, "/v1/sessions/" + RemoteTransport.enc(sessionId), null)
                    .switchIfEmpty(Mono.error(() -> RemoteErrors.protocol("the server sent no session")))
                    .map(n -> RemoteSession.of(transport, n, leases));
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>Asks the server ({@code GET /v1/named-sessions/{name}}), which looks the name up among the sessions of this
     * client's tenant only: names are per tenant, and another tenant's session of the same name is never found. A
     * server whose provider has no names answers with {@link dev.sandbox.UnsupportedFeatureException}.
     */
    @Override
    public Mono<SandboxSession> attachByName(String name) {
        return Mono.defer(() -> {
            closer.ensureOpen();
            SessionOptions.validateName(name);
            return transport
                    .call(HttpMethod.GET, "/v1/named-sessions/" + RemoteTransport.enc(name), null)
                    .switchIfEmpty(Mono.error(() -> RemoteErrors.protocol("the server sent no session")))
                    .map(n -> RemoteSession.of(transport, n, leases));
        });
    }

    @Override
    public Flux<SessionInfo> list(Map<String, String> labels) {
        return Flux.defer(() -> {
            closer.ensureOpen();
            StringBuilder q = new StringBuilder("/v1/sessions");
            char sep = '?';
            for (Map.Entry<String, String> e : labels.entrySet()) {
                q.append(sep)
                        .append("label.")
                        .append(RemoteTransport.enc(e.getKey()))
                        .append('=')
                        .append(RemoteTransport.enc(e.getValue()));
                sep = '&';
            }
            return transport
                    .call(HttpMethod.GET, q.toString(), null)
                    .flatMapIterable(n -> ResourceBodies.read(n, ResourceBodies.SessionList.class)
                            .sessions())
                    .map(s -> s.info(NAME));
        });
    }

    /**
     * Releases this provider's connections, waiting up to 10 seconds; the sessions stay on the server. See {@link
     * #closeAsync()}.
     */
    @Override
    public void close() {
        closer.close(CLOSE_TIMEOUT);
    }

    /**
     * Releases this provider's connections without blocking: refuses new requests, then closes the connection pool
     * and with it every open connection (streams in flight end with an error). The sessions stay on the server;
     * attach to them from another provider. Calls on handles of this provider, like {@link #create}, fail with
     * {@link dev.sandbox.ProviderClosedException} afterwards.
     *
     * @return completes once the connections are closed
     */
    @Override
    public Mono<Void> closeAsync() {
        return closer.closeAsync();
    }

    @Override
    public String toString() {
        return "RemoteSandboxProvider{" + transport.baseUrl() + "}";
    }

    /**
     * Configures a {@link RemoteSandboxProvider}: the server's URL and token are required, the rest has defaults.
     *
     * <pre>{@code
     * RemoteSandboxProvider provider = RemoteSandboxProvider.builder()
     *     .baseUrl("http://10.0.0.5:7070")
     *     .token(() -> vault.read("sandbox-token"))
     *     .responseTimeout(Duration.ofSeconds(10))
     *     .build();
     * }</pre>
     */
    public static final class Builder {
        private @Nullable String baseUrl;
        private @Nullable Supplier<char[]> token;
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration responseTimeout = Duration.ofSeconds(30);
        private int maxConnections = 512;
        private int reconnectAttempts = 8;
        private Duration reconnectBackoff = Duration.ofMillis(50);
        private int busyAttempts = 10;
        private boolean commandChannel = true;
        private Duration busyWithin = Duration.ofSeconds(60);
        private @Nullable Path trustedCertificates;

        private Builder() {}

        /**
         * Sets the server's base URL.
         *
         * @param baseUrl an {@code http} or {@code https} URL, such as {@code http://127.0.0.1:7070}
         * @return this builder
         */
        public Builder baseUrl(String baseUrl) {
            this.baseUrl = baseUrl;
            return this;
        }

        /**
         * Sets the bearer token; the array is copied.
         *
         * @param token the token
         * @return this builder
         */
        public Builder token(char[] token) {
            char[] copy = Objects.requireNonNull(token, "token").clone();
            this.token = () -> copy;
            return this;
        }

        /**
         * Sets where the bearer token comes from; asked for each request (so a rotated token is picked up), and must
         * not block.
         *
         * @param token supplies the token
         * @return this builder
         */
        public Builder token(Supplier<char[]> token) {
            this.token = Objects.requireNonNull(token, "token");
            return this;
        }

        /**
         * Sets how long opening a connection may take (10 seconds by default).
         *
         * @param connectTimeout a positive duration
         * @return this builder
         */
        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
            return this;
        }

        /**
         * Sets how long a control call (create, stat, signal...) may wait for the server (30 seconds by default).
         * Streams and calls that last as long as a command ({@code run}, waiting for an exit) are not bounded by it.
         *
         * @param responseTimeout a positive duration
         * @return this builder
         */
        public Builder responseTimeout(Duration responseTimeout) {
            this.responseTimeout = responseTimeout;
            return this;
        }

        /**
         * Sets the most connections open at once (512 by default); each open stream holds one.
         *
         * @param maxConnections at least 1
         * @return this builder
         */
        public Builder maxConnections(int maxConnections) {
            this.maxConnections = maxConnections;
            return this;
        }

        /**
         * Sets how a dropped stream is reconnected: this many attempts in a row (8 by default), the first after
         * {@code backoff} (50 ms by default), each pause twice the last up to 2 seconds.
         *
         * @param attempts zero or more
         * @param backoff a positive duration
         * @return this builder
         */
        public Builder reconnect(int attempts, Duration backoff) {
            this.reconnectAttempts = attempts;
            this.reconnectBackoff = backoff;
            return this;
        }

        /**
         * Sets how a request the server turned away at its connection limit ({@code 503 ServerBusy} with {@code
         * Retry-After}) is sent again: up to {@code attempts} requests in all (10 by default) within {@code within}
         * of the first (60 seconds by default), each after the server's {@code Retry-After} (at most 10 seconds) plus
         * up to half of it again at random. The server gives that answer only before a request reaches any route, so
         * every request is retried, creating ones included; when the attempts or the time run out the call fails
         * with a retryable {@link ServerBusyException}. Uploads are not retried (their content may not be readable
         * twice) and fail with it at once. A stream that dropped is resumed as {@link #reconnect} says.
         *
         * @param attempts at least 1 (1: no retry)
         * @param within a positive duration
         * @return this builder
         */
        public Builder busyRetry(int attempts, Duration within) {
            this.busyAttempts = attempts;
            this.busyWithin = within;
            return this;
        }

        /**
         * Sets whom an {@code https} client trusts: the certificates in a PEM file, such as the certificate of the
         * authority that signed the server's certificate, or the server's own self-signed one. By default the JVM's
         * trust store is used ({@code javax.net.ssl.trustStore}, else the JDK's {@code cacerts}). Either way the
         * server's certificate must name the URL's host. A server whose certificate is not trusted fails each call
         * with a {@link dev.sandbox.BackendException} that names the host and says so.
         *
         * <pre>{@code
         * RemoteSandboxProvider.builder()
         *     .baseUrl("https://sandbox.internal:7443")
         *     .trustedCertificates(Path.of("/etc/sandbox/ca.pem"))
         * }</pre>
         *
         * @param pemFile a file of one or more {@code -----BEGIN CERTIFICATE-----} blocks, read by {@link #build()}
         * @return this builder
         */
        public Builder trustedCertificates(Path pemFile) {
            this.trustedCertificates = Objects.requireNonNull(pemFile, "pemFile");
            return this;
        }

        /**
         * Whether {@code run} and {@code exec} go over the command channel: one WebSocket to the server ({@code GET
         * /v1/channel}) per provider, opened on the first command and again after it breaks, carrying every command
         * as frames rather than each as its own HTTP request. On by default; a server that answers the upgrade with
         * 404 (one older than the channel) gets REST requests from then on. Turn it off to send every command as a
         * REST request (through a proxy that does not pass WebSockets, or to compare). Everything other than {@code
         * run} and {@code exec} is a REST request either way.
         *
         * @param enabled {@code false} for a REST request per command
         * @return this builder
         */
        public Builder commandChannel(boolean enabled) {
            this.commandChannel = enabled;
            return this;
        }

        /**
         * Builds the provider.
         *
         * @return the provider
         * @throws InvalidArgumentException naming the setting that is missing or wrong
         */
        public RemoteSandboxProvider build() {
            if (baseUrl == null) {
                throw new InvalidArgumentException("baseUrl", "baseUrl is required");
            }
            boolean https;
            try {
                URI uri = new URI(baseUrl);
                if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
                    throw new InvalidArgumentException(
                            "baseUrl", "baseUrl must be an http or https URL with a host, got '" + baseUrl + "'");
                }
                https = "https".equals(uri.getScheme());
            } catch (URISyntaxException e) {
                throw new InvalidArgumentException("baseUrl", "baseUrl is not a URL: '" + baseUrl + "'");
            }
            if (trustedCertificates != null && !https) {
                throw new InvalidArgumentException(
                        "trustedCertificates",
                        "trustedCertificates applies to an https URL only, got baseUrl '" + baseUrl + "'");
            }
            if (token == null) {
                throw new InvalidArgumentException("token", "token is required");
            }
            positive("connectTimeout", connectTimeout);
            positive("responseTimeout", responseTimeout);
            positive("reconnectBackoff", reconnectBackoff);
            positive("busyWithin", busyWithin);
            if (busyAttempts < 1) {
                throw new InvalidArgumentException(
                        "busyAttempts", "busyAttempts must be at least 1, got " + busyAttempts);
            }
            if (maxConnections < 1) {
                throw new InvalidArgumentException(
                        "maxConnections", "maxConnections must be at least 1, got " + maxConnections);
            }
            if (reconnectAttempts < 0) {
                throw new InvalidArgumentException(
                        "reconnectAttempts", "reconnectAttempts must not be negative, got " + reconnectAttempts);
            }
            return new RemoteSandboxProvider(new RemoteTransport(
                    baseUrl,
                    token,
                    connectTimeout,
                    responseTimeout,
                    maxConnections,
                    reconnectAttempts,
                    reconnectBackoff,
                    busyAttempts,
                    busyWithin,
                    https ? RemoteTls.clientContext(trustedCertificates) : null,
                    commandChannel));
        }

        private static void positive(String field, Duration d) {
            if (d == null || d.isZero() || d.isNegative()) {
                throw new InvalidArgumentException(field, field + " must be positive, got " + d);
            }
        }

        @Override
        public String toString() {
            return "RemoteSandboxProvider.Builder{baseUrl=" + baseUrl + ", token=" + (token == null ? "unset" : "***")
                    + ", connectTimeout=" + connectTimeout + ", commandChannel=" + commandChannel + ", responseTimeout="
                    + responseTimeout
                    + (trustedCertificates == null ? "" : ", trustedCertificates=" + trustedCertificates) + "}";
        }
    }
}
