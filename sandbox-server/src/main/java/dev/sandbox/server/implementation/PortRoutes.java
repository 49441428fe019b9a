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
 * The ports' route: {@code GET /v1/sessions/{id}/ports/{port}/connect} upgraded to a WebSocket that carries one TCP
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

    @Override
    void register(HttpServerRoutes routes) {
        routes.get("/v1/sessions/{id}/ports/{port}/connect", guard(false, this::connect));
    }

    private static int port(HttpServerRequest req) {
        String v = param(req, "port");
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
