package dev.sandbox.server;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.implementation.Version;
import dev.sandbox.pool.SandboxPool;
import dev.sandbox.server.implementation.Api;
import dev.sandbox.server.implementation.Auth;
import dev.sandbox.server.implementation.BindFailure;
import dev.sandbox.server.implementation.ConnectionGuard;
import dev.sandbox.server.implementation.HostPaths;
import dev.sandbox.server.implementation.ServerConfig;
import dev.sandbox.server.implementation.ServerTls;
import dev.sandbox.server.implementation.Sessions;
import dev.sandbox.server.implementation.WorkdirRoot;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.netty.ChannelBindException;
import reactor.netty.DisposableServer;
import reactor.netty.NettyPipeline;
import reactor.netty.http.server.HttpServer;

/**
 * An HTTP server that exposes the sessions of any {@link SandboxProvider} under {@code /v1/}, for the remote provider
 * ({@code dev.sandbox.remote.RemoteSandboxProvider}) or any HTTP client. The wire format is described in the module's
 * README: JSON for calls, NDJSON or server-sent events for streams, raw bytes for file contents.
 *
 * <p>Every route needs the bearer token. Streams are never collected: each event is written when the connection
 * asks for more, so a slow client slows the command through TCP flow control. Requests are bounded (JSON bodies,
 * sessions and commands at once), and a bad request gets a JSON error without disturbing the others.
 *
 * <pre>{@code
 * try (LocalSandboxProvider provider = LocalSandboxProvider.create();
 *      SandboxServer server = SandboxServer.builder(provider)
 *              .port(7070)
 *              .token(tokenChars)
 *              .start()) {
 *     System.out.println("serving on " + server.baseUrl());
 *     server.awaitStop();
 * }
 * }</pre>
 */
public final class SandboxServer implements AutoCloseable {
    /** The largest file upload a server accepts unless told otherwise: 1 GiB. */
    public static final long DEFAULT_MAX_UPLOAD_BYTES = 1L << 30;

    private static final Logger LOG = LoggerFactory.getLogger(SandboxServer.class);

    private final DisposableServer server;
    private final ChannelGroup connections;
    private final Api api;
    private final ConnectionGuard guard;
    private final ServerConfig config;
    private final boolean tls;
    private final AtomicBoolean stopped = new AtomicBoolean();
    /** The workdir root this server made (given none), removed when it stops; {@code null} for a given root. */
    private final @Nullable Path madeRoot;

    private SandboxServer(
            DisposableServer server,
            ChannelGroup connections,
            Api api,
            ConnectionGuard guard,
            ServerConfig config,
            boolean tls,
            @Nullable Path madeRoot) {
        this.server = server;
        this.connections = connections;
        this.api = api;
        this.guard = guard;
        this.config = config;
        this.tls = tls;
        this.madeRoot = madeRoot;
    }

    /**
     * Starts configuring a server for a provider; the provider stays the caller's to close.
     *
     * @param provider the provider whose sessions to serve
     * @return a builder
     */
    public static Builder builder(SandboxProvider provider) {
        return new Builder(provider);
    }

    /**
     * The port the server is bound to (the chosen one when configured with port 0).
     *
     * @return the port
     */
    public int port() {
        return server.port();
    }

    /**
     * The address the server is bound to.
     *
     * @return the host
     */
    public String host() {
        return config.host();
    }

    /**
     * The server's base URL, such as {@code http://127.0.0.1:7070}, or {@code https://127.0.0.1:7443} when it serves
     * TLS ({@link Builder#tls}).
     *
     * @return the URL
     */
    public String baseUrl() {
        String h = config.host().contains(":") ? "[" + config.host() + "]" : config.host();
        return (tls ? "https://" : "http://") + h + ":" + port();
    }

    /**
     * Blocks until the server has stopped (by {@link #stop(Duration)} from another thread, or a failure).
     */
    public void awaitStop() {
        server.onDispose().block();
    }

    /**
     * Stops gracefully: new connections and requests are refused, running requests and streams get up to {@code
     * timeout} to end, then the remaining connections are closed, streaming commands released (killing them) and the
     * sessions this server created destroyed; the workdir root it made when given none is removed. Blocks, so call
     * it from a thread that may block. Idempotent.
     *
     * @param timeout how long running requests may take to end
     */
    public void stop(Duration timeout) {
        if (!stopped.compareAndSet(false, true)) {
            return;
        }
        api.drain();
        api.stopEndpoints();
        try {
            server.disposeNow(timeout);
        } catch (IllegalStateException e) {
            LOG.info("requests still running after {}; closing their connections", timeout);
        }
        connections.close().awaitUninterruptibly(timeout.toMillis(), TimeUnit.MILLISECONDS);
        api.execs().releaseAll();
        api.sessions().destroyOwned(timeout.plusSeconds(5));
        if (madeRoot != null) {
            WorkdirRoot.removeMade(madeRoot);
        }
        String summary = guard.summary();
        if (summary != null) {
            LOG.info("sandbox server on port {}: {}", server.port(), summary);
        }
        LOG.info("sandbox server on port {} stopped", server.port());
    }

    /** Stops with the configured shutdown timeout; see {@link #stop(Duration)}. */
    @Override
    public void close() {
        stop(config.shutdownTimeout());
    }

    @Override
    public String toString() {
        return "SandboxServer{" + baseUrl() + ", provider="
                + api.sessions().provider().name() + "}";
    }

    /**
     * Configures and starts a {@link SandboxServer}. The token is required; everything else has a default. The
     * server binds to the loopback address unless told otherwise.
     *
     * <pre>{@code
     * SandboxServer server = SandboxServer.builder(provider)
     *     .host("127.0.0.1").port(0)
     *     .token(token)
     *     .maxSessions(16).maxExecs(64)
     *     .start();
     * }</pre>
     */
    public static final class Builder {
        private final SandboxProvider provider;
        private String host = "127.0.0.1";
        private int port = 7070;
        private final java.util.Map<String, byte[]> tokenDigests = new java.util.LinkedHashMap<>();
        private int maxSessions = 64;
        private int maxExecs = 256;
        private int maxJsonBytes = 1024 * 1024;
        private long maxUploadBytes = DEFAULT_MAX_UPLOAD_BYTES;
        private int execWindowBytes = 1024 * 1024;
        private Duration resumeTimeout = Duration.ofSeconds(60);
        private Duration heartbeat = Duration.ofSeconds(15);
        private Duration stdinTimeout = Duration.ofSeconds(30);
        private Duration shutdownTimeout = Duration.ofSeconds(10);
        private int maxConnections = 512;
        private int maxQueuedRequests = 256;
        private Duration queueTimeout = Duration.ofSeconds(5);
        private Duration headTimeout = Duration.ofSeconds(10);
        private Duration authTimeout = Duration.ofSeconds(30);
        private @Nullable Path workdirRoot;
        private Duration lease = Duration.ofMinutes(1);
        private @Nullable SandboxPool pool;
        private final java.util.Map<String, ServerEndpoint> endpoints = new java.util.LinkedHashMap<>();
        private @Nullable Path tlsCertificate;
        private @Nullable Path tlsKey;

        private Builder(SandboxProvider provider) {
            this.provider = Objects.requireNonNull(provider, "provider");
        }

        /**
         * Sets the address to bind ({@code 127.0.0.1} by default).
         *
         * @param host an address or host name
         * @return this builder
         */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /**
         * Sets the port (7070 by default; 0 picks a free one, see {@link SandboxServer#port()}).
         *
         * @param port from 0 to 65535
         * @return this builder
         */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /**
         * Sets the bearer token every request must carry (the token named {@code default}). Only its SHA-256 digest is
         * kept; the caller may clear the array afterwards.
         *
         * @param token the token, at least 16 characters
         * @return this builder
         */
        public Builder token(char[] token) {
            return token("default", token);
        }

        /**
         * Adds a named bearer token. Each token is a tenant: the sessions created with it are seen (listed, attached,
         * used, destroyed) only with it; to every other token they answer 404 as a missing session does. A session
         * keeps its tenant across server restarts with the same token. Only the token's SHA-256 digest is kept.
         *
         * @param name the token's name, for logs (the token itself is never logged)
         * @param token the token, at least 16 characters, different from the other tokens
         * @return this builder
         */
        public Builder token(String name, char[] token) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(token, "token");
            if (name.isBlank()) {
                throw new InvalidArgumentException("token", "a token's name must not be blank");
            }
            if (token.length < 16) {
                throw new InvalidArgumentException("token", "token must be at least 16 characters long");
            }
            ByteBuffer bytes = StandardCharsets.UTF_8.encode(CharBuffer.wrap(token));
            byte[] raw = new byte[bytes.remaining()];
            bytes.get(raw);
            byte[] digest = Auth.sha256(raw);
            Arrays.fill(raw, (byte) 0);
            if (bytes.hasArray()) {
                Arrays.fill(bytes.array(), (byte) 0);
            }
            for (var e : tokenDigests.entrySet()) {
                if (!e.getKey().equals(name) && Arrays.equals(e.getValue(), digest)) {
                    throw new InvalidArgumentException(
                            "token", "token '" + name + "' is the same as token '" + e.getKey() + "'");
                }
            }
            tokenDigests.put(name, digest);
            return this;
        }

        /**
         * Sets the most live sessions created through the server at once (64 by default); more are refused with 429.
         *
         * @param maxSessions at least 1
         * @return this builder
         */
        public Builder maxSessions(int maxSessions) {
            this.maxSessions = maxSessions;
            return this;
        }

        /**
         * Sets the most commands (runs, streaming execs and background processes) running through the server at once
         * (256 by default); more are refused with 429.
         *
         * @param maxExecs at least 1
         * @return this builder
         */
        public Builder maxExecs(int maxExecs) {
            this.maxExecs = maxExecs;
            return this;
        }

        /**
         * Sets the largest JSON request body (1 MiB by default); larger ones are refused with 413.
         *
         * @param maxJsonBytes at least 1024
         * @return this builder
         */
        public Builder maxJsonBytes(int maxJsonBytes) {
            this.maxJsonBytes = maxJsonBytes;
            return this;
        }

        /**
         * Sets the largest file upload ({@link #DEFAULT_MAX_UPLOAD_BYTES}, 1 GiB, by default); larger ones are refused
         * with 413 and leave no file.
         *
         * @param maxUploadBytes at least 1
         * @return this builder
         */
        public Builder maxUploadBytes(long maxUploadBytes) {
            this.maxUploadBytes = maxUploadBytes;
            return this;
        }

        /**
         * Sets how many unacknowledged bytes each streaming exec keeps so a dropped client can resume (1 MiB by
         * default). A client that stops acknowledging stops the command once this much is waiting.
         *
         * @param execWindowBytes at least 64 KiB
         * @return this builder
         */
        public Builder execWindowBytes(int execWindowBytes) {
            this.execWindowBytes = execWindowBytes;
            return this;
        }

        /**
         * Sets how long a streaming exec whose client went away waits for it to come back before the command is
         * killed (60 seconds by default).
         *
         * @param resumeTimeout a positive duration
         * @return this builder
         */
        public Builder resumeTimeout(Duration resumeTimeout) {
            this.resumeTimeout = resumeTimeout;
            return this;
        }

        /**
         * Sets how often streams send a heartbeat while quiet (15 seconds by default), so idle connections stay open
         * through proxies.
         *
         * @param heartbeat a positive duration
         * @return this builder
         */
        public Builder heartbeat(Duration heartbeat) {
            this.heartbeat = heartbeat;
            return this;
        }

        /**
         * Sets how long a graceful stop (and {@link SandboxServer#close()}) lets running requests end (10 seconds by
         * default).
         *
         * @param shutdownTimeout a positive duration
         * @return this builder
         */
        public Builder shutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = shutdownTimeout;
            return this;
        }

        /**
         * Sets the most connections served at once (512 by default). A connection over it is not cut: it waits (see
         * {@link #maxQueuedRequests}) and its first request is held until a slot frees, or answered {@code 503
         * Service Unavailable} with {@code Retry-After} and a {@code ServerBusy} JSON error, which the remote
         * provider retries. A connection that has not presented a valid token for a second is closed to make room,
         * so idle strangers cannot keep a client with the token out.
         *
         * @param maxConnections at least 2
         * @return this builder
         */
        public Builder maxConnections(int maxConnections) {
            this.maxConnections = maxConnections;
            return this;
        }

        /**
         * Sets how many connections over {@link #maxConnections} may wait for a slot (256 by default). A waiting
         * connection's first request is read up to its head and, with a valid token, held in a first-in first-out
         * queue until a connection closes (while requests wait, each connection that finishes a response closes after
         * it, handing its slot on) or until {@link #queueTimeout}; without a valid token it is answered 401. Past the
         * queue, a request is answered 503 with {@code Retry-After} as soon as its head arrives; when this many such
         * answers are in progress too, the server stops accepting for a moment and the system's listen backlog holds
         * the next connections.
         *
         * @param maxQueuedRequests at least 1
         * @return this builder
         */
        public Builder maxQueuedRequests(int maxQueuedRequests) {
            this.maxQueuedRequests = maxQueuedRequests;
            return this;
        }

        /**
         * Sets how long a request waits in the queue for a connection slot (5 seconds by default; see {@link
         * #maxQueuedRequests}); then it is answered {@code 503 Service Unavailable} with {@code Retry-After} and a
         * {@code ServerBusy} JSON error, and nothing of it was done.
         *
         * @param queueTimeout a positive duration
         * @return this builder
         */
        public Builder queueTimeout(Duration queueTimeout) {
            this.queueTimeout = queueTimeout;
            return this;
        }

        /**
         * Sets how long a request head (request line and headers) may take to arrive once its first byte did (10
         * seconds by default); a slower one gets its connection closed. Bodies and streams are not limited by it.
         *
         * @param headTimeout a positive duration
         * @return this builder
         */
        public Builder requestHeadTimeout(Duration headTimeout) {
            this.headTimeout = headTimeout;
            return this;
        }

        /**
         * Sets how long a connection may stay open before one of its requests carries a valid token (30 seconds by
         * default); then it is closed. Connections that presented the token are kept as long as their client
         * wants, so exec streams and PTY WebSockets last.
         *
         * @param authTimeout a positive duration
         * @return this builder
         */
        public Builder unauthenticatedTimeout(Duration authTimeout) {
            this.authTimeout = authTimeout;
            return this;
        }

        /**
         * Sets the directory that workdirs clients choose must be under, for a provider whose workdirs are host
         * paths (the local provider); by default a directory the server makes under the temporary directory and
         * removes, with what sessions left in it, when it stops (a directory given here is left alone). A
         * session asking for a workdir outside it (after resolving {@code ..} and symbolic links) is refused with 400
         * naming {@code workdir}. Sessions that name no workdir get the provider's fresh one as before.
         *
         * @param workdirRoot an existing directory
         * @return this builder
         */
        public Builder workdirRoot(Path workdirRoot) {
            this.workdirRoot = Objects.requireNonNull(workdirRoot, "workdirRoot");
            return this;
        }

        /**
         * Sets the lease of sessions created through the server without a lifetime (one minute by default): such a
         * session belongs to the client holding it, whose remote provider renews the lease (every third of it, as
         * the server announces in the create answer); a session whose renewals stopped for a lease (its client's
         * JVM died or the provider was closed) is destroyed. Any request on the session renews it too.
         *
         * @param lease a positive duration
         * @return this builder
         */
        public Builder lease(Duration lease) {
            this.lease = lease;
            return this;
        }

        /**
         * Serves session creates from a warm pool: a create whose options differ from the defaults only in environment
         * variables, labels, lifetime and idle timeout takes a warm session, customised with a {@link
         * dev.sandbox.pool.Claim} that also adds the server's own labels (the tenant's, the lease's), so that it is
         * listed, attached and leased like a session created for the request; one with secrets or a workdir, or without
         * a lifetime, is created cold, as without a pool, and so is every session when the provider cannot label a
         * running session. Destroying a pooled session gives it back to the pool, which destroys it and makes a fresh
         * one.
         *
         * <p>The pool must be built on this server's provider with the default template ({@link
         * SessionOptions#defaults()}); the server does not own it: stop the server, then close the pool, then the
         * provider.
         *
         * <pre>{@code
         * SandboxPool pool = SandboxPool.builder(provider).warm(4).build();
         * SandboxServer server = SandboxServer.builder(provider).token(token).pool(pool).start();
         * }</pre>
         *
         * @param pool the pool
         * @return this builder
         */
        public Builder pool(SandboxPool pool) {
            this.pool = Objects.requireNonNull(pool, "pool");
            return this;
        }

        /**
         * Mounts an extra endpoint under a path: requests to the path itself and to everything under it ({@code
         * PATH/...}) go to the endpoint, after the same bearer-token check as {@code /v1/} (see {@link
         * ServerEndpoint}). The MCP server's HTTP transport is mounted this way under {@code /mcp}.
         *
         * <pre>{@code
         * builder.endpoint("/mcp", mcpServer.httpEndpoint());
         * }</pre>
         *
         * @param path the path, such as {@code /mcp}: a slash followed by letters, digits, {@code -}, {@code _},
         *     {@code .} and further slashes, not ending with a slash, without {@code .} or {@code ..} segments, and
         *     not {@code /v1} or under it
         * @param endpoint the endpoint
         * @return this builder
         * @throws InvalidArgumentException naming {@code path} when it is malformed, reserved or already mounted
         */
        public Builder endpoint(String path, ServerEndpoint endpoint) {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(endpoint, "endpoint");
            if (!path.matches("(/[A-Za-z0-9._-]+)+")
                    || java.util.Arrays.stream(path.split("/")).anyMatch(p -> p.equals(".") || p.equals(".."))) {
                throw new InvalidArgumentException(
                        "path",
                        "an endpoint's path must be / followed by letters, digits, '-', '_', '.' and further"
                                + " slashes, got '" + path + "'");
            }
            if (path.equals("/v1") || path.startsWith("/v1/")) {
                throw new InvalidArgumentException("path", "the path /v1 is the server's own, got '" + path + "'");
            }
            for (String other : endpoints.keySet()) {
                if (other.equals(path) || other.startsWith(path + "/") || path.startsWith(other + "/")) {
                    throw new InvalidArgumentException(
                            "path", "the path '" + path + "' overlaps the endpoint mounted at '" + other + "'");
                }
            }
            endpoints.put(path, endpoint);
            return this;
        }

        /**
         * Serves HTTPS instead of plain HTTP, with the certificate and private key in PEM files (read by {@link
         * #start()}). Clients then use an {@code https} URL ({@link SandboxServer#baseUrl()}) and must trust the
         * certificate: a remote provider trusts the JVM's trust store, or the PEM file given to its {@code
         * trustedCertificates}. The certificate must name the host clients use in the URL (a subject alternative
         * name such as {@code IP:127.0.0.1} or {@code DNS:sandbox.internal}).
         *
         * <pre>{@code
         * SandboxServer.builder(provider)
         *     .host("0.0.0.0").port(7443)
         *     .tls(Path.of("/etc/sandbox/server.pem"), Path.of("/etc/sandbox/server-key.pem"))
         *     .token(token)
         *     .start();
         * }</pre>
         *
         * @param certificateChain the server's certificate ({@code -----BEGIN CERTIFICATE-----}), followed by any
         *     intermediate certificates
         * @param privateKey the certificate's private key, unencrypted PKCS#8 ({@code -----BEGIN PRIVATE KEY-----};
         *     {@code openssl pkcs8 -topk8 -nocrypt} converts other forms)
         * @return this builder
         */
        public Builder tls(Path certificateChain, Path privateKey) {
            this.tlsCertificate = Objects.requireNonNull(certificateChain, "certificateChain");
            this.tlsKey = Objects.requireNonNull(privateKey, "privateKey");
            return this;
        }

        /**
         * Binds the server and starts serving. Blocks until bound.
         *
         * @return the running server
         * @throws InvalidArgumentException naming a setting that is missing or wrong (a TLS file that cannot be read
         *     or used names {@code tlsCertificate} or {@code tlsKey})
         * @throws dev.sandbox.BackendException when the server cannot listen on its host and port, saying why (the
         *     port is in use, needs privileges, the host is not this machine's) and what to do
         */
        public SandboxServer start() {
            if (tokenDigests.isEmpty()) {
                throw new InvalidArgumentException("token", "token is required");
            }
            if (port < 0 || port > 65535) {
                throw new InvalidArgumentException("port", "port must be from 0 to 65535, got " + port);
            }
            atLeast("maxSessions", maxSessions, 1);
            atLeast("maxExecs", maxExecs, 1);
            atLeast("maxJsonBytes", maxJsonBytes, 1024);
            atLeast("maxUploadBytes", maxUploadBytes, 1);
            atLeast("execWindowBytes", execWindowBytes, 64 * 1024);
            positive("resumeTimeout", resumeTimeout);
            positive("heartbeat", heartbeat);
            positive("shutdownTimeout", shutdownTimeout);
            atLeast("maxConnections", maxConnections, 2);
            atLeast("maxQueuedRequests", maxQueuedRequests, 1);
            positive("queueTimeout", queueTimeout);
            positive("requestHeadTimeout", headTimeout);
            positive("unauthenticatedTimeout", authTimeout);
            positive("lease", lease);
            SslContext sslContext = tlsCertificate == null ? null : ServerTls.serverContext(tlsCertificate, tlsKey);
            Path root = resolvedRoot();
            HostPaths.addRoot(root);
            ServerConfig config = new ServerConfig(
                    host,
                    port,
                    java.util.Map.copyOf(tokenDigests),
                    maxSessions,
                    maxExecs,
                    maxJsonBytes,
                    maxUploadBytes,
                    execWindowBytes,
                    resumeTimeout,
                    heartbeat,
                    stdinTimeout,
                    shutdownTimeout,
                    maxConnections,
                    headTimeout,
                    authTimeout,
                    root,
                    lease);
            Version.get(); // reads a resource: load it here, not on an event loop
            Auth tokens = new Auth(config.tokenDigests());
            ConnectionGuard guard = new ConnectionGuard(
                    maxConnections,
                    maxQueuedRequests,
                    queueTimeout,
                    headTimeout,
                    authTimeout,
                    authorization -> tokens.accept(authorization) != null);
            Api api = new Api(config, new Sessions(provider, pool, maxSessions, lease), guard);
            api.mount(endpoints);
            ChannelGroup connections = new DefaultChannelGroup("sandbox-server", GlobalEventExecutor.INSTANCE);
            DisposableServer server;
            try {
                HttpServer http = HttpServer.create();
                if (sslContext != null) {
                    http = http.secure(spec -> spec.sslContext(sslContext));
                }
                server = http.host(host)
                        .port(port)
                        .channelGroup(connections)
                        .doOnChannelInit((observer, ch, address) -> guard.init(ch, NettyPipeline.HttpCodec))
                        .httpRequestDecoder(
                                spec -> spec.maxHeaderSize(16 * 1024).maxInitialLineLength(16 * 1024))
                        .route(api::register)
                        .bindNow(Duration.ofSeconds(10));
            } catch (ChannelBindException e) {
                api.sessions().stopLeases();
                if (workdirRoot == null) {
                    WorkdirRoot.removeMade(root);
                }
                throw BindFailure.of(host, port, e);
            } catch (RuntimeException e) {
                api.sessions().stopLeases();
                if (workdirRoot == null) {
                    WorkdirRoot.removeMade(root);
                }
                throw e;
            }
            guard.listening(server.channel());
            api.sessions().adoptLeased(api.tenants()).subscribe(); // in the background: the server already serves
            LOG.info(
                    "sandbox server serving {} sessions on {}:{}{}",
                    provider.name(),
                    host,
                    server.port(),
                    sslContext != null ? " (TLS)" : "");
            return new SandboxServer(
                    server, connections, api, guard, config, sslContext != null, workdirRoot == null ? root : null);
        }

        private Path resolvedRoot() {
            try {
                Path dir = workdirRoot != null ? workdirRoot : Files.createTempDirectory("sandbox-server-workdirs-");
                Path real = dir.toRealPath();
                if (!Files.isDirectory(real)) {
                    throw new InvalidArgumentException("workdirRoot", "workdirRoot must be a directory, got " + dir);
                }
                return real;
            } catch (IOException e) {
                throw new InvalidArgumentException(
                        "workdirRoot", "workdirRoot must be an existing directory, got " + workdirRoot);
            }
        }

        private static void atLeast(String field, long value, long min) {
            if (value < min) {
                throw new InvalidArgumentException(field, field + " must be at least " + min + ", got " + value);
            }
        }

        private static void positive(String field, Duration d) {
            if (d == null || d.isZero() || d.isNegative()) {
                throw new InvalidArgumentException(field, field + " must be positive, got " + d);
            }
        }

        @Override
        public String toString() {
            return "SandboxServer.Builder{host=" + host + ", port=" + port + ", token="
                    + (tokenDigests.isEmpty() ? "unset" : tokenDigests.size() + " (***)") + ", maxSessions="
                    + maxSessions + ", maxExecs="
                    + maxExecs + "}";
        }
    }
}
