package dev.sandbox.server.implementation;

import dev.sandbox.server.implementation.GuardedConnection.Phase;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;

/**
 * The {@link ConnectionGuard}'s handlers in each connection's pipeline: the start of a request head (first), its end
 * and the token check (just after the codec), and the gate that holds reads while a request waits for a slot and
 * closes a connection after its response when requests wait.
 */
final class GuardHandlers {
    static final String HEAD_START = "sandbox.headWatch";
    static final String HEAD_END = "sandbox.headEnd";
    static final String GATE = "sandbox.slotGate";

    private GuardHandlers() {}

    /** Answers a held or refused request 503 {@code ServerBusy} with {@code Retry-After}, then closes. */
    static void busy(ConnectionGuard guard, GuardedConnection c, String message) {
        guard.noteBusy();
        if (c.afterCodec != null && c.channel.isActive()) {
            c.answer(
                    c.afterCodec,
                    HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "ServerBusy",
                    message,
                    ConnectionGuard.RETRY_AFTER_SECONDS);
        } else {
            c.channel.close();
        }
    }

    /**
     * First in the pipeline: the first bytes of a request head start its deadline. Once the HTTP codec has left the
     * pipeline (a WebSocket upgrade), the bytes are frames, not heads: the watch leaves too, or it would close a live
     * socket a head deadline after its first frame.
     */
    static final class HeadStart extends ChannelInboundHandlerAdapter {
        private final ConnectionGuard guard;
        private final GuardedConnection state;
        private final String codecName;

        HeadStart(ConnectionGuard guard, GuardedConnection state, String codecName) {
            this.guard = guard;
            this.state = state;
            this.codecName = codecName;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (ctx.pipeline().context(codecName) == null) {
                state.cancelHead();
                ctx.pipeline().remove(this);
            } else if (msg instanceof ByteBuf b && b.isReadable()) {
                state.startHead(guard.headTimeoutNanos);
            }
            ctx.fireChannelRead(msg);
        }
    }

    /**
     * After the codec: a decoded head ends its deadline and its token is checked; a request the codec refused gets a
     * JSON answer. On a connection without a slot, the request is held for the queue (with a valid token), or
     * answered: 401 without one, 503 when even the queue is full.
     */
    static final class HeadEnd extends ChannelInboundHandlerAdapter {
        private final ConnectionGuard guard;
        private final GuardedConnection state;

        HeadEnd(ConnectionGuard guard, GuardedConnection state) {
            this.guard = guard;
            this.state = state;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            state.afterCodec = ctx;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (state.discarding) {
                ReferenceCountUtil.release(msg);
                return;
            }
            if (msg instanceof LastHttpContent) {
                state.awaitingHead = true;
            }
            if (msg instanceof HttpRequest req) {
                state.cancelHead();
                state.awaitingHead = msg instanceof LastHttpContent;
                if (req.decoderResult().isFailure()) {
                    Throwable cause = req.decoderResult().cause();
                    ReferenceCountUtil.release(msg);
                    refuse(ctx, cause);
                    return;
                }
                if (!state.authenticated && guard.validToken(req.headers().get(HttpHeaderNames.AUTHORIZATION))) {
                    guard.authenticated(state);
                }
                Phase phase = state.phase;
                if (phase == Phase.WAITING || phase == Phase.REFUSING) {
                    if (!state.authenticated) {
                        ReferenceCountUtil.release(msg);
                        state.answer(
                                ctx,
                                HttpResponseStatus.UNAUTHORIZED,
                                "Unauthorized",
                                "a valid bearer token is required (Authorization: Bearer ...)",
                                0);
                    } else if (phase == Phase.REFUSING) {
                        ReferenceCountUtil.release(msg);
                        busy(guard, state, "the server is at its connection limit and its queue is full; try again");
                    } else {
                        state.held.add(msg);
                        guard.arrived(state);
                    }
                    return;
                }
            }
            if (!state.held.isEmpty()) {
                state.held.add(msg); // the rest of a request that waits for a slot
                return;
            }
            ctx.fireChannelRead(msg);
        }

        private void refuse(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof TooLongHttpHeaderException) {
                state.answer(
                        ctx,
                        HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                        "HeadersTooLarge",
                        "the request headers are over the server's limit",
                        0);
            } else if (cause instanceof TooLongHttpLineException) {
                state.answer(
                        ctx,
                        HttpResponseStatus.REQUEST_URI_TOO_LONG,
                        "UriTooLong",
                        "the request line is over the server's limit",
                        0);
            } else if (cause instanceof TooLongFrameException) {
                state.answer(
                        ctx,
                        HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                        "HeadersTooLarge",
                        "the request head is over the server's limit",
                        0);
            } else {
                state.answer(
                        ctx,
                        HttpResponseStatus.BAD_REQUEST,
                        "MalformedRequest",
                        "the request is not well-formed HTTP/1.1",
                        0);
            }
        }
    }

    /**
     * After the head's end, both ways: while a request is held for a slot, the reads the server asks for wait (so
     * nothing more of it is buffered) and are made when it is released; while requests wait in the queue, a
     * response that starts on a connection with a slot says {@code Connection: close} and the connection closes once
     * it is written, handing its slot to the oldest waiting request.
     */
    static final class Gate extends ChannelDuplexHandler {
        private final ConnectionGuard guard;
        private final GuardedConnection state;

        Gate(ConnectionGuard guard, GuardedConnection state) {
            this.guard = guard;
            this.state = state;
        }

        @Override
        public void read(ChannelHandlerContext ctx) {
            if (!state.held.isEmpty()) {
                state.readPending = true;
                return;
            }
            ctx.read();
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof HttpResponse res
                    && res.status().code() >= 200
                    && res.status().code() != 101
                    && state.phase == Phase.ADMITTED
                    && guard.requestsWaiting()) {
                res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
                state.closeAfterResponse = true;
            }
            if (msg instanceof LastHttpContent && state.closeAfterResponse) {
                ctx.write(msg, promise.unvoid()).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            ctx.write(msg, promise);
        }
    }
}
