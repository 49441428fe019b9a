package dev.sandbox.blocking;

import dev.sandbox.testsupport.ReactiveStreamsTck;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import reactor.core.publisher.BaseSubscriber;

/**
 * The Reactive Streams TCK against {@link ContentPump}, the publisher a blocking caller's thread feeds with the content
 * of a stream or a file.
 */
class ContentPumpTckTest {
    private static final String ONE_CONSUMER =
            "content is read once: a second subscriber is refused with onError (checked as the failed publisher)";

    @TestFactory
    Stream<DynamicTest> content_pump_follows_the_reactive_streams_rules() {
        return ReactiveStreamsTck.rules(
                new Verification(),
                Map.of(
                        "optional_spec111_maySupportMultiSubscribe", ONE_CONSUMER,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront",
                                ONE_CONSUMER,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected",
                                ONE_CONSUMER,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne",
                                ONE_CONSUMER,
                        "optional_spec111_registeredSubscribersMustReceiveOnNextOrOnCompleteSignals", ONE_CONSUMER));
    }

    /** Pumps fed by a thread of their own, as a blocking caller feeds them, each buffer as demand allows. */
    static final class Verification extends PublisherVerification<ByteBuffer> {
        Verification() {
            super(new TestEnvironment(2_000, 200));
        }

        @Override
        public Publisher<ByteBuffer> createPublisher(long elements) {
            ContentPump pump = new ContentPump();
            Thread feeder = new Thread(
                    () -> {
                        try {
                            for (long i = 0; i < elements; i++) {
                                ContentPump.Wait wait = pump.awaitDemand(TimeUnit.SECONDS.toNanos(10));
                                if (wait != ContentPump.Wait.DEMAND) {
                                    return;
                                }
                                pump.emit(ByteBuffer.wrap(new byte[] {(byte) i}));
                            }
                            pump.complete();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "content-pump-feeder");
            feeder.setDaemon(true);
            feeder.start();
            return pump;
        }

        /** A pump whose content has a consumer already: another subscriber is refused. */
        @Override
        public Publisher<ByteBuffer> createFailedPublisher() {
            ContentPump pump = new ContentPump();
            pump.subscribe(new BaseSubscriber<ByteBuffer>() {});
            return pump;
        }
    }
}
