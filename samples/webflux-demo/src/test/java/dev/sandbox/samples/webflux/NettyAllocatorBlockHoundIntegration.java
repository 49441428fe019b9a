package dev.sandbox.samples.webflux;

import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Netty's adaptive buffer allocator takes a short internal lock when it grows its magazines; under contention that
 * lock parks for microseconds, which BlockHound reports although it is Netty's own bookkeeping, not I/O. Allowed here
 * for the tests, the same way Netty's own integration allows its other internal locks.
 */
public final class NettyAllocatorBlockHoundIntegration implements BlockHoundIntegration {
    @Override
    public void applyTo(BlockHound.Builder builder) {
        builder.allowBlockingCallsInside(
                "io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines");
        builder.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$Magazine", "free");
    }
}
