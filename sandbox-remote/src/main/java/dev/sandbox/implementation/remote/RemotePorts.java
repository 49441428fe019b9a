package dev.sandbox.implementation.remote;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.implementation.ports.Dialer;
import dev.sandbox.implementation.wire.ErrorBodies;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * How a remote session reaches a port in its sandbox: a WebSocket per connection to the server's {@code
 * /v1/sessions/{id}/ports/{port}/connect}, binary frames both ways, the end of the bytes to send as a text frame
 * {@code {"type":"eof"}} (the socket stays open for the answer), the server's error as a text frame before it closes.
 */
final class RemotePorts implements Dialer {
    /** The largest frame accepted from the server (the agent sends at most 64 KiB at a time). */
    private static final int MAX_FRAME_BYTES = 1024 * 1024;

    private static final byte[] EOF = "{\"type\":\"eof\"}".getBytes(StandardCharsets.US_ASCII);

    private final RemoteTransport t;
    private final String sessionPath;

    RemotePorts(RemoteTransport t, String sessionPath) {
        this.t = t;
        this.sessionPath = sessionPath;
    }

    @Override
    public Flux<ByteBuffer> dial(int port, Publisher<ByteBuffer> toServer) {
        String path = sessionPath + "/ports/" + port + "/connect";
        boolean[] ended = {false};
        return t.<ByteBuffer>websocket(path, MAX_FRAME_BYTES, (in, out) -> {
                    Flux<WebSocketFrame> up = Flux.from(toServer)
                            .map(b -> (WebSocketFrame) new BinaryWebSocketFrame(Unpooled.wrappedBuffer(b)))
                            .concatWith(Mono.fromSupplier(() -> new TextWebSocketFrame(Unpooled.wrappedBuffer(EOF))));
                    Flux<ByteBuffer> down = in.receiveFrames().<ByteBuffer>handle((frame, sink) -> {
                        if (frame instanceof BinaryWebSocketFrame) {
                            sink.next(ByteBuffer.wrap(ByteBufUtil.getBytes(frame.content())));
                        } else if (frame instanceof TextWebSocketFrame) {
                            JsonNode n = WireJson.lenient(ByteBufUtil.getBytes(frame.content()));
                            if (n != null && n.path("type").asText("").equals("error")) {
                                ended[0] = true;
                                sink.error(ErrorBodies.exception(n, 0));
                            }
                        }
                    });
                    // the send ends after the eof; the socket lives until the server's side ends
                    return Flux.merge(out.sendObject(up).then().thenMany(Flux.<ByteBuffer>empty()), down);
                })
                .onErrorResume(
                        RemoteTransport.WebSocketRefused.class,
                        refused -> t.call(HttpMethod.GET, sessionPath + "/status", null)
                                .then(Mono.error(refused)));
    }
}
