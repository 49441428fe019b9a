package dev.sandbox.mcp;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.mcp.implementation.Isolation;
import dev.sandbox.mcp.implementation.SandboxToolSpecs;
import dev.sandbox.mcp.implementation.SerializedStdio;
import dev.sandbox.mcp.implementation.SessionRegistry;
import dev.sandbox.mcp.implementation.StdioInbound;
import dev.sandbox.mcp.implementation.StreamableHttpEndpoint;
import dev.sandbox.pool.SandboxPool;
import dev.sandbox.server.ServerEndpoint;
import dev.sandbox.tools.ToolLimits;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.schema.JsonSchemaValidator;
import io.modelcontextprotocol.server.McpAsyncServer;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * A Model Context Protocol server, built on the MCP Java SDK's asynchronous server, whose tools let a model work in
 * sandbox sessions of a {@link SandboxProvider}:
 *
 * <ul>
 *   <li>{@code create_session} (optional {@code labels}, {@code lifetime_seconds}), {@code list_sessions}, {@code
 *       destroy_session} ({@code session_id});
 *   <li>{@code run_command} ({@code session_id}, {@code command}, optional {@code timeout_seconds}) and {@code
 *       run_code} ({@code session_id}, {@code language}: python, javascript or shell, {@code code}): the exit code and
 *       output, bounded by the {@link ToolLimits} with what was cut said; while it runs, each output line goes to the
 *       client as a progress notification when the call carried a progress token;
 *   <li>{@code read_file}, {@code write_file}, {@code list_files} ({@code session_id}, {@code path}, {@code content}).
 * </ul>
 *
 * <p>The tools see only the sessions this server created, and of those only the caller's: over stdio there is one
 * caller; over HTTP each bearer token is one, so clients with different tokens never see each other's sessions. At
 * most {@link Builder#maxSessions(int)} sessions exist at once; {@link #close()} destroys them all. A bad argument or
 * an unknown session id is a tool error result ({@code isError}) naming the argument or the id.
 *
 * <p>Serve it on stdio ({@link #serveStdio(InputStream, OutputStream)}, what {@code sandbox mcp} does), or over the MCP
 * streamable HTTP transport by mounting {@link #httpEndpoint()} on a {@code SandboxServer} (what {@code sandbox serve}
 * does under {@code /mcp}, behind the server's bearer token).
 *
 * <pre>{@code
 * try (LocalSandboxProvider provider = LocalSandboxProvider.create();
 *      SandboxMcpServer mcp = SandboxMcpServer.builder(provider)
 *              .limits(ToolLimits.defaults().withTimeout(Duration.ofSeconds(30)))
 *              .maxSessions(4)
 *              .build()) {
 *     mcp.serveStdio(System.in, System.out); // returns when the client closes stdin
 * }
 * }</pre>
 */
public final class SandboxMcpServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SandboxMcpServer.class);

    private final SessionRegistry registry;
    private final SandboxToolSpecs tools;
    private final Builder settings;
    private final McpJsonMapper json;
    private final List<McpAsyncServer> servers = new CopyOnWriteArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final List<Runnable> closers = new CopyOnWriteArrayList<>();
    private volatile @Nullable StreamableHttpEndpoint http;

    private SandboxMcpServer(Builder b) {
        this.settings = b;
        this.registry = new SessionRegistry(b.provider, b.pool, b.maxSessions);
        this.tools = new SandboxToolSpecs(registry, b.limits, b.sessionOptions);
        this.json = McpJsonDefaults.getMapper();
    }

    /**
     * Starts configuring a server over a provider, which stays the caller's to close (after this server).
     *
     * @param provider where the tools create sessions
     * @return a builder
     */
    public static Builder builder(SandboxProvider provider) {
        return new Builder(provider);
    }

    /**
     * The names of the tools the server offers.
     *
     * @return the names, in the order clients list them
     */
    public static List<String> toolNames() {
        return SandboxToolSpecs.names();
    }

    /**
     * Serves one MCP client over a pair of streams (newline-delimited JSON-RPC, the SDK's stdio transport) and returns
     * when the input ends (the client closed it) or this server is closed. Only JSON-RPC messages are written to
     * {@code out}; log elsewhere. Blocks: call it from a thread that may block, such as {@code main}. The sessions the
     * client created stay until {@link #close()}. A line that is not JSON is answered with a JSON-RPC parse error
     * ({@code -32700}, id {@code null}), JSON that is not a JSON-RPC 2.0 message with an invalid request error ({@code
     * -32600}); either way the server reads on, and returns at the input's end whatever came before it.
     *
     * @param in the client's messages, such as {@code System.in}
     * @param out where the answers go, such as {@code System.out}
     * @throws InterruptedException when the waiting thread is interrupted
     */
    public void serveStdio(InputStream in, OutputStream out) throws InterruptedException {
        Objects.requireNonNull(in, "in");
        Objects.requireNonNull(out, "out");
        if (closed.get()) {
            throw new IllegalStateException("this MCP server is closed");
        }
        CountDownLatch ended = new CountDownLatch(1);
        // the client's lines are checked before the SDK's transport reads them: it would stop reading for good at a
        // malformed one (answering nothing, and never seeing the input end); bad lines are answered with JSON-RPC
        // errors here, good ones go on through a pipe
        StdioInbound inbound;
        try {
            inbound = new StdioInbound(in, out, json, StdioInbound.MAX_LINE_BYTES, () -> {
                // the transport was handed the input's end: give it a moment to read the lines before it
                try {
                    ended.await(5, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                ended.countDown();
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        InputStream watched = new FilterInputStream(inbound.forwarded()) {
            @Override
            public int read() throws IOException {
                return noted(super.read());
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                return noted(super.read(b, off, len));
            }

            private int noted(int n) {
                if (n < 0) {
                    ended.countDown();
                }
                return n;
            }

            @Override
            public void close() throws IOException {
                ended.countDown();
                super.close();
            }
        };
        McpAsyncServer server = start(McpServer.async(new SerializedStdio(
                new StdioServerTransportProvider(json, watched, out, StdioInbound.MAX_LINE_BYTES))));
        inbound.start();
        closers.add(ended::countDown);
        try {
            ended.await();
        } finally {
            inbound.stop();
            servers.remove(server);
            server.closeGracefully().onErrorResume(e -> Mono.empty()).block(Duration.ofSeconds(5));
        }
    }

    /**
     * The MCP streamable HTTP transport as an endpoint for {@code SandboxServer.Builder.endpoint("/mcp", ...)}, which
     * checks the bearer token before any request reaches it. One endpoint per server; later calls answer the same.
     *
     * <pre>{@code
     * SandboxServer server = SandboxServer.builder(provider)
     *         .token(token)
     *         .endpoint("/mcp", mcp.httpEndpoint())
     *         .start();
     * }</pre>
     *
     * @return the endpoint
     */
    public synchronized ServerEndpoint httpEndpoint() {
        if (closed.get()) {
            throw new IllegalStateException("this MCP server is closed");
        }
        StreamableHttpEndpoint endpoint = http;
        if (endpoint == null) {
            endpoint =
                    new StreamableHttpEndpoint(json, settings.maxClients, Duration.ofMinutes(30), settings.heartbeat);
            start(McpServer.async(endpoint));
            http = endpoint;
        }
        return endpoint;
    }

    private McpAsyncServer start(McpServer.AsyncSpecification<?> spec) {
        var specifications = tools.specifications();
        // the tools' schemas compiled now, on this thread: the first call may come on an event loop, which must not
        // load the validator's classes and meta-schemas
        JsonSchemaValidator validator = McpJsonDefaults.getSchemaValidator();
        specifications.forEach(t -> validator.validate(t.tool().inputSchema(), Map.of()));
        McpAsyncServer server = spec.serverInfo(settings.name, settings.version)
                .jsonSchemaValidator(validator)
                .instructions("Tools to run commands and code in sandbox sessions, each "
                        + Isolation.of(registry.providerName()) + ". create_session first, then pass its session_id"
                        + " to run_command, run_code, read_file, write_file and list_files; destroy_session when"
                        + " done.")
                .capabilities(
                        McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(specifications)
                .build();
        servers.add(server);
        return server;
    }

    /**
     * Stops serving (stdio returns, HTTP sessions end) and destroys every session the tools created. Blocks up to
     * about 30 seconds; idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        closers.forEach(Runnable::run);
        for (McpAsyncServer server : servers) {
            try {
                server.closeGracefully().block(Duration.ofSeconds(5));
            } catch (RuntimeException e) {
                LOG.debug("closing an MCP transport failed: {}", e.toString());
            }
        }
        servers.clear();
        registry.destroyAll(Duration.ofSeconds(30));
    }

    @Override
    public String toString() {
        return "SandboxMcpServer{provider=" + registry.providerName() + ", maxSessions=" + registry.max() + "}";
    }

    /**
     * Configures a {@link SandboxMcpServer}.
     *
     * <pre>{@code
     * SandboxMcpServer mcp = SandboxMcpServer.builder(provider)
     *         .sessionOptions(SessionOptions.defaults().withLifetime(Duration.ofMinutes(30)))
     *         .limits(ToolLimits.defaults().withMaxOutputBytes(8192))
     *         .maxSessions(8)
     *         .build();
     * }</pre>
     */
    public static final class Builder {
        private final SandboxProvider provider;
        private ToolLimits limits = ToolLimits.defaults();
        private SessionOptions sessionOptions = SessionOptions.defaults();
        private int maxSessions = 8;
        private @Nullable SandboxPool pool;
        private int maxClients = 64;
        private Duration heartbeat = Duration.ofSeconds(15);
        private String name = "sandbox";
        private String version = defaultVersion();

        private Builder(SandboxProvider provider) {
            this.provider = Objects.requireNonNull(provider, "provider");
        }

        private static String defaultVersion() {
            String v = SandboxMcpServer.class.getPackage().getImplementationVersion();
            return v != null ? v : "0.1.0-SNAPSHOT";
        }

        /**
         * Sets the bounds of every tool call ({@link ToolLimits#defaults()} by default); a call's {@code
         * timeout_seconds} may shorten the timeout, never lengthen it.
         *
         * @param limits the limits
         * @return this builder
         */
        public Builder limits(ToolLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /**
         * Sets the options every session the tools create starts from (labels and a lifetime the model chooses are
         * added); {@link SessionOptions#defaults()} by default.
         *
         * @param options the options
         * @return this builder
         */
        public Builder sessionOptions(SessionOptions options) {
            this.sessionOptions = Objects.requireNonNull(options, "options").validate();
            return this;
        }

        /**
         * Serves {@code create_session} from a warm pool: the call takes a warm session, with its labels and lifetime
         * (when it gives them) set at the claim; on a provider that cannot label a running session a call with labels
         * is created cold, as without a pool. {@code destroy_session} gives the session back to the pool, which
         * destroys it and makes a fresh one.
         *
         * <p>The pool must be built on this server's provider with the {@linkplain #sessionOptions(SessionOptions)
         * session options} as its template; the server does not own it: close the server, then the pool, then the
         * provider.
         *
         * <pre>{@code
         * SandboxPool pool = SandboxPool.builder(provider).warm(2).build();
         * SandboxMcpServer mcp = SandboxMcpServer.builder(provider).pool(pool).build();
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
         * Sets the most sessions the tools keep at once, all callers together (8 by default); {@code create_session}
         * beyond it is a tool error.
         *
         * @param maxSessions from 1 to 1024
         * @return this builder
         * @throws InvalidArgumentException naming {@code maxSessions} when out of range
         */
        public Builder maxSessions(int maxSessions) {
            if (maxSessions < 1 || maxSessions > 1024) {
                throw new InvalidArgumentException(
                        "maxSessions", "maxSessions must be from 1 to 1024, got " + maxSessions);
            }
            this.maxSessions = maxSessions;
            return this;
        }

        /**
         * Sets the most MCP client sessions the HTTP transport keeps at once (64 by default); an {@code initialize}
         * beyond it is answered 503 unless a session quiet for 30 minutes can be dropped.
         *
         * @param maxClients from 1 to 10000
         * @return this builder
         * @throws InvalidArgumentException naming {@code maxClients} when out of range
         */
        public Builder maxClients(int maxClients) {
            if (maxClients < 1 || maxClients > 10_000) {
                throw new InvalidArgumentException(
                        "maxClients", "maxClients must be from 1 to 10000, got " + maxClients);
            }
            this.maxClients = maxClients;
            return this;
        }

        /**
         * Sets the name and version the server announces to clients ({@code sandbox} and the SDK's version by
         * default).
         *
         * @param name the name
         * @param version the version
         * @return this builder
         */
        public Builder serverInfo(String name, String version) {
            this.name = Objects.requireNonNull(name, "name");
            this.version = Objects.requireNonNull(version, "version");
            return this;
        }

        /**
         * Builds the server; nothing is served until {@link SandboxMcpServer#serveStdio} or {@link
         * SandboxMcpServer#httpEndpoint()}.
         *
         * @return the server
         */
        public SandboxMcpServer build() {
            return new SandboxMcpServer(this);
        }
    }
}
