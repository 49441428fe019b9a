package dev.sandbox.server.implementation;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.implementation.wire.ErrorBodies;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection as the {@link ConnectionGuard} sees it: where it stands (admitted, waiting for a slot, refused),
 * its deadlines, and the request it holds while it waits. Its {@link #phase} changes only under the guard's lock;
 * everything else is touched on the connection's event loop only.
 */
final class GuardedConnection {
    private static final Logger LOG = LoggerFactory.getLogger(GuardedConnection.class);

    /** Where a connection stands. */
    enum Phase {
        /** Holds one of the {@code maxConnections} slots: its requests go to the routes. */
        ADMITTED,
        /** Over the limit, within the queue: its first request is held until a slot frees or the queue times out. */
        WAITING,
        /** Over the limit and the queue: its first request is answered 503 as soon as its head arrives. */
        REFUSING,
        /** Closed by the guard to make room; its slot went to another connection. */
        EVICTED,
        /** Closed, and no longer counted. */
        CLOSED
    }

    final Channel channel;
    final long openedNanos = System.nanoTime();
    /** Changed under the guard's lock only. */
    volatile Phase phase;

    volatile boolean authenticated;
    ScheduledFuture<?> authDeadline;
    /** Whether the next bytes start a request head. */
    boolean awaitingHead = true;

    ScheduledFuture<?> headDeadline;
    ScheduledFuture<?> queueDeadline;
    /** The held request and whatever of it arrived with its head, in order, while waiting for a slot. */
    final List<Object> held = new ArrayList<>(2);
    /** A read asked for while the request was held, made when it is released. */
    boolean readPending;
    /** After the guard's own answer (401, 503): everything else the client sends is dropped. */
    boolean discarding;
    /** The context just after the HTTP codec, where a held request is passed on from. */
    ChannelHandlerContext afterCodec;
    /** Whether the response being written closes the connection, handing its slot to a waiting request. */
    boolean closeAfterResponse;

    GuardedConnection(Channel channel) {
        this.channel = channel;
    }

    void startHead(long headTimeoutNanos) {
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

    /** Cancels every deadline and drops a held request (the connection closed). */
    void cancelAll() {
        cancelHead();
        if (authDeadline != null) {
            authDeadline.cancel(false);
        }
        if (queueDeadline != null) {
            queueDeadline.cancel(false);
        }
        if (channel.eventLoop().inEventLoop()) {
            dropHeld();
        } else {
            channel.eventLoop().execute(this::dropHeld);
        }
    }

    private void dropHeld() {
        for (Object m : held) {
            ReferenceCountUtil.release(m);
        }
        held.clear();
    }

    /** Passes the held request on to the routes (on the event loop), now that the connection holds a slot. */
    void release() {
        if (queueDeadline != null) {
            queueDeadline.cancel(false);
            queueDeadline = null;
        }
        if (!channel.isActive() || afterCodec == null) {
            dropHeld();
            return;
        }
        List<Object> messages = new ArrayList<>(held);
        held.clear();
        for (Object m : messages) {
            afterCodec.fireChannelRead(m);
        }
        afterCodec.fireChannelReadComplete();
        if (readPending) {
            readPending = false;
            channel.read();
        }
    }

    /**
     * Answers with the guard's own error and closes the connection once it is written; what the client sends after
     * is dropped.
     *
     * @param ctx the context to write from (just after the codec)
     * @param status the status
     * @param type the error's type
     * @param message the error's message
     * @param retryAfterSeconds the {@code Retry-After} header's seconds, or 0 for none
     */
    void answer(
            ChannelHandlerContext ctx, HttpResponseStatus status, String type, String message, int retryAfterSeconds) {
        discarding = true;
        dropHeld();
        ObjectNode body = ErrorBodies.error(type, message);
        ((ObjectNode) body.get("error")).put("retryable", retryAfterSeconds > 0);
        byte[] bytes = WireJson.bytes(body);
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(bytes));
        res.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, WireJson.APPLICATION_JSON)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, bytes.length)
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        if (retryAfterSeconds > 0) {
            res.headers().setInt(HttpHeaderNames.RETRY_AFTER, retryAfterSeconds);
        }
        if (status.code() == 401) {
            res.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer");
        }
        ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
    }
}
