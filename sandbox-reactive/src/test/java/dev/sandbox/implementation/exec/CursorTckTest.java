package dev.sandbox.implementation.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecOptions;
import dev.sandbox.implementation.process.ProcessLauncher;
import dev.sandbox.implementation.process.ProcessSpec;
import dev.sandbox.implementation.process.RawEvent;
import dev.sandbox.testsupport.ReactiveStreamsTck;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK against the cursor of a {@link RingBackgroundProcess}: a reader of a background process's
 * output rings from its own offsets, the subscription behind {@code output}, {@code snapshot} and {@code collect} of
 * the local provider. The processes are real ({@code head -c} on the best launcher): a publisher of N elements is a
 * snapshot of a process that wrote N-1 chunks of {@value #CHUNK} bytes (one read of a ring each) and exited, the exit
 * being the last element; a publisher of none is a snapshot of a process that is still running and wrote nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CursorTckTest {
    private static final int CHUNK = 64 * 1024;
    private static final int MAX_ELEMENTS = 33;
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static final String OWN_COPY = "every reader gets its own copy of the bytes: the same chunks, but a chunk"
            + " holds a byte array, so two readers' chunks are not equal() to each other";

    private final ExecRunner runner = new ExecRunner();
    private final List<BackgroundProcess> started = new ArrayList<>();

    @AfterAll
    void killAll() {
        for (BackgroundProcess p : started) {
            p.signal(9).block(WAIT);
        }
    }

    @TestFactory
    Stream<DynamicTest> a_cursor_follows_the_reactive_streams_rules() {
        return ReactiveStreamsTck.rules(
                new Verification(),
                Map.of(
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront",
                        OWN_COPY,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected",
                        OWN_COPY,
                        "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne",
                        OWN_COPY,
                        "optional_spec104_mustSignalOnErrorWhenFails",
                        "a cursor's only failure, an offset the ring no longer holds, needs output overwritten"
                                + " while it reads",
                        "required_spec109_mayRejectCallsToSubscribeIfPublisherIsUnableOrUnwillingToServeThemRejectionMustTriggerOnErrorAfterOnSubscribe",
                        "as optional_spec104: no failed publisher",
                        "required_spec317_mustNotSignalOnErrorWhenPendingAboveLongMaxValue",
                        "it needs a process that wrote Integer.MAX_VALUE chunks into a ring that holds them"));
    }

    /** A background process running {@code command} with {@code sh -c}, started on the best launcher. */
    private RingBackgroundProcess start(String command) {
        ProcessLauncher launcher = ProcessLauncher.best();
        BackgroundProcess p = runner.start(
                        ExecOptions.of("sh", "-c", command),
                        BackgroundOptions.defaults().withRingBytes(4 * 1024 * 1024),
                        options -> launcher.spawn(new ProcessSpec(
                                "/bin/sh",
                                options.argv(),
                                System.getProperty("java.io.tmpdir"),
                                Map.of("PATH", "/usr/bin:/bin"),
                                options.stdin().orElse(null))),
                        () -> {})
                .block(WAIT);
        assertThat(p).isInstanceOf(RingBackgroundProcess.class);
        started.add(p);
        return (RingBackgroundProcess) p;
    }

    final class Verification extends PublisherVerification<RawEvent> {
        Verification() {
            super(new TestEnvironment(2_000, 200));
        }

        @Override
        public Publisher<RawEvent> createPublisher(long elements) {
            if (elements == 0) {
                return start("exec sleep 60").cursor(0, 0, false);
            }
            RingBackgroundProcess p = start("head -c " + (elements - 1) * CHUNK + " /dev/zero");
            assertThat(p.exit().block(WAIT).code()).isZero();
            return p.cursor(0, 0, false);
        }

        @Override
        public Publisher<RawEvent> createFailedPublisher() {
            return null;
        }

        @Override
        public long maxElementsFromPublisher() {
            return MAX_ELEMENTS;
        }
    }
}
