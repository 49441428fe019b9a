package dev.sandbox.server.implementation;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.implementation.exec.BatchedExec;
import dev.sandbox.implementation.wire.ChannelFrames;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.websocket.WebsocketInbound;
import reactor.netty.http.websocket.WebsocketOutbound;
import reactor.util.concurrent.Queues;

/**
 * One client's command channel (see {@link ChannelFrames}). Each open frame starts a command on the stream the client
 * named: an exec is a {@link ExecChannel} like a REST exec's (same window, same exec id, so a client whose connection
 * drops resumes it from its offsets, on a new channel or over REST), read by a sender on this connection's event
 * loop; a run answers one result. The streams' frames are merged onto the socket, each stream read only as its window allows, so a client
 * that stops acknowledging one exec stops that command only.
 *
 * <p>Everything the client sends is checked: a malformed frame (see {@link ChannelFrames#decode}), a text frame, or
 * an open on a stream already open ends this connection (close code 1002) and nothing else. A session of another
 * tenant is not found, as over REST; stream ids are this connection's own, so another client cannot name them.
 * When the connection ends, its runs are cancelled (their commands killed, as when a REST run's connection closes)
 * and its execs wait for a REST resume until the server's resume timeout.
 */
final class ChannelSocket {
    /** The most streams one connection has open at once; an open beyond is answered 429. */
    static final int MAX_STREAMS = 4096;

    private static final Logger LOG = LoggerFactory.getLogger(ChannelSocket.class);
    /** Frames of one stream taken ahead of the socket: the window's own arrays, so a deep prefetch costs little. */
    private static final int PREFETCH = 32;
    /**
     * How long a command waits for a slot of the exec limit before it is answered {@code 429 TooManyExecs}, as a REST
     * request over the limit is at once: REST clients are paced by the connection limit, while one channel carries
     * thousands of commands, which a burst should not turn into errors.
     */
    static final java.time.Duration QUEUE_WAIT = java.time.Duration.ofSeconds(10);

    private final ChannelRoutes routes;
    private final Tenant tenant;
    private final WebsocketInbound in;
    private final WebsocketOutbound out;
    private final Map<Integer, Stream> streams = new ConcurrentHashMap<>();
    private final Sinks.Many<Publisher<WebSocketFrame>> opened = Sinks.many()
            .unicast()
            .onBackpressureBuffer(
                    Queues.<Publisher<WebSocketFrame>>get(2 * MAX_STREAMS).get());
    private boolean broken; // on the inbound thread only
    private Executor loop = r -> Schedulers.parallel().schedule(r);
    private Scheduler loopScheduler = Schedulers.parallel();

    /** One command on this connection. */
    private static final class Stream {
        final int id;
        final Sinks.Empty<Void> cancel = Sinks.empty();
        volatile ExecChannel exec;
        volatile boolean cancelled;

        Stream(int id) {
            this.id = id;
        }

        void cancel() {
            cancelled = true;
            ExecChannel c = exec;
            if (c != null) {
                c.release();
            }
            cancel.tryEmitEmpty();
        }
    }

    ChannelSocket(ChannelRoutes routes, Tenant tenant, WebsocketInbound in, WebsocketOutbound out) {
        this.routes = routes;
        this.tenant = tenant;
        this.in = in;
        this.out = out;
    }

    /**
     * Serves the connection until either side ends it.
     *
     * @return completes when the connection is done
     */
    Mono<Void> serve() {
        in.withConnection(c -> {
            loop = c.channel().eventLoop();
            loopScheduler = Schedulers.fromExecutor(loop);
        });
        routes.state.channelsOpen.incrementAndGet();
        Mono<Void> send = out.sendObject(opened.asFlux().flatMap(p -> p, 2 * MAX_STREAMS, PREFETCH))
                .then();
        Mono<Void> receive = in.aggregateFrames(routes.maxClientMessage())
                .receiveFrames()
                .doOnNext(frame -> {
                    if (broken) {
                        return; // closing: nothing more is read
                    }
                    try {
                        onFrame(frame);
                    } catch (ChannelFrames.MalformedFrameException e) {
                        // this connection only: a close frame saying why, then the socket closes
                        broken = true;
                        LOG.debug("a channel client sent a malformed frame: {}", e.getMessage());
                        out.sendClose(1002, reason(e.getMessage())).subscribe(x -> {}, x -> {});
                    }
                })
                .then();
        return Mono.firstWithSignal(send, receive).doFinally(s -> {
            routes.state.channelsOpen.decrementAndGet();
            opened.tryEmitComplete();
            streams.clear();
        });
    }

    /** A close reason fits in a control frame (125 bytes, 2 of them the code). */
    private static String reason(String message) {
        byte[] b = message.getBytes(StandardCharsets.UTF_8);
        return b.length <= 120 ? message : new String(Arrays.copyOf(b, 120), StandardCharsets.UTF_8);
    }

    private void onFrame(WebSocketFrame frame) {
        if (frame instanceof TextWebSocketFrame) {
            throw new ChannelFrames.MalformedFrameException("the channel takes binary frames only");
        }
        if (!(frame instanceof BinaryWebSocketFrame)) {
            return; // ping, pong, close: the WebSocket's own
        }
        byte[] message = ByteBufUtil.getBytes(frame.content());
        if (message.length == 0) {
            throw new ChannelFrames.MalformedFrameException("an empty channel message");
        }
        int at = 0;
        while (at < message.length) {
            ChannelFrames.Frame f = ChannelFrames.decode(message, at, routes.maxClientMessage(), true);
            handle(f);
            at = f.end();
        }
    }

    private void handle(ChannelFrames.Frame f) {
        int id = f.stream();
        switch (f.type()) {
            case ChannelFrames.OPEN_EXEC, ChannelFrames.OPEN_RUN, ChannelFrames.RESUME_EXEC -> {
                if (streams.containsKey(id)) {
                    throw new ChannelFrames.MalformedFrameException("stream " + id + " is already open");
                }
                String sessionId = ChannelFrames.openSession(f);
                int from = ChannelFrames.openBodyOffset(f);
                byte[] body = Arrays.copyOfRange(f.bytes(), from, f.end());
                Publisher<WebSocketFrame> p;
                if (streams.size() >= MAX_STREAMS) {
                    p = Mono.just(error(
                            id,
                            new HttpError(
                                    429,
                                    "TooManyStreams",
                                    "a channel has at most " + MAX_STREAMS + " commands open at once")));
                } else {
                    Stream st = new Stream(id);
                    streams.put(id, st);
                    if (f.type() == ChannelFrames.RESUME_EXEC) {
                        p = resume(
                                st,
                                sessionId,
                                ChannelFrames.resumeExecId(f),
                                ChannelFrames.resumeStdout(f),
                                ChannelFrames.resumeStderr(f));
                    } else {
                        routes.state.channelCommands.increment();
                        p = f.type() == ChannelFrames.OPEN_EXEC ? exec(st, sessionId, body) : run(st, sessionId, body);
                    }
                }
                if (opened.tryEmitNext(p).isFailure()) {
                    throw new ChannelFrames.MalformedFrameException("too many opens waiting");
                }
            }
            case ChannelFrames.ACK -> {
                Stream st = streams.get(id);
                ExecChannel c = st == null ? null : st.exec;
                if (c != null) {
                    c.ack(ChannelFrames.ackStdout(f), ChannelFrames.ackStderr(f));
                }
            }
            case ChannelFrames.CANCEL -> {
                Stream st = streams.remove(id);
                if (st != null) {
                    st.cancel();
                }
            }
            default -> throw new ChannelFrames.MalformedFrameException("unexpected frame type " + f.type());
        }
    }

    private static RequestBodies.ExecBody execBody(byte[] body) {
        return RequestBodies.read(Routes.object(WireJson.parse(body)), RequestBodies.ExecBody.class);
    }

    /** Runs an operation on a session of this connection's tenant, as {@link Routes#withSession} does. */
    private <T> Mono<T> withSession(String sessionId, Function<SandboxSession, Mono<T>> op) {
        return routes.sessions
                .lookup(sessionId, tenant)
                .flatMap(s -> {
                    if (routes.draining()) {
                        return Mono.error(new HttpError(503, "ShuttingDown", "the server is shutting down"));
                    }
                    routes.active();
                    return op.apply(s);
                })
                .doOnError(t -> routes.sessions.observe(sessionId, t));
    }

    private Publisher<WebSocketFrame> exec(Stream st, String sessionId, byte[] json) {
        int id = st.id;
        return Mono.fromCallable(() -> execBody(json))
                .flatMapMany(n -> {
                    ExecOptions options = routes.options(n);
                    String execId = n.id() != null ? n.id() : ExecRoutes.newExecId();
                    return withSession(
                                    sessionId,
                                    s -> routes.limit.acquireQueued(QUEUE_WAIT).map(slot -> {
                                        boolean[] taken = {false};
                                        try {
                                            return routes.openExec(s, options, n.stdinId(), execId, () -> {
                                                taken[0] = true;
                                                return slot;
                                            });
                                        } finally {
                                            if (!taken[0]) {
                                                slot.run(); // joined an exec that runs already, or failed
                                            }
                                        }
                                    }))
                            .flatMapMany(channel -> attached(st, channel, -1, -1));
                })
                .onErrorResume(t -> {
                    streams.remove(id, st);
                    return Mono.just(error(id, t));
                });
    }

    /**
     * An exec opened earlier, continued on this stream after the client's offsets: the same checks as {@code GET
     * .../execs/{exec}/events} (the tenant's session, an exec of that session, offsets not acknowledged past).
     */
    private Publisher<WebSocketFrame> resume(Stream st, String sessionId, String execId, long stdout, long stderr) {
        int id = st.id;
        return withSession(sessionId, s -> Mono.fromCallable(() -> routes.execs.get(execId, s.id())))
                .flatMapMany(channel -> attached(st, channel, stdout, stderr))
                .onErrorResume(t -> {
                    streams.remove(id, st);
                    return Mono.just(error(id, t));
                });
    }

    /** The frames of an exec's window read from the client's offsets: opened, then the items as the window has them. */
    private Flux<WebSocketFrame> attached(Stream st, ExecChannel channel, long stdout, long stderr) {
        int id = st.id;
        st.exec = channel;
        if (st.cancelled) {
            channel.release();
            return Flux.empty();
        }
        Publisher<Http.Frame> frames = channel.attach(stdout, stderr, Http.Format.NDJSON, true, loop);
        return Flux.concat(
                Mono.fromSupplier(() -> binary(ChannelFrames.opened(id, channel.windowLimit()))),
                Flux.from(frames).map(f -> event(id, f.json())));
    }

    private Publisher<WebSocketFrame> run(Stream st, String sessionId, byte[] json) {
        int id = st.id;
        return Mono.fromCallable(() -> execBody(json))
                .flatMap(n -> {
                    ExecOptions options = routes.options(n);
                    String stdinId = n.stdinId();
                    return withSession(
                                    sessionId,
                                    s -> routes.limit.acquireQueued(QUEUE_WAIT).flatMap(slot -> {
                                        // answered on this connection's event loop, where it is written (as over REST)
                                        Mono<ExecResult> result = s instanceof BatchedExec direct
                                                ? direct.run(options, loopScheduler)
                                                : s.run(options);
                                        return result.doFinally(sig -> slot.run());
                                    }))
                            .doFinally(sig -> {
                                if (stdinId != null) {
                                    routes.stdins.abandon(stdinId);
                                }
                            });
                })
                .map(r -> binary(ChannelFrames.frame(
                        ChannelFrames.RESULT, id, WireJson.bytes(ResourceBodies.ExecResultBody.of(r)))))
                .onErrorResume(t -> Mono.just(error(id, t)))
                .takeUntilOther(st.cancel.asMono())
                .doFinally(sig -> streams.remove(id, st));
    }

    private static WebSocketFrame binary(byte[] frame) {
        return new BinaryWebSocketFrame(Unpooled.wrappedBuffer(frame));
    }

    /** An exec's item: the window's own JSON behind a header of its own, no copy. */
    private static WebSocketFrame event(int id, byte[] json) {
        return new BinaryWebSocketFrame(
                Unpooled.wrappedBuffer(ChannelFrames.header(ChannelFrames.EVENT, id, json.length), json));
    }

    private static WebSocketFrame error(int id, Throwable t) {
        int status = ErrorMapping.status(t, false);
        if (status >= 500 && status != 502 && status != 503) {
            LOG.warn("a command on the channel failed", t);
        }
        return binary(ChannelFrames.error(id, status, WireJson.bytes(ErrorMapping.body(t))));
    }
}
