package dev.sandbox.server;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Netty 4.2's adaptive allocator guards its magazines with a {@code StampedLock} held for a few instructions; under
 * contention the lock parks, which BlockHound reports from the event loops. It is a synchronisation detail of the
 * allocator, not blocking I/O, so those two methods are allowed (as other Netty users do).
 */
public final class NettyAllocatorBlockHoundIntegration implements BlockHoundIntegration {
    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "free");
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "tryAllocate");
        builder.allowBlockingCallsInside(
                "io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines");
    }
}
