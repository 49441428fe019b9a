package dev.sandbox.server.implementation;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.PtySession;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.WebsocketServerSpec;
import reactor.util.concurrent.Queues;

/**
 * The PTY WebSocket: terminal output goes out as binary frames, read from the PTY only as the socket takes them;
 * binary frames coming in are typed into the terminal, one after the other; text frames are JSON control messages
 * ({@code resize}, {@code signal} in; {@code hello}, {@code exit}, {@code error} out). Closing the socket detaches
 * from the PTY and leaves it running, as cancelling a local {@link PtySession#output()} does.
 */
public final class PtySockets {
    /** The largest frame accepted from a client (a paste may be large; typing is a few bytes). */
    static final int MAX_FRAME_BYTES = 64 * 1024;
    /** Control answers (errors) waiting to be sent; more are dropped. */
    private static final int CONTROL_QUEUE = 32;

    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger attached = new AtomicInteger();

    /** A handler with no socket open yet. */
    public PtySockets() {}

    /**
     * PTYs started through the server and still running.
     *
     * @return the count
     */
    public int running() {
        return running.get();
    }

    /**
     * Sockets attached to a PTY now.
     *
     * @return the count
     */
    public int attached() {
        return attached.get();
    }

    /**
     * Counts a PTY started through the server until it exits.
     *
     * @param pty the PTY
     * @param onExit also run when it exits (or its exit cannot be known)
     */
    void started(PtySession pty, Runnable onExit) {
        running.incrementAndGet();
        pty.exit()
                .doFinally(s -> {
                    running.decrementAndGet();
                    onExit.run();
                })
                .subscribe(x -> {}, e -> {});
    }

    /** One frame from the client, copied out of its buffer. */
    private record Inbound(boolean binary, byte[] bytes) {}

    private static Inbound copy(WebSocketFrame frame) {
        ByteBuf content = frame.content();
        return new Inbound(frame instanceof BinaryWebSocketFrame, ByteBufUtil.getBytes(content));
    }

    private static WebSocketFrame text(Object body) {
        return new TextWebSocketFrame(Unpooled.wrappedBuffer(WireJson.bytes(body)));
    }

    private static ResourceBodies.PtyHello hello(PtySession pty) {
        return ResourceBodies.PtyHello.of(pty.id(), pty.pid().orElse(-1));
    }

    private static ObjectNode error(Throwable t) {
        ObjectNode n = ErrorMapping.body(t);
        n.put("type", "error");
        return n;
    }

    /**
     * Upgrades the request and attaches the socket to the PTY.
     *
     * @param res the response to upgrade
     * @param pty the PTY
     * @param offset where output starts: -1 for what the PTY keeps for replay, else a byte offset
     * @return completes when the socket closes
     */
    Mono<Void> attach(HttpServerResponse res, PtySession pty, long offset) {
        WebsocketServerSpec spec = WebsocketServerSpec.builder()
                .maxFramePayloadLength(MAX_FRAME_BYTES)
                .handlePing(false)
                .build();
        return res.sendWebsocket(
                (in, out) -> {
                    attached.incrementAndGet();
                    Sinks.Many<WebSocketFrame> control = Sinks.many()
                            .unicast()
                            .onBackpressureBuffer(
                                    Queues.<WebSocketFrame>get(CONTROL_QUEUE).get());
                    Consumer<Throwable> report = t -> {
                        WebSocketFrame f = text(error(t));
                        if (control.tryEmitNext(f).isFailure()) {
                            f.release();
                        }
                    };
                    Flux<WebSocketFrame> output = pty.output(offset)
                            .map(b -> (WebSocketFrame) new BinaryWebSocketFrame(Unpooled.wrappedBuffer(b)))
                            .concatWith(pty.exit().map(x -> text(ResourceBodies.ExitBody.of(x))))
                            .onErrorResume(t -> Mono.just(text(error(t))))
                            .doFinally(s -> control.tryEmitComplete());
                    Flux<WebSocketFrame> frames = Flux.concat(
                            Mono.fromSupplier(() -> text(hello(pty))), Flux.merge(output, control.asFlux()));
                    // the command ended (or the stream failed, said in an error frame): a normal close
                    Mono<Void> send = out.sendObject(frames)
                            .then()
                            .then(Mono.defer(() -> out.sendClose(1000, "the command ended")));
                    Mono<Void> receive = in.receiveFrames()
                            .filter(f -> f instanceof BinaryWebSocketFrame || f instanceof TextWebSocketFrame)
                            .map(PtySockets::copy)
                            .concatMap(f -> handle(pty, f).onErrorResume(t -> {
                                report.accept(t);
                                return Mono.empty();
                            }))
                            .then();
                    return Mono.firstWithSignal(send, receive).doFinally(s -> attached.decrementAndGet());
                },
                spec);
    }

    private static int orZero(Integer v) {
        return v == null ? 0 : v;
    }

    private static Mono<Void> handle(PtySession pty, Inbound f) {
        if (f.binary()) {
            return f.bytes().length == 0 ? Mono.empty() : pty.write(ByteBuffer.wrap(f.bytes()));
        }
        return Mono.defer(() -> {
            RequestBodies.PtyControl c = RequestBodies.read(WireJson.parse(f.bytes()), RequestBodies.PtyControl.class);
            String type = c.type() == null ? "" : c.type();
            return switch (type) {
                case "resize" -> pty.resize(orZero(c.cols()), orZero(c.rows()));
                case "signal" -> pty.signal(orZero(c.signal()));
                default ->
                    Mono.error(new InvalidArgumentException(
                            "type", "a control message's type must be 'resize' or 'signal', got '" + type + "'"));
            };
        });
    }
}
