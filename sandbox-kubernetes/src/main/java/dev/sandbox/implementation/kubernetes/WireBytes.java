package dev.sandbox.implementation.kubernetes;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the bytes on the wire of every data-plane connection in this JVM (exec WebSockets to API servers, TLS
 * records included): a measuring hook for benchmarks and tests, not an API. The handler sits at the head of each
 * connection's pipeline, below TLS, so it sees what the socket reads and writes; counting is one {@link LongAdder}
 * add per read or write.
 *
 * <pre>{@code
 * long before = WireBytes.received() + WireBytes.sent();
 * session.run(ExecOptions.of("echo", "hi")).block();
 * long perRun = WireBytes.received() + WireBytes.sent() - before;
 * }</pre>
 */
public final class WireBytes {
    private static final LongAdder RECEIVED = new LongAdder();
    private static final LongAdder SENT = new LongAdder();

    /** The handler the data plane puts first in every connection's pipeline. */
    static final ChannelHandler HANDLER = new Counter();

    private WireBytes() {}

    /**
     * Bytes read from data-plane sockets since this class was loaded.
     *
     * @return the count
     */
    public static long received() {
        return RECEIVED.sum();
    }

    /**
     * Bytes written to data-plane sockets since this class was loaded.
     *
     * @return the count
     */
    public static long sent() {
        return SENT.sum();
    }

    private static int size(Object msg) {
        if (msg instanceof ByteBuf b) {
            return b.readableBytes();
        }
        if (msg instanceof ByteBufHolder h) {
            return h.content().readableBytes();
        }
        return 0;
    }

    @ChannelHandler.Sharable
    private static final class Counter extends ChannelDuplexHandler {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            RECEIVED.add(size(msg));
            ctx.fireChannelRead(msg);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            SENT.add(size(msg));
            ctx.write(msg, promise);
        }
    }
}
