package dev.sandbox.server.implementation;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.Wrapped;
import dev.sandbox.implementation.exec.BatchedExec;
import dev.sandbox.implementation.exec.Framed;
import dev.sandbox.implementation.wire.LineBatch;
import dev.sandbox.implementation.wire.RequestBodies;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.util.context.Context;

/**
 * What the routes of every resource share, in one place: the server's state ({@link State}), the guard every route
 * goes through (the bearer token is checked first, errors become JSON answers through {@link ErrorMapping}, and
 * nothing a request does can stop the server from serving the next), and the reading of a request (path and query
 * parameters, a JSON body, the tenant's session). Each resource's routes ({@link SessionRoutes}, {@link ExecRoutes},
 * {@link ProcessRoutes}, {@link FileRoutes}, {@link WatchRoutes}, {@link PtyRoutes}) extend it and add theirs in
 * {@link #register}.
 */
abstract class Routes {
    /** The longest a client may wait for an exit in one request. */
    static final long MAX_EXIT_WAIT_MS = 30_000;

    /** What a route does with a request. */
    @FunctionalInterface
    interface Handler {
        /**
         * Handles a request.
         *
         * @param req the request
         * @param res the response
         * @return completes when the answer is sent
         */
        Publisher<Void> handle(HttpServerRequest req, HttpServerResponse res);
    }

    final ServerConfig config;
    final WorkdirRoot workdirs;
    final Sessions sessions;
    final ExecRegistry execs;
    final ExecLimit limit;
    final StdinRelays stdins;
    final PtySockets ptys;
    final State state;

    /**
     * Routes over the server's state.
     *
     * @param state the state every route shares
     */
    Routes(State state) {
        this.state = state;
        this.config = state.config;
        this.workdirs = state.workdirs;
        this.sessions = state.sessions;
        this.execs = state.execs;
        this.limit = state.limit;
        this.stdins = state.stdins;
        this.ptys = state.ptys;
    }

    /**
     * Registers this resource's routes, each through {@link #guard}.
     *
     * @param routes reactor-netty's routes
     */
    abstract void register(HttpServerRoutes routes);

    /**
     * Wraps a handler: token, shutdown, activity, and errors as JSON answers.
     *
     * @param fileRoute whether path refusals are 403 on this route
     * @param handler the handler
     * @return the wrapped handler
     */
    BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> guard(boolean fileRoute, Handler handler) {
        return state.guard(fileRoute, handler);
    }

    static String param(HttpServerRequest req, String name) {
        String v = req.param(name);
        if (v == null || v.isEmpty()) {
            throw new HttpError(400, "MissingParameter", "the path parameter '" + name + "' is required");
        }
        return v;
    }

    static String requiredQuery(HttpServerRequest req, String name) {
        String v = Http.query(req, name);
        if (v == null) {
            throw new HttpError(400, "MissingParameter", "the query parameter '" + name + "' is required");
        }
        return v;
    }

    static int intQuery(HttpServerRequest req, String name, int dflt) {
        long v = Http.longQuery(req, name, dflt);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new InvalidArgumentException(name, name + " is out of range: " + v);
        }
        return (int) v;
    }

    static String textField(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || !v.isTextual()) {
            throw new HttpError(400, "MissingParameter", "the body field '" + field + "' is required as a string");
        }
        return v.asText();
    }

    /** Runs an operation on a session of the request's tenant, noting what its errors say about the session. */
    <T> Mono<T> withSession(HttpServerRequest req, Function<SandboxSession, Mono<T>> op) {
        return withSession(param(req, "id"), op);
    }

    /** Runs an operation on the tenant's session of that id (a route that parses its own path). */
    <T> Mono<T> withSession(String id, Function<SandboxSession, Mono<T>> op) {
        return tenant(t -> sessions.lookup(id, t)).flatMap(op).doOnError(t -> sessions.observe(id, t));
    }

    /** Something done for the request's tenant (set by {@link #guard}). */
    static <T> Mono<T> tenant(Function<Tenant, Mono<T>> op) {
        return Mono.deferContextual(ctx -> op.apply(ctx.get(Tenant.class)));
    }

    /** Checks that the request's session is its tenant's (404 otherwise, as for a missing one), then goes on. */
    <T> Mono<T> inOwnSession(HttpServerRequest req, java.util.function.Supplier<Mono<T>> then) {
        return withSession(req, Mono::just).flatMap(s -> then.get());
    }

    /**
     * The request's JSON body, which every route that reads one wants as an object.
     *
     * @param req the request
     * @return the body; a 400 naming the body when it is not a JSON object
     */
    Mono<JsonNode> body(HttpServerRequest req) {
        return Http.body(req, config.maxJsonBytes()).map(Routes::object);
    }

    /**
     * Checks that a request's body is a JSON object: {@code null}, an array, a number, a string or a boolean is a 400
     * naming the body and what it was.
     *
     * @param body the parsed body
     * @return the body
     * @throws InvalidArgumentException when it is not an object
     */
    static JsonNode object(JsonNode body) {
        if (!body.isObject()) {
            throw new InvalidArgumentException(
                    "body",
                    "body must be a JSON object, got "
                            + body.getNodeType().name().toLowerCase(java.util.Locale.ROOT));
        }
        return body;
    }

    /** Options from a request, with stdin joined to its upload when the request names one. */
    ExecOptions options(RequestBodies.ExecBody body) {
        ExecOptions o = body.options();
        String stdinId = body.stdinId();
        return stdinId == null ? o : o.withStdin(stdins.stdin(stdinId));
    }

    Mono<RequestBodies.ExecBody> execBody(HttpServerRequest req) {
        return body(req).map(n -> RequestBodies.read(n, RequestBodies.ExecBody.class));
    }

    /**
     * Opens (or joins, for an id already open in the same session) the streaming exec of a command.
     *
     * @param s the session
     * @param options the options, stdin joined
     * @param stdinId the stdin upload's id, abandoned when the command ends, or {@code null}
     * @param execId the exec's id
     * @return the exec's channel, started
     */
    ExecChannel openExec(SandboxSession s, ExecOptions options, String stdinId, String execId) {
        return openExec(s, options, stdinId, execId, limit::acquire);
    }

    /**
     * Opens (or joins) the streaming exec of a command, with a slot of the exec limit taken as given.
     *
     * @param s the session
     * @param options the options, stdin joined
     * @param stdinId the stdin upload's id, abandoned when the command ends, or {@code null}
     * @param execId the exec's id
     * @param slot takes the slot (called only when the exec is new), giving its release action
     * @return the exec's channel, started
     */
    ExecChannel openExec(
            SandboxSession s,
            ExecOptions options,
            String stdinId,
            String execId,
            java.util.function.Supplier<Runnable> slot) {
        return execs.open(
                execId,
                s.id(),
                // bounds one event: a line, or a chunk of byte output in base64
                options.byteOutput()
                        ? Math.max(options.maxLineLength(), ExecEvent.Chunk.MAX_BYTES / 3 * 4 + 256)
                        : options.maxLineLength(),
                slot,
                // a session that batches lines itself saves a string and an event per line
                () -> batchedExec(s, options).doFinally(sig -> {
                    if (stdinId != null) {
                        stdins.abandon(stdinId);
                    }
                }));
    }

    /**
     * A command's items with runs of lines batched by the session itself when it can, saving a string per line: the
     * session's own {@link BatchedExec}, found through the decorators that say what they wrap ({@link Wrapped}).
     */
    static Flux<Framed<LineBatch>> batchedExec(SandboxSession s, ExecOptions options) {
        Optional<BatchedExec> batched = Wrapped.find(s, BatchedExec.class);
        if (batched.isPresent()) {
            return batched.get().execBatches(options, LineBatch.RUNS);
        }
        return s.exec(options).map(Framed.Event::new);
    }

    /**
     * Whether the server is shutting down.
     *
     * @return {@code true} once it drains
     */
    boolean draining() {
        return state.draining();
    }

    /** Notes activity (a command started), which keeps an idle-shutdown server up. */
    void active() {
        state.lastActivityMillis.set(System.currentTimeMillis());
    }

    /** The state every route shares: the settings, the registries, the limits, and whether the server is draining. */
    static final class State {
        private static final Logger LOG = LoggerFactory.getLogger(Api.class);

        final ServerConfig config;
        final WorkdirRoot workdirs;
        final Sessions sessions;
        final ExecRegistry execs;
        final ExecLimit limit;
        final StdinRelays stdins;
        final PtySockets ptys = new PtySockets();
        final Auth auth;
        final long startedNanos = System.nanoTime();
        final AtomicLong lastActivityMillis = new AtomicLong(System.currentTimeMillis());
        /** Command channels open now. */
        final java.util.concurrent.atomic.AtomicInteger channelsOpen = new java.util.concurrent.atomic.AtomicInteger();
        /** Commands started over command channels. */
        final java.util.concurrent.atomic.LongAdder channelCommands = new java.util.concurrent.atomic.LongAdder();

        private final ConnectionGuard connections;
        private volatile boolean draining;

        /**
         * Creates the routes' state.
         *
         * @param config the settings
         * @param sessions the sessions
         * @param connections the connections' guard, told which connections presented a valid token
         */
        State(ServerConfig config, Sessions sessions, ConnectionGuard connections) {
            this.connections = connections;
            this.workdirs =
                    new WorkdirRoot(config.workdirRoot(), sessions.provider().name());
            this.config = config;
            this.auth = new Auth(config.tokenDigests());
            this.sessions = sessions;
            this.execs = new ExecRegistry(config.execWindowBytes(), config.resumeTimeout());
            this.limit = new ExecLimit(config.maxExecs());
            this.stdins = new StdinRelays(config.stdinTimeout());
        }

        /** From now on every request is answered 503: the server is shutting down. */
        void drain() {
            draining = true;
        }

        /**
         * Whether the server is shutting down.
         *
         * @return {@code true} after {@link #drain()}
         */
        boolean draining() {
            return draining;
        }

        /**
         * Wraps a handler: token, shutdown, activity, and errors as JSON answers.
         *
         * @param fileRoute whether path refusals are 403 on this route
         * @param handler the handler
         * @return the wrapped handler
         */
        BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> guard(boolean fileRoute, Handler handler) {
            return (req, res) -> Mono.defer(() -> {
                        Tenant tenant = auth.accept(req.requestHeaders().get(HttpHeaderNames.AUTHORIZATION));
                        if (tenant == null) {
                            return Mono.error(new HttpError(
                                    401,
                                    "Unauthorized",
                                    "a valid bearer token is required (Authorization: Bearer ...)"));
                        }
                        req.withConnection(c -> connections.authenticated(c.channel()));
                        if (draining) {
                            return Mono.error(new HttpError(503, "ShuttingDown", "the server is shutting down"));
                        }
                        if (!req.fullPath().equals("/v1/ping")) {
                            lastActivityMillis.set(System.currentTimeMillis());
                        }
                        return Mono.from(handler.handle(req, res)).contextWrite(Context.of(Tenant.class, tenant));
                    })
                    .onErrorResume(t -> {
                        if (res.hasSentHeaders()) {
                            LOG.debug(
                                    "{} {} failed after the answer started: {}",
                                    req.method(),
                                    req.fullPath(),
                                    t.toString());
                            return Mono.error(t); // the connection is closed: the client sees the stream drop
                        }
                        int status = ErrorMapping.status(t, fileRoute);
                        if (status >= 500 && status != 502 && status != 503) {
                            LOG.warn("{} {} failed", req.method(), req.fullPath(), t);
                        }
                        return Http.error(res, t, fileRoute);
                    });
        }
    }
}
