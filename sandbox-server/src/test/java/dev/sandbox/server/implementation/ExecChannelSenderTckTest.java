package dev.sandbox.server.implementation;

import dev.sandbox.ExecEvent;
import dev.sandbox.implementation.exec.Framed;
import dev.sandbox.implementation.wire.LineBatch;
import dev.sandbox.testsupport.ReactiveStreamsTck;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 * The Reactive Streams TCK against the sender of an {@link ExecChannel}: the publisher of one HTTP response reading
 * the channel's window. A publisher of N elements is the response of a command that wrote N-1 chunks of output and
 * exited (the exit is the last frame); a publisher of none is a response that a reconnecting client took over before
 * it sent anything, which ends at once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExecChannelSenderTckTest {
    private static final String ONE_RESPONSE =
            "a sender is one HTTP response: a second subscriber is refused with onError";

    private static final String NO_FAILED_STATE =
            "a command's failure is a frame of the response (an error event), never onError";

    /** The connection's event loop, where a sender reads the window. */
    private final ExecutorService loop = Executors.newSingleThreadExecutor();

    @AfterAll
    void stopLoop() {
        loop.shutdownNow();
    }

    @TestFactory
    Stream<DynamicTest> an_exec_response_follows_the_reactive_streams_rules() {
        return ReactiveStreamsTck.rules(
                new Verification(),
                Map.of(
                        "optional_spec104_mustSignalOnErrorWhenFails", NO_FAILED_STATE,
                        "required_spec109_mayRejectCallsToSubscribeIfPublisherIsUnableOrUnwillingToServeThemRejectionMustTriggerOnErrorAfterOnSubscribe",
                                NO_FAILED_STATE,
                        "optional_spec111_maySupportMultiSubscribe", ONE_RESPONSE,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront",
                                ONE_RESPONSE,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected",
                                ONE_RESPONSE,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne",
                                ONE_RESPONSE,
                        "optional_spec111_registeredSubscribersMustReceiveOnNextOrOnCompleteSignals", ONE_RESPONSE));
    }

    final class Verification extends PublisherVerification<Http.Frame> {
        Verification() {
            super(new TestEnvironment(2_000, 200));
        }

        @Override
        public Publisher<Http.Frame> createPublisher(long elements) {
            ExecChannel channel =
                    new ExecChannel("e-tck", "s-tck", 1 << 20, 1024, Duration.ofMinutes(1), () -> {}, () -> {});
            channel.start(command(Math.max(0, elements - 1)));
            Publisher<Http.Frame> first = channel.attach(-1, -1, Http.Format.NDJSON, true, loop);
            if (elements > 0) {
                return first;
            }
            channel.attach(-1, -1, Http.Format.NDJSON, true, loop); // takes over: the first response ends empty
            return first;
        }

        @Override
        public Publisher<Http.Frame> createFailedPublisher() {
            return null;
        }
    }

    /** A command that writes {@code chunks} chunks of output, then exits with 0. */
    private static Flux<Framed<LineBatch>> command(long chunks) {
        return Flux.<Framed<LineBatch>, Long>generate(() -> 0L, (i, sink) -> {
            if (i < chunks) {
                sink.next(new Framed.Event<>(
                        new ExecEvent.Chunk(ExecEvent.StreamKind.STDOUT, ByteBuffer.wrap(new byte[] {'x'}), i)));
            } else {
                sink.next(new Framed.Event<>(new ExecEvent.Exit(0, ExecEvent.Termination.EXITED, Duration.ZERO)));
                sink.complete();
            }
            return i + 1;
        });
    }
}
