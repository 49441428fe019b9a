package dev.sandbox.implementation.exec;

import dev.sandbox.testsupport.ReactiveStreamsTck;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/** The Reactive Streams TCK against {@link StdinChannel}, the publisher a process's stdin pump reads. */
class StdinChannelTckTest {
    private static final String ONE_READER =
            "a process has one standard input: a second reader is refused with onError (checked as the failed publisher)";

    @TestFactory
    Stream<DynamicTest> stdin_channel_follows_the_reactive_streams_rules() {
        return ReactiveStreamsTck.rules(
                new Verification(),
                Map.of(
                        "optional_spec111_maySupportMultiSubscribe", ONE_READER,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront",
                                ONE_READER,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected",
                                ONE_READER,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne",
                                ONE_READER,
                        "optional_spec111_registeredSubscribersMustReceiveOnNextOrOnCompleteSignals", ONE_READER));
    }

    /** Channels fed by a writer that waits for each write, then closes. */
    static final class Verification extends PublisherVerification<ByteBuffer> {
        Verification() {
            super(new TestEnvironment(2_000, 200));
        }

        /** A writer that waits for each write, as a caller of {@code BackgroundProcess.write} does, then closes. */
        @Override
        public Publisher<ByteBuffer> createPublisher(long elements) {
            StdinChannel channel = new StdinChannel();
            Flux.<Long, Long>generate(() -> 0L, (i, sink) -> {
                        if (i < elements) {
                            sink.next(i);
                        } else {
                            sink.complete();
                        }
                        return i + 1;
                    })
                    .concatMap(i -> channel.write(ByteBuffer.wrap(new byte[] {(byte) (long) i})), 1)
                    .then(channel.close())
                    .subscribe(v -> {}, e -> {});
            return channel;
        }

        /** A channel that has its reader already: another subscriber is refused. */
        @Override
        public Publisher<ByteBuffer> createFailedPublisher() {
            StdinChannel channel = new StdinChannel();
            channel.subscribe(new BaseSubscriber<ByteBuffer>() {});
            return channel;
        }
    }
}
