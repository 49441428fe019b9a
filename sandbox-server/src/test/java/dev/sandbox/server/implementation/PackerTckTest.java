package dev.sandbox.server.implementation;

import dev.sandbox.testsupport.ReactiveStreamsTck;
import io.netty.buffer.ByteBuf;
import io.netty.channel.DefaultEventLoop;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK against {@link Packer}, which frames a stream's events into the buffers written to its
 * connection, on a Netty event loop as the server runs it. Each frame is {@link Packer#PACK_BYTES} bytes, the most one
 * buffer packs, so every frame is one buffer and the TCK can count them; the heartbeat is an hour, so no beat is
 * counted as an element.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PackerTckTest {
    private static final Http.Frame FULL_FRAME = Http.Frame.raw(new byte[Packer.PACK_BYTES]);

    /**
     * An event loop on a plain thread: the TCK's subscribers record signals in blocking queues, which BlockHound
     * (rightly) refuses on Netty's own event-loop threads.
     */
    private final DefaultEventLoop loop =
            new DefaultEventLoop(Thread.ofPlatform().name("tck-loop").factory());

    @AfterAll
    void stopLoop() throws InterruptedException {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }

    @TestFactory
    Stream<DynamicTest> packer_follows_the_reactive_streams_rules() {
        return ReactiveStreamsTck.rules(new Verification(), Map.of());
    }

    final class Verification extends PublisherVerification<ByteBuf> {
        Verification() {
            super(new TestEnvironment(2_000, 200));
        }

        @Override
        public Publisher<ByteBuf> createPublisher(long elements) {
            return packer(Flux.<Http.Frame, Long>generate(() -> 0L, (i, sink) -> {
                if (i < elements) {
                    sink.next(FULL_FRAME);
                } else {
                    sink.complete();
                }
                return i + 1;
            }));
        }

        /** A stream whose events failed: the failure reaches the connection. */
        @Override
        public Publisher<ByteBuf> createFailedPublisher() {
            return packer(Flux.error(new IllegalStateException("the session's exec failed")));
        }

        private Publisher<ByteBuf> packer(Flux<Http.Frame> frames) {
            return new Packer(frames, Http.Format.NDJSON, loop, 16, Duration.ofHours(1));
        }
    }
}
