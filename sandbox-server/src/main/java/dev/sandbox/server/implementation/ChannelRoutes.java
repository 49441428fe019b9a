package dev.sandbox.server.implementation;

import dev.sandbox.implementation.wire.ChannelFrames;
import io.netty.handler.codec.http.HttpHeaderNames;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;
import reactor.netty.http.server.WebsocketServerSpec;

/**
 * The command channel's route: {@code GET /v1/channel}, upgraded to a WebSocket that carries many commands at once in
 * {@link ChannelFrames}. The upgrade request goes through the same guard as every REST request (the token, the
 * tenant, the draining server, the connection limit and queue); each connection is then served by its own {@link
 * ChannelSocket}.
 */
final class ChannelRoutes extends Routes {
    /** Room in a client's frame beyond the exec body's JSON: the header and the session id. */
    private static final int OPEN_OVERHEAD = ChannelFrames.HEADER + 2 + ChannelFrames.MAX_SESSION_ID;

    /**
     * The channel's route.
     *
     * @param state what the routes share
     */
    ChannelRoutes(State state) {
        super(state);
    }

    @Override
    void register(HttpServerRoutes routes) {
        routes.get("/v1/channel", guard(false, this::channel));
    }

    /** The longest WebSocket message a client may send: one open frame with a body of the JSON limit. */
    int maxClientMessage() {
        return config.maxJsonBytes() + OPEN_OVERHEAD;
    }

    private Mono<Void> channel(HttpServerRequest req, HttpServerResponse res) {
        String upgrade = req.requestHeaders().get(HttpHeaderNames.UPGRADE);
        if (upgrade == null || !upgrade.equalsIgnoreCase("websocket")) {
            throw new HttpError(
                    400,
                    "WebSocketRequired",
                    "/v1/channel carries commands over a WebSocket; send an Upgrade: websocket request");
        }
        WebsocketServerSpec spec = WebsocketServerSpec.builder()
                .maxFramePayloadLength(maxClientMessage())
                .build();
        return tenant(tenant -> res.sendWebsocket((in, out) -> new ChannelSocket(this, tenant, in, out).serve(), spec));
    }
}
