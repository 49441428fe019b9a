package dev.sandbox.server.implementation;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.LastHttpContent;

/**
 * After the codec, on the way out: once a response's last part is written, asks the connection for one more read.
 * reactor-netty reads a keep-alive connection on demand and re-arms each read itself; when a request arrived while
 * the previous one was still ending, it is queued, and the queue can drain without a read being asked for again
 * (reactor-netty issue 4361, in 1.3.7): the next request then waits unread in the socket for good, and its client
 * times out. One extra read per response is harmless (a request that comes early is queued, as any pipelined one) and
 * keeps the connection from stalling.
 */
final class ReadAfterResponse extends ChannelOutboundHandlerAdapter {
    static final String NAME = "sandbox.readAfterResponse";

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
        if (msg instanceof LastHttpContent) {
            ChannelPromise written = promise.unvoid();
            written.addListener(f -> {
                if (f.isSuccess()
                        && ctx.channel().isActive()
                        && !ctx.channel().config().isAutoRead()) {
                    ctx.read();
                }
            });
            ctx.write(msg, written);
            return;
        }
        ctx.write(msg, promise);
    }
}
