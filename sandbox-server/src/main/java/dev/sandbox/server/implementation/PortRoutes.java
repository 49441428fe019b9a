package dev.sandbox.server.implementation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.netty.http.server.WebsocketServerSpec;

/**
 * The ports' routes. {@code ANY /v1/sessions/{id}/ports/{port}/http/PATH} is one HTTP request to the sandbox's
 * server on that port ({@link PortHttp}), for browsers too (the token as a cookie, see {@link #browserGuard}). {@code
 * GET /v1/sessions/{id}/ports/{port}/connect} is upgraded to a WebSocket that carries one TCP
 * connection to the port on the sandbox's loopback ({@link dev.sandbox.SandboxPorts#connect}). Binary frames carry the
 * bytes both ways, each direction read only as the other side takes it; a text frame {@code {"type":"eof"}} from the
 * client ends its sending side (the server in the sandbox sees end of file and may still answer); the sandbox side's
 * end closes the socket with 1000, a failure (nothing listens, a reset) is a text frame {@code {"type":"error",...}}
 * with the error's JSON, then 1011.
 */
final class PortRoutes extends Routes {
    /** The largest frame accepted from a client. */
    static final int MAX_FRAME_BYTES = 64 * 1024;

    /**
     * The routes of ports.
     *
     * @param state what the routes share
     */
    PortRoutes(State state) {
        super(state);
    }

    /** The HTTP route's paths: session, port, and the path on the sandbox's server. */
    private static final Pattern HTTP_PATH = Pattern.compile("^/v1/sessions/([^/]+)/ports/([^/]+)/http(/.*)?$");

    /** The cookie (and, once, the query parameter) that carries a browser's token on the HTTP route. */
    static final String TOKEN_COOKIE = "sandbox_token";

    @Override
    void register(HttpServerRoutes routes) {
        routes.get("/v1/sessions/{id}/ports/{port}/connect", guard(false, this::connect));
        routes.route(req -> HTTP_PATH.matcher(req.fullPath()).matches(), this::browserGuard);
    }

    /**
     * The HTTP route's guard: a browser cannot send the bearer header when it follows a link, so the token may also
     * come as the cookie {@value #TOKEN_COOKIE}, or once as a query parameter of that name, which is answered with a
     * redirect that sets the cookie (HttpOnly, SameSite=Strict, for this port's path only) and drops the token from
     * the URL. Either is checked by the same guard as the header.
     */
    private Publisher<Void> browserGuard(HttpServerRequest req, HttpServerResponse res) {
        String fromQuery = Http.query(req, TOKEN_COOKIE);
        if (req.requestHeaders().get(HttpHeaderNames.AUTHORIZATION) == null) {
            String token = fromQuery;
            if (token == null) {
                token = tokenCookie(req);
            }
            if (token != null) {
                req.requestHeaders().set(HttpHeaderNames.AUTHORIZATION, "Bearer " + token);
            }
        }
        return guard(false, (rq, rs) -> fromQuery != null ? login(rq, rs, fromQuery) : http(rq, rs))
                .apply(req, res);
    }

    /** The value of the token cookie, or null. */
    private static String tokenCookie(HttpServerRequest req) {
        for (Map.Entry<CharSequence, List<io.netty.handler.codec.http.cookie.Cookie>> e :
                req.allCookies().entrySet()) {
            if (e.getKey().toString().equals(TOKEN_COOKIE) && !e.getValue().isEmpty()) {
                return e.getValue().get(0).value();
            }
        }
        return null;
    }

    /** The token came in the URL and was accepted: set the cookie and send the browser to the URL without it. */
    private Mono<Void> login(HttpServerRequest req, HttpServerResponse res, String token) {
        Matcher m = HTTP_PATH.matcher(req.fullPath());
        if (!m.matches()) {
            return Mono.error(new HttpError(404, "NotFound", "no such route: " + req.fullPath()));
        }
        String scope = "/v1/sessions/" + m.group(1) + "/ports/" + m.group(2) + "/";
        io.netty.handler.codec.http.cookie.DefaultCookie c =
                new io.netty.handler.codec.http.cookie.DefaultCookie(TOKEN_COOKIE, token);
        c.setPath(scope);
        c.setHttpOnly(true);
        c.setSameSite(io.netty.handler.codec.http.cookie.CookieHeaderNames.SameSite.Strict);
        c.setSecure(req.scheme().equals("https"));
        String rest = withoutToken(req.uri());
        return withSession(m.group(1), Mono::just)
                .then(Mono.defer(() -> res.status(303)
                        .addCookie(c)
                        .header(HttpHeaderNames.LOCATION, rest)
                        .send()));
    }

    /** The request's URI without the token parameter. */
    static String withoutToken(String uri) {
        int q = uri.indexOf('?');
        if (q < 0) {
            return uri;
        }
        StringBuilder kept = new StringBuilder();
        for (String p : uri.substring(q + 1).split("&")) {
            if (!p.isEmpty() && !p.equals(TOKEN_COOKIE) && !p.startsWith(TOKEN_COOKIE + "=")) {
                kept.append(kept.length() == 0 ? "?" : "&").append(p);
            }
        }
        return uri.substring(0, q) + kept;
    }

    /** {@code ANY /v1/sessions/{id}/ports/{port}/http/...}: one request to the sandbox's HTTP server. */
    private Mono<Void> http(HttpServerRequest req, HttpServerResponse res) {
        Matcher m = HTTP_PATH.matcher(req.fullPath());
        if (!m.matches()) {
            return Mono.error(new HttpError(404, "NotFound", "no such route: " + req.fullPath()));
        }
        int port = port(m.group(2));
        String uri = req.uri();
        int q = uri.indexOf('?');
        String path = m.group(3) == null ? "/" : m.group(3);
        String pathAndQuery = path + (q < 0 ? "" : uri.substring(q));
        StringBuilder cookies = new StringBuilder();
        req.allCookies().forEach((name, values) -> {
            if (!name.toString().equals(TOKEN_COOKIE)) {
                for (io.netty.handler.codec.http.cookie.Cookie c : values) {
                    cookies.append(cookies.length() == 0 ? "" : "; ")
                            .append(c.name())
                            .append('=')
                            .append(c.value());
                }
            }
        });
        return withSession(m.group(1), Mono::just)
                .flatMap(s -> PortHttp.proxy(
                        req, res, (p, up) -> s.ports().connect(p, up), pathAndQuery, port, cookies.toString()));
    }

    private static int port(HttpServerRequest req) {
        return port(param(req, "port"));
    }

    private static int port(String v) {
        int port;
        try {
            port = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new InvalidArgumentException("port", "port must be a number within 1..65535, got '" + v + "'");
        }
        if (port < 1 || port > 65535) {
            throw new InvalidArgumentException("port", "port must be within 1..65535, got " + port);
        }
        return port;
    }

    private Mono<Void> connect(HttpServerRequest req, HttpServerResponse res) {
        String upgrade = req.requestHeaders().get(HttpHeaderNames.UPGRADE);
        if (upgrade == null || !upgrade.equalsIgnoreCase("websocket")) {
            throw new HttpError(
                    400,
                    "WebSocketRequired",
                    "this route carries a TCP connection over a WebSocket; send an Upgrade: websocket request");
        }
        int port = port(req);
        return withSession(req, Mono::just).flatMap(session -> relay(res, session, port));
    }

    private Mono<Void> relay(HttpServerResponse res, SandboxSession session, int port) {
        WebsocketServerSpec spec = WebsocketServerSpec.builder()
                .maxFramePayloadLength(MAX_FRAME_BYTES)
                .handlePing(true)
                .build();
        return res.sendWebsocket(
                (in, out) -> {
                    Flux<ByteBuffer> toServer = clientBytes(in.receiveFrames().map(PortRoutes::copy));
                    Flux<WebSocketFrame> frames = session.ports()
                            .connect(port, toServer)
                            .map(b -> (WebSocketFrame) new BinaryWebSocketFrame(Unpooled.wrappedBuffer(b)));
                    boolean[] failed = {false};
                    Flux<WebSocketFrame> all = frames.onErrorResume(t -> {
                        failed[0] = true;
                        return Mono.just(text(error(t)));
                    });
                    return out.sendObject(all)
                            .then()
                            .then(Mono.defer(() -> failed[0]
                                    ? out.sendClose(1011, "the connection failed")
                                    : out.sendClose(1000, "the sandbox's side ended")));
                },
                spec);
    }

    /** One frame from the client, copied out of its buffer. */
    private record Inbound(boolean binary, byte[] bytes) {}

    private static Inbound copy(WebSocketFrame frame) {
        return new Inbound(frame instanceof BinaryWebSocketFrame, ByteBufUtil.getBytes(frame.content()));
    }

    private static WebSocketFrame text(Object body) {
        return new TextWebSocketFrame(Unpooled.wrappedBuffer(WireJson.bytes(body)));
    }

    private static ObjectNode error(Throwable t) {
        ObjectNode n = ErrorMapping.body(t);
        n.put("type", "error");
        return n;
    }

    /**
     * The client's bytes, asked for as the sandbox's side takes them. The {@code eof} message completes them without
     * cancelling the socket's input (which would end the socket): later frames are read and dropped.
     */
    private static Flux<ByteBuffer> clientBytes(Flux<Inbound> frames) {
        return Flux.create(
                sink -> {
                    ClientFrames sub = new ClientFrames(sink);
                    sink.onRequest(sub::asked);
                    frames.subscribe(sub);
                },
                FluxSink.OverflowStrategy.ERROR);
    }

    /** Reads the client's frames for {@link #clientBytes}. */
    private static final class ClientFrames extends BaseSubscriber<Inbound> {
        private final FluxSink<ByteBuffer> sink;
        private volatile boolean eof;
        /** Demand that came before the subscription (the socket's input may subscribe later, on its event loop). */
        private long early; // guarded by this

        private boolean subscribed; // guarded by this

        ClientFrames(FluxSink<ByteBuffer> sink) {
            this.sink = sink;
        }

        void asked(long n) {
            if (eof) {
                return;
            }
            synchronized (this) {
                if (!subscribed) {
                    early = reactor.core.publisher.Operators.addCap(early, n);
                    return;
                }
            }
            request(n);
        }

        @Override
        protected void hookOnSubscribe(Subscription s) {
            long n;
            synchronized (this) {
                subscribed = true;
                n = early;
            }
            if (n > 0) {
                s.request(n);
            }
        }

        @Override
        protected void hookOnNext(Inbound f) {
            if (eof) {
                request(1); // after the end: read and drop
                return;
            }
            if (f.binary()) {
                if (f.bytes().length == 0) {
                    request(1);
                } else {
                    sink.next(ByteBuffer.wrap(f.bytes()));
                }
                return;
            }
            JsonNode n = WireJson.lenient(f.bytes());
            String type = n == null ? "" : n.path("type").asText("");
            if (type.equals("eof")) {
                eof = true;
                sink.complete();
                request(Long.MAX_VALUE);
            } else {
                eof = true;
                sink.error(new InvalidArgumentException(
                        "type",
                        "a port connection's text message must be {\"type\":\"eof\"}, got type '" + type + "'"));
                request(Long.MAX_VALUE);
            }
        }

        @Override
        protected void hookOnComplete() {
            if (!eof) {
                sink.complete(); // the socket closed: the client sends nothing more
            }
        }

        @Override
        protected void hookOnError(Throwable t) {
            if (!eof) {
                sink.error(t);
            }
        }
    }
}
