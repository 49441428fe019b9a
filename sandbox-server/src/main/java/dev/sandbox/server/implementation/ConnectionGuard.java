package dev.sandbox.server.implementation;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.implementation.wire.ErrorBodies;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps connections from starving the server: a cap on open connections, a deadline for reading each request head,
 * a deadline for a connection to present the token, and JSON bodies for the codec's own refusals.
 *
 * <ul>
 *   <li>A connection that has not yet carried a request with a valid token is closed {@code authTimeout} after it
 *       opened.
 *   <li>Once a request head has started to arrive it must be complete within {@code headTimeout}, authenticated
 *       connection or not; long bodies and streams are not affected.
 *   <li>At most {@code maxConnections} are open: one more closes the oldest connection that has not authenticated,
 *       or, when every open connection has, the new one. A client with the token is thus served while others hold
 *       idle connections.
 *   <li>A request the codec cannot read (headers or initial line too long, garbage) gets 431, 414 or 400 with the
 *       usual JSON error body, then the connection is closed.
 * </ul>
 *
 * Everything runs on the connection's event loop, except the bookkeeping of the cap, which is lock-free.
 */
public final class ConnectionGuard {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);
    private static final AttributeKey<State> STATE = AttributeKey.valueOf("dev.sandbox.server.connection");

    private final int maxConnections;
    private final long headTimeoutNanos;
    private final long authTimeoutNanos;
    private final AtomicInteger open = new AtomicInteger();
    private final ConcurrentLinkedDeque<State> unauthenticated = new ConcurrentLinkedDeque<>();

    /**
     * Creates the guard.
     *
     * @param maxConnections the most open connections
     * @param headTimeout the longest a request head may take to arrive once it started
     * @param authTimeout the longest a connection may stay open without presenting the token
     */
    public ConnectionGuard(int maxConnections, Duration headTimeout, Duration authTimeout) {
        this.maxConnections = maxConnections;
        this.headTimeoutNanos = headTimeout.toNanos();
        this.authTimeoutNanos = authTimeout.toNanos();
    }

    /**
     * How many connections are open.
     *
     * @return the count
     */
    public int open() {
        return open.get();
    }

    /**
     * Sets up a new connection: counts it (closing one when over the cap), arms its deadlines and adds the handlers
     * around the HTTP codec.
     *
     * @param ch the connection, its pipeline holding the codec under {@code codecName}
     * @param codecName the name of the HTTP codec in the pipeline
     */
    public void init(Channel ch, String codecName) {
        State state = new State(ch);
        ch.attr(STATE).set(state);
        open.incrementAndGet();
        unauthenticated.addLast(state);
        ch.closeFuture().addListener(f -> {
            open.decrementAndGet();
            unauthenticated.remove(state);
            state.cancelHead();
            if (state.authDeadline != null) {
                state.authDeadline.cancel(false);
            }
        });
        if (open.get() > maxConnections) {
            State victim = oldestUnauthenticatedOtherThan(state);
            if (victim == null) {
                LOG.debug("refusing a connection: {} open, all authenticated", open.get());
                ch.close();
                return;
            }
            LOG.debug("over {} connections: closing the oldest unauthenticated one", maxConnections);
            victim.channel.close();
        }
        state.authDeadline = ch.eventLoop()
                .schedule(
                        () -> {
                            if (!state.authenticated) {
                                ch.close();
                            }
                        },
                        authTimeoutNanos,
                        TimeUnit.NANOSECONDS);
        ch.pipeline().addFirst("sandbox.headWatch", new HeadStart(state, codecName));
        ch.pipeline().addAfter(codecName, "sandbox.headEnd", new HeadEnd(state));
        ch.pipeline().addAfter("sandbox.headEnd", ReadAfterResponse.NAME, new ReadAfterResponse());
    }

    private State oldestUnauthenticatedOtherThan(State self) {
        for (Iterator<State> it = unauthenticated.iterator(); it.hasNext(); ) {
            State s = it.next();
            if (s != self && !s.authenticated) {
                it.remove();
                return s;
            }
        }
        return null;
    }

    /**
     * Notes that a connection carried a request with a valid token: it is no longer closed for staying
     * unauthenticated, nor chosen to make room.
     *
     * @param ch the connection
     */
    public void authenticated(Channel ch) {
        State state = ch.attr(STATE).get();
        if (state != null && !state.authenticated) {
            state.authenticated = true;
            unauthenticated.remove(state);
            if (state.authDeadline != null) {
                state.authDeadline.cancel(false);
            }
        }
    }

    private final class State {
        final Channel channel;
        volatile boolean authenticated;
        ScheduledFuture<?> authDeadline;
        /** Whether the next bytes start a request head (event loop only). */
        boolean awaitingHead = true;

        ScheduledFuture<?> headDeadline;

        State(Channel channel) {
            this.channel = channel;
        }

        void startHead() {
            if (awaitingHead && headDeadline == null) {
                headDeadline = channel.eventLoop()
                        .schedule(
                                () -> {
                                    LOG.debug("closing a connection whose request head did not arrive in time");
                                    channel.close();
                                },
                                headTimeoutNanos,
                                TimeUnit.NANOSECONDS);
            }
        }

        void cancelHead() {
            if (headDeadline != null) {
                headDeadline.cancel(false);
                headDeadline = null;
            }
        }
    }

    /**
     * First in the pipeline: the first bytes of a request head start its deadline. Once the HTTP codec has left the
     * pipeline (a WebSocket upgrade), the bytes are frames, not heads: the watch leaves too, or it would close a live
     * socket a head deadline after its first frame.
     */
    private static final class HeadStart extends ChannelInboundHandlerAdapter {
        private final State state;
        private final String codecName;

        HeadStart(State state, String codecName) {
            this.state = state;
            this.codecName = codecName;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (ctx.pipeline().context(codecName) == null) {
                state.cancelHead();
                ctx.pipeline().remove(this);
            } else if (msg instanceof ByteBuf b && b.isReadable()) {
                state.startHead();
            }
            ctx.fireChannelRead(msg);
        }
    }

    /** After the codec: a decoded head ends its deadline; a request the codec refused gets a JSON answer. */
    private static final class HeadEnd extends ChannelInboundHandlerAdapter {
        private final State state;

        HeadEnd(State state) {
            this.state = state;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof HttpRequest req) {
                state.cancelHead();
                state.awaitingHead = false;
                if (req.decoderResult().isFailure()) {
                    Throwable cause = req.decoderResult().cause();
                    ReferenceCountUtil.release(msg);
                    refuse(ctx, cause);
                    return;
                }
            }
            if (msg instanceof LastHttpContent) {
                state.awaitingHead = true;
            }
            ctx.fireChannelRead(msg);
        }

        private static void refuse(ChannelHandlerContext ctx, Throwable cause) {
            HttpResponseStatus status;
            String type;
            String message;
            if (cause instanceof TooLongHttpHeaderException) {
                status = HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE;
                type = "HeadersTooLarge";
                message = "the request headers are over the server's limit";
            } else if (cause instanceof TooLongHttpLineException) {
                status = HttpResponseStatus.REQUEST_URI_TOO_LONG;
                type = "UriTooLong";
                message = "the request line is over the server's limit";
            } else if (cause instanceof TooLongFrameException) {
                status = HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE;
                type = "HeadersTooLarge";
                message = "the request head is over the server's limit";
            } else {
                status = HttpResponseStatus.BAD_REQUEST;
                type = "MalformedRequest";
                message = "the request is not well-formed HTTP/1.1";
            }
            byte[] body = WireJson.bytes(wrap(type, message));
            FullHttpResponse res =
                    new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
            res.headers()
                    .set(HttpHeaderNames.CONTENT_TYPE, WireJson.APPLICATION_JSON)
                    .setInt(HttpHeaderNames.CONTENT_LENGTH, body.length)
                    .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
        }

        private static ObjectNode wrap(String type, String message) {
            ObjectNode body = ErrorBodies.error(type, message);
            ((ObjectNode) body.get("error")).put("retryable", false);
            return body;
        }
    }
}
