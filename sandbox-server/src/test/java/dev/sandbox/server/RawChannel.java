package dev.sandbox.server;

import dev.sandbox.implementation.wire.ChannelFrames;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.WebsocketClientSpec;

/**
 * A command channel socket driven by hand, frame by frame, as a hostile or a naive client would: what it sends goes as
 * it is, what comes back is kept whole, and the close status the server sends is recorded.
 */
final class RawChannel implements AutoCloseable {
    private final Sinks.Many<WebSocketFrame> out = Sinks.many().unicast().onBackpressureBuffer();
    private final BlockingQueue<byte[]> received = new LinkedBlockingQueue<>();
    private final CompletableFuture<WebSocketCloseStatus> closeStatus = new CompletableFuture<>();
    private final CompletableFuture<Void> ended = new CompletableFuture<>();
    private final Disposable socket;

    RawChannel(String baseUrl, String token) {
        socket = HttpClient.create()
                .headers(h -> h.set(HttpHeaderNames.AUTHORIZATION, "Bearer " + token))
                .websocket(WebsocketClientSpec.builder()
                        .maxFramePayloadLength(16 * 1024 * 1024)
                        .build())
                .uri(baseUrl + "/v1/channel")
                .handle((in, o) -> {
                    in.receiveCloseStatus().subscribe(closeStatus::complete);
                    Mono<Void> send = o.sendObject(out.asFlux()).then();
                    Flux<byte[]> frames = in.aggregateFrames(16 * 1024 * 1024)
                            .receiveFrames()
                            .filter(f -> f instanceof BinaryWebSocketFrame)
                            .map(f -> ByteBufUtil.getBytes(f.content()));
                    return Flux.merge(send.then(Mono.<byte[]>empty()), frames);
                })
                .subscribe(received::add, e -> ended.complete(null), () -> ended.complete(null));
    }

    /** Sends one binary message. */
    void send(byte[] message) {
        send(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(message)));
    }

    /** Sends any WebSocket frame. */
    synchronized void send(WebSocketFrame frame) {
        out.tryEmitNext(frame).orThrow();
    }

    /** The next frame the server sent, decoded as the client decodes it; fails after the wait. */
    ChannelFrames.Frame next(Duration wait) throws InterruptedException {
        byte[] m = received.poll(wait.toMillis(), TimeUnit.MILLISECONDS);
        if (m == null) {
            throw new AssertionError("no frame from the server within " + wait);
        }
        return ChannelFrames.decode(m, 0, m.length, false);
    }

    /** The close status the server sent, once the connection is over. */
    WebSocketCloseStatus closeStatus(Duration wait) throws Exception {
        ended.get(wait.toMillis(), TimeUnit.MILLISECONDS);
        return closeStatus.getNow(null);
    }

    /** Whether the connection has ended. */
    boolean ended() {
        return ended.isDone();
    }

    @Override
    public void close() {
        socket.dispose();
    }
}
