package dev.sandbox.server.implementation;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.WriteOptions;
import dev.sandbox.implementation.Version;
import dev.sandbox.implementation.exec.BatchedExec;
import dev.sandbox.implementation.exec.Framed;
import dev.sandbox.implementation.files.SandboxTree;
import dev.sandbox.implementation.files.TarCodec;
import dev.sandbox.implementation.wire.LineBatch;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import dev.sandbox.implementation.wire.StreamFrames;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.util.context.Context;

/**
 * The {@code /v1/} routes. Every route goes through {@link #guard}: the bearer token is checked first, errors become
 * JSON answers through {@link ErrorMapping}, and nothing a request does can stop the server from serving the next.
 *
 * <p>Adding a route is one line in {@link #register}. The PTY WebSocket routes are plain GETs through the same guard
 * that upgrade once the token, the session and the PTY have been checked (see {@link PtySockets}).
 */
public final class Api {
    private static final Logger LOG = LoggerFactory.getLogger(Api.class);
    /** Download chunks are cut to this size, bounding what waits in a connection's outbound buffer. */
    private static final int DOWNLOAD_SLICE = 16 * 1024;

    /** The largest body of {@code files/batch}: its contents are base64 in JSON, held in memory while written. */
    private static final long MAX_BATCH_BYTES = 32L << 20;
    /** The most sessions one lease renewal may name (the remote provider sends at most 512). */
    private static final int MAX_LEASES_PER_RENEWAL = 1024;
    /** The longest a client may wait for an exit in one request. */
    private static final long MAX_EXIT_WAIT_MS = 30_000;

    /** What a route does with a request. */
    @FunctionalInterface
    public interface Handler {
        /**
         * Handles a request.
         *
         * @param req the request
         * @param res the response
         * @return completes when the answer is sent
         */
        Publisher<Void> handle(HttpServerRequest req, HttpServerResponse res);
    }

    private final ServerConfig config;
    private final ConnectionGuard connections;
    private final WorkdirRoot workdirs;
    private final Auth auth;
    private final Sessions sessions;
    private final ExecRegistry execs;
    private final ExecLimit limit;
    private final StdinRelays stdins;
    private final PtySockets ptys = new PtySockets();
    private final long startedNanos = System.nanoTime();
    private final AtomicLong lastActivityMillis = new AtomicLong(System.currentTimeMillis());
    private volatile boolean draining;
    private Map<String, dev.sandbox.server.ServerEndpoint> endpoints = Map.of();

    /**
     * Creates the routes' state.
     *
     * @param config the settings
     * @param sessions the sessions
     * @param connections the connections' guard, told which connections presented a valid token
     */
    public Api(ServerConfig config, Sessions sessions, ConnectionGuard connections) {
        // bindings made now, on the starting thread: made on first use, they take a lock an event loop would park on
        dev.sandbox.implementation.wire.RequestBodies.prepare();
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

    /**
     * The tenants, one per token.
     *
     * @return the tenants
     */
    public List<Tenant> tenants() {
        return auth.tenants();
    }

    /**
     * Sets the extra endpoints, by the path each is mounted under; call before {@link #register}.
     *
     * @param endpoints the endpoints
     */
    public void mount(Map<String, dev.sandbox.server.ServerEndpoint> endpoints) {
        this.endpoints = Map.copyOf(endpoints);
    }

    /** Tells every extra endpoint that the server is stopping (after {@link #drain()}); an endpoint's failure is logged. */
    public void stopEndpoints() {
        endpoints.forEach((path, endpoint) -> {
            try {
                endpoint.stop();
            } catch (RuntimeException e) {
                LOG.warn("the endpoint at {} failed to stop", path, e);
            }
        });
    }

    /** From now on every request is answered 503: the server is shutting down. */
    public void drain() {
        draining = true;
    }

    /**
     * The streaming execs.
     *
     * @return the registry
     */
    public ExecRegistry execs() {
        return execs;
    }

    /**
     * The sessions.
     *
     * @return the registry
     */
    public Sessions sessions() {
        return sessions;
    }

    /**
     * Registers every route.
     *
     * @param routes reactor-netty's routes
     */
    public void register(HttpServerRoutes routes) {
        routes.get("/v1/ping", guard(false, this::ping));

        routes.post("/v1/sessions", guard(false, this::createSession));
        routes.get("/v1/sessions", guard(false, this::listSessions));
        routes.post("/v1/leases", guard(false, this::renewLeases));
        routes.get("/v1/sessions/{id}", guard(false, this::getSession));
        routes.delete("/v1/sessions/{id}", guard(false, this::destroySession));
        routes.get("/v1/sessions/{id}/status", guard(false, this::status));
        routes.put("/v1/sessions/{id}/lifetime", guard(false, this::setLifetime));
        routes.put("/v1/sessions/{id}/idle-timeout", guard(false, this::setIdleTimeout));

        routes.post("/v1/sessions/{id}/run", guard(false, this::run));
        routes.post("/v1/sessions/{id}/exec", guard(false, this::exec));
        routes.get("/v1/sessions/{id}/execs/{exec}/events", guard(false, this::execEvents));
        routes.post("/v1/sessions/{id}/execs/{exec}/ack", guard(false, this::execAck));
        routes.delete("/v1/sessions/{id}/execs/{exec}", guard(false, this::execRelease));
        routes.put("/v1/sessions/{id}/stdin/{stdin}", guard(false, this::stdinUpload));

        routes.post("/v1/sessions/{id}/processes", guard(false, this::startProcess));
        routes.get("/v1/sessions/{id}/processes", guard(false, this::listProcesses));
        routes.get("/v1/sessions/{id}/processes/{pid}", guard(false, this::getProcess));
        routes.get("/v1/sessions/{id}/processes/{pid}/exit", guard(false, this::processExit));
        routes.get("/v1/sessions/{id}/processes/{pid}/output", guard(false, this::processOutput));
        routes.post("/v1/sessions/{id}/processes/{pid}/signal", guard(false, this::processSignal));
        routes.post("/v1/sessions/{id}/processes/{pid}/kill", guard(false, this::processKill));
        routes.post("/v1/sessions/{id}/processes/{pid}/stdin", guard(false, this::processStdin));
        routes.post("/v1/sessions/{id}/processes/{pid}/stdin/close", guard(false, this::processStdinClose));
        routes.post("/v1/sessions/{id}/processes/{pid}/collect", guard(false, this::processCollect));

        routes.get("/v1/sessions/{id}/files/content", guard(true, this::fileRead));
        routes.put("/v1/sessions/{id}/files/content", guard(true, this::fileWrite));
        routes.post("/v1/sessions/{id}/files/batch", guard(true, this::fileWriteAll));
        routes.get("/v1/sessions/{id}/files/list", guard(true, this::fileList));
        routes.get("/v1/sessions/{id}/files/stat", guard(true, this::fileStat));
        routes.post("/v1/sessions/{id}/files/mkdir", guard(true, this::fileMkdir));
        routes.delete("/v1/sessions/{id}/files", guard(true, this::fileRemove));
        routes.post("/v1/sessions/{id}/files/move", guard(true, this::fileMove));
        routes.get("/v1/sessions/{id}/files/watch", guard(true, this::fileWatch));
        routes.get("/v1/sessions/{id}/files/tree", guard(true, this::treeRead));
        routes.put("/v1/sessions/{id}/files/tree", guard(true, this::treeWrite));

        routes.post("/v1/sessions/{id}/ptys", guard(false, this::openPty));
        routes.get("/v1/sessions/{id}/ptys", guard(false, this::openPtySocket));
        routes.get("/v1/sessions/{id}/ptys/{pty}", guard(false, this::getOrAttachPty));
        routes.get("/v1/sessions/{id}/ptys/{pty}/exit", guard(false, this::ptyExit));
        routes.post("/v1/sessions/{id}/ptys/{pty}/input", guard(false, this::ptyInput));
        routes.post("/v1/sessions/{id}/ptys/{pty}/resize", guard(false, this::ptyResize));
        routes.post("/v1/sessions/{id}/ptys/{pty}/signal", guard(false, this::ptySignal));
        routes.post("/v1/sessions/{id}/ptys/{pty}/kill", guard(false, this::ptyKill));

        endpoints.forEach((path, endpoint) -> routes.route(
                req -> {
                    String p = req.fullPath();
                    return p.equals(path) || p.startsWith(path + "/");
                },
                guard(false, (req, res) -> serveEndpoint(endpoint, req, res))));
        routes.route(req -> true, guard(false, this::notFound));
    }

    /**
     * Wraps a handler: token, shutdown, activity, and errors as JSON answers.
     *
     * @param fileRoute whether path refusals are 403 on this route
     * @param handler the handler
     * @return the wrapped handler
     */
    public BiFunction<HttpServerRequest, HttpServerResponse, Publisher<Void>> guard(
            boolean fileRoute, Handler handler) {
        return (req, res) -> Mono.defer(() -> {
                    Tenant tenant = auth.accept(req.requestHeaders().get(HttpHeaderNames.AUTHORIZATION));
                    if (tenant == null) {
                        return Mono.error(new HttpError(
                                401, "Unauthorized", "a valid bearer token is required (Authorization: Bearer ...)"));
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

    /** Hands a request to an extra endpoint and writes its answer, each body chunk flushed as it comes. */
    private Mono<Void> serveEndpoint(
            dev.sandbox.server.ServerEndpoint endpoint, HttpServerRequest req, HttpServerResponse res) {
        return tenant(t -> {
            Map<String, List<String>> headers = new LinkedHashMap<>();
            req.requestHeaders()
                    .forEach(h -> headers.computeIfAbsent(
                                    h.getKey().toLowerCase(java.util.Locale.ROOT), k -> new java.util.ArrayList<>())
                            .add(h.getValue()));
            headers.replaceAll((k, v) -> List.copyOf(v));
            var request = new dev.sandbox.server.ServerEndpoint.Request(
                    req.method().name(), req.fullPath(), headers, t.name(), Http.bytes(req, config.maxJsonBytes()));
            return Mono.defer(() -> endpoint.handle(request)).flatMap(answer -> {
                res.status(answer.status());
                answer.headers().forEach(res::header);
                return res.send(answer.body().map(Unpooled::wrappedBuffer), b -> true)
                        .then();
            });
        });
    }

    private Mono<Void> notFound(HttpServerRequest req, HttpServerResponse res) {
        return Mono.error(new HttpError(404, "RouteNotFound", "no route for " + req.method() + " " + req.fullPath()));
    }

    // ------------------------------------------------------------------ helpers

    private static String param(HttpServerRequest req, String name) {
        String v = req.param(name);
        if (v == null || v.isEmpty()) {
            throw new HttpError(400, "MissingParameter", "the path parameter '" + name + "' is required");
        }
        return v;
    }

    private static String requiredQuery(HttpServerRequest req, String name) {
        String v = Http.query(req, name);
        if (v == null) {
            throw new HttpError(400, "MissingParameter", "the query parameter '" + name + "' is required");
        }
        return v;
    }

    /** Runs an operation on a session of the request's tenant, noting what its errors say about the session. */
    private <T> Mono<T> withSession(HttpServerRequest req, Function<SandboxSession, Mono<T>> op) {
        String id = param(req, "id");
        return tenant(t -> sessions.lookup(id, t)).flatMap(op).doOnError(t -> sessions.observe(id, t));
    }

    /** Something done for the request's tenant (set by {@link #guard}). */
    private static <T> Mono<T> tenant(Function<Tenant, Mono<T>> op) {
        return Mono.deferContextual(ctx -> op.apply(ctx.get(Tenant.class)));
    }

    /** Checks that the request's session is its tenant's (404 otherwise, as for a missing one), then goes on. */
    private <T> Mono<T> inOwnSession(HttpServerRequest req, java.util.function.Supplier<Mono<T>> then) {
        return withSession(req, Mono::just).flatMap(s -> then.get());
    }

    private Mono<JsonNode> body(HttpServerRequest req) {
        return Http.body(req, config.maxJsonBytes());
    }

    private Mono<BackgroundProcess> process(HttpServerRequest req, SandboxSession s) {
        return s.process(param(req, "pid"));
    }

    private static ResourceBodies.SessionInfoBody sessionJson(SandboxSession s, String provider) {
        return ResourceBodies.SessionInfoBody.handle(s.id(), provider, Tenant.visible(s.labels()));
    }

    private static ResourceBodies.ProcessInfoBody processJson(BackgroundProcess p) {
        ExecEvent.Exit exit = p.exitNow().orElse(null);
        return ResourceBodies.ProcessInfoBody.of(new ProcessInfo(
                p.id(), p.argv(), p.pid().orElse(-1), p.startedAt(), exit == null, exit == null ? null : exit.code()));
    }

    // ------------------------------------------------------------------ server and sessions

    private Mono<Void> ping(HttpServerRequest req, HttpServerResponse res) {
        return Http.json(
                res,
                200,
                new ResourceBodies.ServerStatusBody(
                        draining ? "stopping" : "ok",
                        Version.get(),
                        (System.nanoTime() - startedNanos) / 1_000_000,
                        Instant.ofEpochMilli(lastActivityMillis.get()),
                        limit.running(),
                        ptys.running(),
                        ptys.attached(),
                        sessions.ownedCount(),
                        sessions.provider().name()));
    }

    private Mono<Void> createSession(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .map(n -> RequestBodies.read(n, RequestBodies.SessionBody.class).options())
                .flatMap(this::create)
                .flatMap(s -> Http.json(res, 201, leasedJson(s)));
    }

    private Mono<SandboxSession> create(SessionOptions options) {
        return workdirs.check(options).flatMap(checked -> tenant(t -> sessions.create(checked, t)));
    }

    private Mono<Void> listSessions(HttpServerRequest req, HttpServerResponse res) {
        Map<String, String> labels = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> e : Http.params(req).entrySet()) {
            if (e.getKey().startsWith("label.") && !e.getValue().isEmpty()) {
                labels.put(e.getKey().substring("label.".length()), e.getValue().get(0));
            }
        }
        return tenant(t -> sessions.list(labels, t).collectList()).flatMap(list -> {
            return Http.json(res, 200, ResourceBodies.SessionList.of(list));
        });
    }

    /** A session's handle with its lease, if it has one. */
    private ResourceBodies.SessionInfoBody leasedJson(SandboxSession s) {
        return ResourceBodies.SessionInfoBody.leased(
                s.id(), sessions.provider().name(), Tenant.visible(s.labels()), sessions.leaseMs(s.id()));
    }

    private Mono<Void> renewLeases(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .map(n ->
                        RequestBodies.read(n, ResourceBodies.LeaseRenewal.class).ids())
                .flatMap(ids -> tenant(t -> sessions.renew(ids, t)))
                .flatMap(renewed -> Http.json(
                        res,
                        200,
                        new ResourceBodies.LeaseAnswer(renewed, sessions.lease().toMillis())));
    }

    private Mono<Void> getSession(HttpServerRequest req, HttpServerResponse res) {
        String id = param(req, "id");
        return tenant(t -> sessions.attach(id, t)).flatMap(s -> Http.json(res, 200, leasedJson(s)));
    }

    private Mono<Void> destroySession(HttpServerRequest req, HttpServerResponse res) {
        String id = param(req, "id");
        return tenant(t -> sessions.destroy(id, t)).then(Http.noContent(res));
    }

    private Mono<Void> status(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, SandboxSession::ping)
                .flatMap(s -> Http.json(res, 200, ResourceBodies.SessionStatusBody.of(s)));
    }

    private Mono<Void> setLifetime(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .map(n ->
                        RequestBodies.read(n, RequestBodies.DurationBody.class).duration("lifetime"))
                .flatMap(d -> withSession(req, s -> s.setLifetime(d).thenReturn(d)))
                .then(Http.noContent(res));
    }

    private Mono<Void> setIdleTimeout(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .map(n ->
                        RequestBodies.read(n, RequestBodies.DurationBody.class).duration("idleTimeout"))
                .flatMap(d -> withSession(req, s -> s.setIdleTimeout(d).thenReturn(d)))
                .then(Http.noContent(res));
    }

    // ------------------------------------------------------------------ commands

    /** Options from a request, with stdin joined to its upload when the request names one. */
    private ExecOptions options(RequestBodies.ExecBody body) {
        ExecOptions o = body.options();
        String stdinId = body.stdinId();
        return stdinId == null ? o : o.withStdin(stdins.stdin(stdinId));
    }

    private Mono<RequestBodies.ExecBody> execBody(HttpServerRequest req) {
        return body(req).map(n -> RequestBodies.read(n, RequestBodies.ExecBody.class));
    }

    private Mono<Void> run(HttpServerRequest req, HttpServerResponse res) {
        return execBody(req).flatMap(n -> {
            ExecOptions options = options(n);
            String stdinId = n.stdinId();
            return withSession(
                            req,
                            s -> Mono.defer(() -> {
                                Runnable slot = limit.acquire();
                                // a session that can answers on the connection's event loop, where it is written
                                Mono<ExecResult> result = s instanceof BatchedExec direct
                                        ? direct.run(options, loopScheduler(res))
                                        : s.run(options);
                                return result.doFinally(sig -> slot.run());
                            }))
                    .doFinally(sig -> {
                        if (stdinId != null) {
                            stdins.abandon(stdinId);
                        }
                    })
                    .flatMap(r -> Http.json(res, 200, ResourceBodies.ExecResultBody.of(r)));
        });
    }

    private Mono<Void> exec(HttpServerRequest req, HttpServerResponse res) {
        Http.Format format = Http.format(req);
        return execBody(req).flatMap(n -> {
            ExecOptions options = options(n);
            String stdinId = n.stdinId();
            String execId = n.id() != null ? n.id() : newExecId();
            return withSession(
                            req,
                            s -> Mono.fromCallable(() -> execs.open(
                                    execId,
                                    s.id(),
                                    // bounds one event: a line, or a chunk of byte output in base64
                                    options.byteOutput()
                                            ? Math.max(options.maxLineLength(), ExecEvent.Chunk.MAX_BYTES / 3 * 4 + 256)
                                            : options.maxLineLength(),
                                    limit::acquire,
                                    // a session that batches lines itself saves a string and an event per line
                                    () -> batchedExec(s, options).doFinally(sig -> {
                                        if (stdinId != null) {
                                            stdins.abandon(stdinId);
                                        }
                                    }))))
                    .flatMap(channel -> sendExec(req, res, channel, -1, -1, format));
        });
    }

    /** A command's items with runs of lines batched by the session itself when it can, saving a string per line. */
    private static Flux<Framed<LineBatch>> batchedExec(SandboxSession s, ExecOptions options) {
        if (s instanceof BatchedExec batched) {
            return batched.execBatches(options, LineBatch.RUNS);
        }
        return s.exec(options).map(Framed.Event::new);
    }

    private static Scheduler loopScheduler(HttpServerResponse res) {
        Executor[] loop = new Executor[1];
        res.withConnection(c -> loop[0] = c.channel().eventLoop());
        return loop[0] == null ? Schedulers.parallel() : Schedulers.fromExecutor(loop[0]);
    }

    private static String newExecId() {
        java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
        return String.format("%016x%016x", r.nextLong(), r.nextLong());
    }

    private Mono<Void> sendExec(
            HttpServerRequest req,
            HttpServerResponse res,
            ExecChannel channel,
            long afterStdout,
            long afterStderr,
            Http.Format format) {
        boolean lineFrames =
                StreamFrames.BATCH_LINES.equals(req.requestHeaders().get(StreamFrames.BATCH_HEADER));
        io.netty.channel.EventLoop[] loop = new io.netty.channel.EventLoop[1];
        res.withConnection(c -> loop[0] = c.channel().eventLoop());
        Executor sender = loop[0] != null ? loop[0] : r -> Schedulers.parallel().schedule(r);
        Publisher<Http.Frame> body = channel.attach(afterStdout, afterStderr, format, lineFrames, sender);
        Http.streamHeaders(res, format)
                .header(StreamFrames.ACK_WINDOW_HEADER, Integer.toString(channel.windowLimit()))
                .header("Sandbox-Exec-Id", channel.id());
        // the frames are the window's own arrays, or one copy of a batch per frame: a deep prefetch costs at most
        // another window
        return res.send(Http.packed(res, format, Flux.from(body), config.heartbeat(), 1024))
                .then();
    }

    private Mono<Void> execEvents(HttpServerRequest req, HttpServerResponse res) {
        long afterStdout = Http.longQuery(req, "afterStdout", -1);
        long afterStderr = Http.longQuery(req, "afterStderr", -1);
        String lastEventId = req.requestHeaders().get("Last-Event-ID");
        if (lastEventId != null && Http.query(req, "afterStdout") == null) {
            String[] parts = lastEventId.split(":");
            try {
                afterStdout = Long.parseLong(parts[0].trim());
                afterStderr = parts.length > 1 ? Long.parseLong(parts[1].trim()) : -1;
            } catch (NumberFormatException e) {
                throw new InvalidArgumentException(
                        "Last-Event-ID", "Last-Event-ID must be '<stdout>:<stderr>', got '" + lastEventId + "'");
            }
        }
        long stdoutFrom = afterStdout;
        long stderrFrom = afterStderr;
        return inOwnSession(req, () -> {
            ExecChannel channel = execs.get(param(req, "exec"), param(req, "id"));
            return sendExec(req, res, channel, stdoutFrom, stderrFrom, Http.format(req));
        });
    }

    private Mono<Void> execAck(HttpServerRequest req, HttpServerResponse res) {
        return body(req).flatMap(n -> {
            RequestBodies.AckBody ack = RequestBodies.read(n, RequestBodies.AckBody.class);
            return inOwnSession(req, () -> {
                ExecChannel channel = execs.get(param(req, "exec"), param(req, "id"));
                channel.ack(ack.stdoutOffset(), ack.stderrOffset());
                return Http.noContent(res);
            });
        });
    }

    private Mono<Void> execRelease(HttpServerRequest req, HttpServerResponse res) {
        return inOwnSession(req, () -> {
            try {
                execs.get(param(req, "exec"), param(req, "id")).release();
            } catch (HttpError e) {
                // releasing an exec that is gone already is fine
            }
            return Http.noContent(res);
        });
    }

    private Mono<Void> stdinUpload(HttpServerRequest req, HttpServerResponse res) {
        return inOwnSession(req, () -> stdins.upload(param(req, "stdin"), Http.rawBody(req)))
                .then(Http.noContent(res));
    }

    // ------------------------------------------------------------------ background processes

    private Mono<Void> startProcess(HttpServerRequest req, HttpServerResponse res) {
        return execBody(req).flatMap(n -> {
            ExecOptions options = options(n);
            BackgroundOptions background = n.background();
            return withSession(
                            req,
                            s -> Mono.defer(() -> {
                                Runnable slot = limit.acquire();
                                return s.start(options, background)
                                        .doOnNext(p -> p.exit().subscribe(x -> slot.run(), e -> slot.run()))
                                        .doOnError(e -> slot.run())
                                        .doOnCancel(slot);
                            }))
                    .flatMap(p -> Http.json(res, 201, processJson(p)));
        });
    }

    private Mono<Void> listProcesses(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> s.processes().collectList()).flatMap(list -> {
            return Http.json(res, 200, ResourceBodies.ProcessList.of(list));
        });
    }

    /** The session's PTYs, as {@code {"processes":[...]}} like the background processes' listing. */
    private Mono<Void> listPtys(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> s.ptys().collectList())
                .flatMap(list -> Http.json(res, 200, ResourceBodies.ProcessList.of(list)));
    }

    private Mono<Void> getProcess(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> process(req, s)).flatMap(p -> Http.json(res, 200, processJson(p)));
    }

    private Mono<Void> processExit(HttpServerRequest req, HttpServerResponse res) {
        long wait = Math.max(0, Math.min(MAX_EXIT_WAIT_MS, Http.longQuery(req, "waitMs", 0)));
        return withSession(req, s -> process(req, s))
                .flatMap(p -> wait == 0
                        ? Mono.justOrEmpty(p.exitNow())
                        : p.exit().timeout(Duration.ofMillis(wait), Mono.empty()))
                .flatMap(x -> Http.json(res, 200, ResourceBodies.ExitBody.of(x)))
                .switchIfEmpty(Mono.defer(() -> Http.noContent(res)));
    }

    private Mono<Void> processOutput(HttpServerRequest req, HttpServerResponse res) {
        long afterStdout = Http.longQuery(req, "afterStdout", -1);
        long afterStderr = Http.longQuery(req, "afterStderr", -1);
        long stdout = afterStdout >= 0 ? afterStdout : Http.longQuery(req, "stdout", 0);
        long stderr = afterStderr >= 0 ? afterStderr : Http.longQuery(req, "stderr", 0);
        boolean follow = Http.boolQuery(req, "follow", true);
        Http.Format format = Http.format(req);
        return withSession(req, s -> process(req, s)).flatMap(p -> {
            long[] last = {afterStdout, afterStderr};
            Flux<ExecEvent> events = follow ? p.output(stdout, stderr) : p.snapshot(stdout, stderr);
            Flux<Http.Frame> frames = events.<Http.Frame>handle((e, sink) -> {
                        if (e instanceof ExecEvent.Line l) {
                            int stream = l.stream() == ExecEvent.StreamKind.STDOUT ? 0 : 1;
                            if (l.offset() <= last[stream]) {
                                return; // the line resumed at, delivered before
                            }
                            last[stream] = l.offset();
                            sink.next(new Http.Frame(
                                    stream == 0 ? "stdout" : "stderr", StreamFrames.event(e), last[0] + ":" + last[1]));
                        } else if (e instanceof ExecEvent.Chunk c) {
                            int stream = c.stream() == ExecEvent.StreamKind.STDOUT ? 0 : 1;
                            if (c.offset() <= last[stream]) {
                                return; // the chunk resumed at, delivered before
                            }
                            last[stream] = c.offset();
                            sink.next(new Http.Frame("chunk", StreamFrames.event(e), last[0] + ":" + last[1]));
                        } else {
                            sink.next(new Http.Frame("exit", StreamFrames.event(e), null));
                        }
                    })
                    .concatWith(follow ? Flux.empty() : Flux.just(new Http.Frame("end", StreamFrames.END_EVENT, null)));
            return Http.stream(res, format, frames, config.heartbeat());
        });
    }

    private Mono<Void> processSignal(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .flatMap(n -> {
                    int signal = RequestBodies.read(n, RequestBodies.SignalBody.class)
                            .number();
                    return withSession(req, s -> process(req, s).flatMap(p -> p.signal(signal)));
                })
                .then(Http.noContent(res));
    }

    private Mono<Void> processKill(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> process(req, s).flatMap(BackgroundProcess::kill))
                .then(Http.noContent(res));
    }

    private Mono<Void> processStdin(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> process(req, s))
                .flatMap(p -> Http.rawBody(req).concatMap(p::writeStdin, 1).then())
                .then(Http.noContent(res));
    }

    private Mono<Void> processStdinClose(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> process(req, s).flatMap(BackgroundProcess::closeStdin))
                .then(Http.noContent(res));
    }

    private Mono<Void> processCollect(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> process(req, s).flatMap(BackgroundProcess::collect))
                .flatMap(r -> Http.json(res, 200, ResourceBodies.ExecResultBody.of(r)));
    }

    // ------------------------------------------------------------------ files

    private Mono<Void> fileRead(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        long maxBytes = Http.longQuery(req, "maxBytes", -1);
        long offset = Http.longQuery(req, "offset", 0);
        long length = Http.longQuery(req, "length", Long.MAX_VALUE);
        boolean ranged = Http.query(req, "offset") != null || Http.query(req, "length") != null;
        return withSession(req, s -> {
            SandboxFiles files = s.files();
            Flux<ByteBuffer> content = ranged ? files.read(path, offset, length) : files.read(path);
            Mono<Void> check = maxBytes < 0
                    ? Mono.empty()
                    : files.stat(path)
                            .flatMap(info -> info.type() == FileInfo.Type.FILE && info.size() > maxBytes
                                    ? Mono.error(new FileOperationException(
                                            path,
                                            FileOperationException.Reason.TOO_LARGE,
                                            path + ": " + info.size() + " bytes is over the cap of " + maxBytes,
                                            null))
                                    : Mono.empty());
            return check.then(content.switchOnFirst((first, all) -> {
                        if (first.hasError()) {
                            return Mono.error(first.getThrowable());
                        }
                        res.status(200).header(HttpHeaderNames.CONTENT_TYPE, WireJson.OCTET_STREAM);
                        return res.send(all.concatMapIterable(Api::slices, 1)).then();
                    })
                    .then());
        });
    }

    /** Cuts a chunk into slices that wrap it (no copy), so few bytes wait in the outbound buffer at once. */
    private static List<ByteBuf> slices(ByteBuffer b) {
        java.util.ArrayList<ByteBuf> out = new java.util.ArrayList<>();
        ByteBuffer rest = b.duplicate();
        while (rest.hasRemaining()) {
            int n = Math.min(DOWNLOAD_SLICE, rest.remaining());
            ByteBuffer slice = rest.slice(rest.position(), n);
            rest.position(rest.position() + n);
            out.add(Unpooled.wrappedBuffer(slice));
        }
        return out;
    }

    /** The request's body, failing with 413 once it passes the server's upload limit. */
    private Flux<ByteBuffer> uploadBody(HttpServerRequest req) {
        long max = config.maxUploadBytes();
        long[] seen = {0};
        return Http.rawBody(req).doOnNext(bytes -> {
            seen[0] += bytes.remaining();
            if (seen[0] > max) {
                throw new HttpError(413, "PayloadTooLarge", "the upload is over the limit of " + max + " bytes");
            }
        });
    }

    private Mono<Void> fileWrite(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        Flux<ByteBuffer> body = uploadBody(req);
        WriteOptions options = WriteOptions.defaults().withCreateParents(Http.boolQuery(req, "parents", true));
        return withSession(req, s -> s.files().write(path, body, options))
                .flatMap(info -> Http.json(res, 200, ResourceBodies.FileInfoBody.of(info)));
    }

    /** A directory as a tar stream ({@link TarCodec}); a failure before the first byte is a JSON error. */
    private Mono<Void> treeRead(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        return withSession(req, s -> {
            SandboxFiles files = s.files();
            return files.stat(path)
                    .flatMap(info -> info.type() == FileInfo.Type.DIRECTORY
                            ? Mono.just(info)
                            : Mono.error(new FileOperationException(
                                    path,
                                    FileOperationException.Reason.NOT_A_DIRECTORY,
                                    path + ": not a directory",
                                    null)))
                    .then(TarCodec.encode(SandboxTree.read(files, path))
                            .switchOnFirst((first, all) -> {
                                if (first.hasError()) {
                                    return Mono.error(first.getThrowable());
                                }
                                res.status(200).header(HttpHeaderNames.CONTENT_TYPE, WireJson.OCTET_STREAM);
                                return res.send(all.concatMapIterable(Api::slices, 1))
                                        .then();
                            })
                            .then());
        });
    }

    /** A tar stream written into a sandbox directory; the whole body is bounded like a file upload's. */
    private Mono<Void> treeWrite(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        Flux<ByteBuffer> body = uploadBody(req);
        return withSession(req, s -> SandboxTree.write(s.files(), TarCodec.decode(body), path, null))
                .flatMap(info -> Http.json(res, 200, ResourceBodies.FileInfoBody.of(info)));
    }

    /** Several files in one request, base64 in JSON: bounded by the upload limit and by {@link #MAX_BATCH_BYTES}. */
    private Mono<Void> fileWriteAll(HttpServerRequest req, HttpServerResponse res) {
        long limit = Math.min(MAX_BATCH_BYTES, config.maxUploadBytes() / 3 * 4 + 64 * 1024);
        return Http.body(req, (int) limit)
                .flatMap(n -> {
                    RequestBodies.BatchBody batch = RequestBodies.read(n, RequestBodies.BatchBody.class);
                    Map<String, byte[]> files = new LinkedHashMap<>();
                    for (RequestBodies.BatchFile f : batch.files()) {
                        if (f == null || f.path() == null) {
                            throw new InvalidArgumentException("files", "every file needs a path");
                        }
                        if (files.put(f.path(), f.content() == null ? new byte[0] : f.content()) != null) {
                            throw new InvalidArgumentException("files", "path '" + f.path() + "' is given twice");
                        }
                    }
                    return withSession(req, s -> s.files().writeAll(files));
                })
                .flatMap(list -> Http.json(res, 200, ResourceBodies.FileList.of(list)));
    }

    private Mono<Void> fileList(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        int depth = intQuery(req, "depth", 1);
        return withSession(req, s -> s.files().list(path, depth).collectList()).flatMap(list -> {
            return Http.json(res, 200, ResourceBodies.FileList.of(list));
        });
    }

    private Mono<Void> fileStat(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        return withSession(req, s -> s.files().stat(path))
                .flatMap(i -> Http.json(res, 200, ResourceBodies.FileInfoBody.of(i)));
    }

    private Mono<Void> fileMkdir(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .flatMap(n -> {
                    String path = textField(n, "path");
                    return withSession(req, s -> s.files().mkdir(path).thenReturn(path));
                })
                .then(Http.noContent(res));
    }

    private Mono<Void> fileRemove(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        boolean recursive = Http.boolQuery(req, "recursive", false);
        return withSession(req, s -> s.files().remove(path, recursive).thenReturn(path))
                .then(Http.noContent(res));
    }

    private Mono<Void> fileMove(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .flatMap(n -> {
                    String from = textField(n, "from");
                    String to = textField(n, "to");
                    return withSession(req, s -> s.files().move(from, to).thenReturn(to));
                })
                .then(Http.noContent(res));
    }

    private static String textField(JsonNode n, String field) {
        JsonNode v = n.get(field);
        if (v == null || !v.isTextual()) {
            throw new HttpError(400, "MissingParameter", "the body field '" + field + "' is required as a string");
        }
        return v.asText();
    }

    /**
     * Checks a path to watch before the stream starts, so that a refusal gets its status: a missing path is 404, a
     * path out of the root 403, a file 409. A symbolic link is followed by listing it.
     */
    private static Mono<FileInfo> watchable(SandboxFiles files, String path) {
        return files.stat(path).flatMap(info -> switch (info.type()) {
            case DIRECTORY -> Mono.just(info);
            case SYMLINK -> files.list(path).then(Mono.just(info));
            default ->
                Mono.error(new FileOperationException(
                        path, FileOperationException.Reason.NOT_A_DIRECTORY, path + ": not a directory", null));
        });
    }

    private Mono<Void> fileWatch(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        boolean recursive = Http.boolQuery(req, "recursive", false);
        Http.Format format = Http.format(req);
        return withSession(
                        req,
                        // "ready" goes out when the provider's watch says it is live (its READY), not when the
                        // stream opens: a client that acts on it never loses a change
                        s -> watchable(s.files(), path)
                                .map(info -> s.files()
                                        .watch(path, recursive)
                                        .map(e -> e.kind() == FileEvent.Kind.READY
                                                ? new Http.Frame("ready", StreamFrames.ready(e.path()), null)
                                                : new Http.Frame("file", StreamFrames.fileEvent(e), null))))
                .flatMap(events -> Http.stream(res, format, events, config.heartbeat()));
    }

    // ------------------------------------------------------------------ PTYs

    /** Starts a PTY in the request's session, holding one of the server's command slots until it exits. */
    private Mono<PtySession> startPty(HttpServerRequest req, PtyOptions options) {
        return withSession(
                req,
                s -> Mono.defer(() -> {
                    Runnable slot = limit.acquire();
                    return s.pty(options)
                            .doOnNext(pty -> ptys.started(pty, slot))
                            .doOnError(e -> slot.run())
                            .doOnCancel(slot);
                }));
    }

    private Mono<PtySession> pty(HttpServerRequest req) {
        String ptyId = param(req, "pty");
        return withSession(req, s -> s.attachPty(ptyId));
    }

    private Mono<Void> openPty(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .map(n -> RequestBodies.read(n, RequestBodies.PtyBody.class).options())
                .flatMap(options -> startPty(req, options))
                .flatMap(pty -> Http.json(
                        res,
                        201,
                        ResourceBodies.PtyInfoBody.of(pty.id(), pty.pid().orElse(-1), null)));
    }

    /** A WebSocket that starts a new PTY from the query ({@code argv} repeated, {@code cwd}, {@code cols}, {@code rows}). */
    private Mono<Void> openPtySocket(HttpServerRequest req, HttpServerResponse res) {
        Map<String, List<String>> q = Http.params(req);
        if (!upgrade(req) && q.isEmpty()) {
            return listPtys(req, res); // a plain GET without a command lists the session's PTYs
        }
        requireWebsocket(req);
        List<String> argv = q.getOrDefault("argv", List.of("/bin/sh"));
        PtyOptions options = PtyOptions.of(argv.toArray(String[]::new))
                .withSize(intQuery(req, "cols", 80), intQuery(req, "rows", 24));
        String cwd = Http.query(req, "cwd");
        if (cwd != null) {
            options = options.withCwd(cwd);
        }
        options.toExecOptions(); // validates before anything starts
        PtyOptions checked = options;
        return startPty(req, checked).flatMap(pty -> ptys.attach(res, pty, -1));
    }

    private Mono<Void> getOrAttachPty(HttpServerRequest req, HttpServerResponse res) {
        if (!upgrade(req)) {
            return pty(req).flatMap(pty -> Mono.firstWithSignal(
                            pty.exit().map(Optional::of),
                            Mono.just(Optional.<ExecEvent.Exit>empty()).delayElement(Duration.ofMillis(5)))
                    .flatMap(exit -> Http.json(
                            res,
                            200,
                            ResourceBodies.PtyInfoBody.of(pty.id(), pty.pid().orElse(-1), exit.orElse(null)))));
        }
        long offset = Http.longQuery(req, "offset", -1);
        if (offset < -1) {
            throw new InvalidArgumentException("offset", "offset must not be negative, got " + offset);
        }
        return pty(req).flatMap(pty -> ptys.attach(res, pty, offset));
    }

    /** Whether the request asks for a WebSocket (reactor-netty's {@code isWebsocket()} says so only after the upgrade). */
    private static boolean upgrade(HttpServerRequest req) {
        String upgrade = req.requestHeaders().get(HttpHeaderNames.UPGRADE);
        return upgrade != null && upgrade.equalsIgnoreCase("websocket");
    }

    private static void requireWebsocket(HttpServerRequest req) {
        if (!upgrade(req)) {
            throw new HttpError(
                    400,
                    "WebSocketRequired",
                    "this route opens a PTY over a WebSocket; send an Upgrade: websocket request");
        }
    }

    private static int intQuery(HttpServerRequest req, String name, int dflt) {
        long v = Http.longQuery(req, name, dflt);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new InvalidArgumentException(name, name + " is out of range: " + v);
        }
        return (int) v;
    }

    private Mono<Void> ptyExit(HttpServerRequest req, HttpServerResponse res) {
        long wait = Math.max(1, Math.min(MAX_EXIT_WAIT_MS, Http.longQuery(req, "waitMs", 0)));
        return pty(req).flatMap(pty -> pty.exit().timeout(Duration.ofMillis(wait), Mono.empty()))
                .flatMap(x -> Http.json(res, 200, ResourceBodies.ExitBody.of(x)))
                .switchIfEmpty(Mono.defer(() -> Http.noContent(res)));
    }

    private Mono<Void> ptyInput(HttpServerRequest req, HttpServerResponse res) {
        return pty(req).flatMap(
                        pty -> Http.rawBody(req).concatMap(pty::write, 1).then())
                .then(Http.noContent(res));
    }

    private Mono<Void> ptyResize(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .flatMap(n -> {
                    RequestBodies.ResizeBody size = RequestBodies.read(n, RequestBodies.ResizeBody.class);
                    return pty(req).flatMap(pty -> pty.resize(size.colsOrZero(), size.rowsOrZero()));
                })
                .then(Http.noContent(res));
    }

    private Mono<Void> ptySignal(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .flatMap(n -> {
                    int signal = RequestBodies.read(n, RequestBodies.SignalBody.class)
                            .number();
                    return pty(req).flatMap(pty -> pty.signal(signal));
                })
                .then(Http.noContent(res));
    }

    private Mono<Void> ptyKill(HttpServerRequest req, HttpServerResponse res) {
        return pty(req).flatMap(PtySession::kill).then(Http.noContent(res));
    }
}
