package dev.sandbox.mcp;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * What BlockHound lets the event loops do in these tests. Netty 4.2's adaptive allocator guards its magazines with a
 * {@code StampedLock} held for a few instructions, which parks under contention: a synchronisation detail, not I/O.
 * The MCP SDK names each message it sends with {@link java.util.UUID#randomUUID()}, which reads {@code /dev/urandom}
 * through a {@code FileInputStream}; that device never blocks once the kernel's pool is initialised (at boot), so the
 * read is allowed there and nowhere else.
 */
public final class EventLoopBlockHoundIntegration implements BlockHoundIntegration {
    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "free");
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "tryAllocate");
        builder.allowBlockingCallsInside(
                "io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines");
        builder.allowBlockingCallsInside("java.util.UUID", "randomUUID");
    }
}
