package dev.sandbox.server.implementation;

import dev.sandbox.ExecEvent;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The PTYs' routes: open one (JSON, or a WebSocket that starts it), list, get or attach over a WebSocket, exit,
 * input, resize, signal and kill. The WebSocket routes are plain GETs through the same guard that upgrade once the
 * token, the session and the PTY have been checked (see {@link PtySockets}).
 */
final class PtyRoutes extends Routes {
    /**
     * The routes of PTYs.
     *
     * @param state what the routes share
     */
    PtyRoutes(State state) {
        super(state);
    }

    @Override
    void register(HttpServerRoutes routes) {
        routes.post("/v1/sessions/{id}/ptys", guard(false, this::openPty));
        routes.get("/v1/sessions/{id}/ptys", guard(false, this::openPtySocket));
        routes.get("/v1/sessions/{id}/ptys/{pty}", guard(false, this::getOrAttachPty));
        routes.get("/v1/sessions/{id}/ptys/{pty}/exit", guard(false, this::ptyExit));
        routes.post("/v1/sessions/{id}/ptys/{pty}/input", guard(false, this::ptyInput));
        routes.post("/v1/sessions/{id}/ptys/{pty}/resize", guard(false, this::ptyResize));
        routes.post("/v1/sessions/{id}/ptys/{pty}/signal", guard(false, this::ptySignal));
        routes.post("/v1/sessions/{id}/ptys/{pty}/kill", guard(false, this::ptyKill));
    }

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

    /** The session's PTYs, as {@code {"processes":[...]}} like the background processes' listing. */
    private Mono<Void> listPtys(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> s.ptys().collectList())
                .flatMap(list -> Http.json(res, 200, ResourceBodies.ProcessList.of(list)));
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
