package dev.sandbox.server.implementation;

import dev.sandbox.testsupport.ReactiveStreamsTck;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK against {@link Coalescing}, which joins a request body's chunks for a process's stdin. Each
 * chunk is {@link Coalescing#MAX_JOINED} bytes, the most one buffer holds, so that every chunk is one buffer and the
 * TCK can count them.
 */
class CoalescingTckTest {
    private static final byte[] FULL_CHUNK = new byte[Coalescing.MAX_JOINED];

    @TestFactory
    Stream<DynamicTest> coalescing_follows_the_reactive_streams_rules() {
        return ReactiveStreamsTck.rules(new Verification(), Map.of());
    }

    static final class Verification extends PublisherVerification<ByteBuffer> {
        Verification() {
            super(new TestEnvironment(2_000, 200));
        }

        @Override
        public Publisher<ByteBuffer> createPublisher(long elements) {
            return new Coalescing(Flux.<byte[], Long>generate(() -> 0L, (i, sink) -> {
                if (i < elements) {
                    sink.next(FULL_CHUNK);
                } else {
                    sink.complete();
                }
                return i + 1;
            }));
        }

        /** A body whose reading failed: the failure reaches the consumer. */
        @Override
        public Publisher<ByteBuffer> createFailedPublisher() {
            return new Coalescing(Flux.error(new IllegalStateException("the connection was reset")));
        }
    }
}
