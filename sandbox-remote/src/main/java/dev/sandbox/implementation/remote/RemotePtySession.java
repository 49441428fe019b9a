package dev.sandbox.implementation.remote;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.ExecEvent;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.PtySession;
import dev.sandbox.implementation.wire.ErrorBodies;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import java.nio.ByteBuffer;
import java.util.OptionalLong;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A PTY on a sandbox server. Each {@link #output()} subscription is one WebSocket (and counts as one attached client
 * on the server, as a local subscription does); cancelling it closes the socket and leaves the PTY running. Typing,
 * resizing, signals and the exit are plain calls, so they work without an open socket.
 */
final class RemotePtySession implements PtySession {
    /** The largest output frame accepted from the server. */
    private static final int MAX_FRAME_BYTES = 1024 * 1024;
    /** How long one exit request waits on the server before it is repeated. */
    private static final long EXIT_WAIT_MS = 25_000;

    private final RemoteTransport t;
    private final RemoteSession session;
    private final String path;
    private final String id;
    private final long pid;
    private final InOrder writes = new InOrder();
    private volatile ExecEvent.Exit exit;

    RemotePtySession(RemoteTransport t, RemoteSession session, String sessionPath, JsonNode answer) {
        ResourceBodies.PtyInfoBody info = ResourceBodies.read(answer, ResourceBodies.PtyInfoBody.class);
        this.t = t;
        this.session = session;
        this.id = info.id() == null ? "" : info.id();
        this.pid = info.pidOrUnknown();
        this.path = sessionPath + "/ptys/" + RemoteTransport.enc(id);
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public OptionalLong pid() {
        return pid < 0 ? OptionalLong.empty() : OptionalLong.of(pid);
    }

    @Override
    public Flux<ByteBuffer> output() {
        return output(-1);
    }

    @Override
    public Flux<ByteBuffer> output(long offset) {
        return Flux.defer(() -> {
            session.checkOpen();
            if (offset < -1) {
                throw new InvalidArgumentException("offset", "offset must not be negative, got " + offset);
            }
            boolean[] ended = {false};
            String uri = offset >= 0 ? path + "?offset=" + offset : path;
            return t.<ByteBuffer>websocket(
                            uri,
                            MAX_FRAME_BYTES,
                            (in, out) -> in.receiveFrames()
                                    .<ByteBuffer>handle((frame, sink) -> {
                                        if (frame instanceof BinaryWebSocketFrame) {
                                            sink.next(ByteBuffer.wrap(ByteBufUtil.getBytes(frame.content())));
                                        } else if (frame instanceof TextWebSocketFrame) {
                                            JsonNode n = WireJson.lenient(ByteBufUtil.getBytes(frame.content()));
                                            String type = n == null
                                                    ? ""
                                                    : n.path("type").asText("");
                                            switch (type) {
                                                case "exit" -> {
                                                    exit = ResourceBodies.read(n, ResourceBodies.ExitBody.class)
                                                            .exit();
                                                    ended[0] = true;
                                                    sink.complete();
                                                }
                                                case "error" -> {
                                                    ended[0] = true;
                                                    sink.error(ErrorBodies.exception(n, 0));
                                                }
                                                default -> {
                                                    // hello, and messages of later versions
                                                }
                                            }
                                        }
                                    })
                                    .concatWith(Flux.defer(() -> ended[0]
                                            ? Flux.empty()
                                            : Flux.error(new RemoteTransport.StreamDropped(
                                                    "the PTY's WebSocket closed before the command's exit")))))
                    .onErrorResume(
                            RemoteTransport.WebSocketRefused.class,
                            refused -> t.call(HttpMethod.GET, path, null).then(Mono.error(refused)));
        });
    }

    @Override
    public Mono<Void> write(ByteBuffer input) {
        return Mono.defer(() -> {
            session.checkOpen();
            byte[] copy = new byte[input.remaining()];
            input.duplicate().get(copy);
            if (copy.length == 0) {
                return Mono.empty();
            }
            return writes.run(
                    "terminal writes",
                    () -> t.upload(HttpMethod.POST, path + "/input", Mono.just(ByteBuffer.wrap(copy)), false)
                            .then());
        });
    }

    @Override
    public Mono<Void> resize(int cols, int rows) {
        return Mono.defer(() -> {
            session.checkOpen();
            size("cols", cols);
            size("rows", rows);
            RequestBodies.ResizeBody body = new RequestBodies.ResizeBody(cols, rows);
            return t.call(HttpMethod.POST, path + "/resize", body).then();
        });
    }

    private static void size(String field, int value) {
        if (value < 1 || value > 1000) {
            throw new InvalidArgumentException(field, field + " must be from 1 to 1000, got " + value);
        }
    }

    @Override
    public Mono<Void> signal(int signal) {
        return RemoteBackgroundProcess.signal(t, session, path, signal);
    }

    @Override
    public Mono<Void> kill() {
        return Mono.defer(() -> {
            session.checkOpen();
            return t.call(HttpMethod.POST, path + "/kill", null).then();
        });
    }

    @Override
    public Mono<ExecEvent.Exit> exit() {
        return Mono.defer(() -> {
            session.checkOpen();
            ExecEvent.Exit known = exit;
            if (known != null) {
                return Mono.just(known);
            }
            return t.longCall(HttpMethod.GET, path + "/exit?waitMs=" + EXIT_WAIT_MS, null)
                    .map(n -> ResourceBodies.read(n, ResourceBodies.ExitBody.class)
                            .exit())
                    .repeatWhenEmpty(Integer.MAX_VALUE, ticks -> ticks)
                    .doOnNext(x -> exit = x);
        });
    }

    @Override
    public String toString() {
        return "RemotePtySession{" + id + "}";
    }
}
