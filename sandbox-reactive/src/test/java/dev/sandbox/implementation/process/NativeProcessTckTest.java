package dev.sandbox.implementation.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.testsupport.ReactiveStreamsTck;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.SkipException;

/**
 * The Reactive Streams TCK against {@link NativeProcess}, the subscription of a local process's output on the epoll
 * loop. The element count of a running process depends on how its writes meet the loop's reads, so each publisher is a
 * process that has already exited, with at most one pipe's worth of output per stream waiting: one read each, then the
 * exit. That gives one element (no output), two (stdout) or three (stdout and stderr), never none: the rules that need
 * an empty publisher or more than three elements are listed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NativeProcessTckTest {
    private static final String EXIT_ALWAYS = "a process's output always ends with its exit: no publisher is empty";
    private static final String THREE_AT_MOST =
            "a process's element count is set only up to three (one read per pipe, then the exit)";
    private static final String ONE_READER =
            "a process's output has one reader: a second subscriber is refused with onError";
    private static final long DEADLINE_MS = 10_000;

    private final NativeLauncher launcher = NativeLauncher.create();
    private final List<SpawnedProcess> spawned = new ArrayList<>();

    @AfterAll
    void killAll() {
        spawned.forEach(SpawnedProcess::kill);
    }

    @TestFactory
    Stream<DynamicTest> process_output_follows_the_reactive_streams_rules() {
        return ReactiveStreamsTck.rules(
                new Verification(),
                Map.ofEntries(
                        Map.entry("optional_spec104_mustSignalOnErrorWhenFails", "a process's output never fails"),
                        Map.entry(
                                "required_spec109_mayRejectCallsToSubscribeIfPublisherIsUnableOrUnwillingToServeThemRejectionMustTriggerOnErrorAfterOnSubscribe",
                                "a process's output never fails"),
                        Map.entry("required_spec109_mustIssueOnSubscribeForNonNullSubscriber", EXIT_ALWAYS),
                        Map.entry("required_spec109_subscribeThrowNPEOnNullSubscriber", EXIT_ALWAYS),
                        Map.entry("optional_spec105_emptyStreamMustTerminateBySignallingOnComplete", EXIT_ALWAYS),
                        Map.entry(
                                "required_spec101_subscriptionRequestMustResultInTheCorrectNumberOfProducedElements",
                                THREE_AT_MOST),
                        Map.entry(
                                "required_spec302_mustAllowSynchronousRequestCallsFromOnNextAndOnSubscribe",
                                THREE_AT_MOST),
                        Map.entry(
                                "required_spec309_requestNegativeNumberMustSignalIllegalArgumentException",
                                THREE_AT_MOST + "; checked below"),
                        Map.entry(
                                "required_spec309_requestZeroMustSignalIllegalArgumentException",
                                THREE_AT_MOST + "; checked below"),
                        Map.entry(
                                "optional_spec309_requestNegativeNumberMaySignalIllegalArgumentExceptionWithSpecificMessage",
                                THREE_AT_MOST),
                        Map.entry(
                                "required_spec312_cancelMustMakeThePublisherToEventuallyStopSignaling", THREE_AT_MOST),
                        Map.entry("stochastic_spec103_mustSignalOnMethodsSequentially", THREE_AT_MOST),
                        Map.entry("optional_spec111_maySupportMultiSubscribe", ONE_READER),
                        Map.entry(
                                "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfront",
                                ONE_READER),
                        Map.entry(
                                "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingManyUpfrontAndCompleteAsExpected",
                                ONE_READER),
                        Map.entry(
                                "optional_spec111_multicast_mustProduceTheSameElementsInTheSameSequenceToAllOfItsSubscribersWhenRequestingOneByOne",
                                ONE_READER),
                        Map.entry(
                                "optional_spec111_registeredSubscribersMustReceiveOnNextOrOnCompleteSignals",
                                ONE_READER),
                        Map.entry("required_spec317_mustNotSignalOnErrorWhenPendingAboveLongMaxValue", THREE_AT_MOST)));
    }

    /** Rule 3.9, which the TCK checks only with ten elements: a request of 0 fails the reader and ends the process. */
    @Test
    void a_request_of_zero_fails_the_reader_and_kills_the_process() throws Exception {
        NativeProcess p = spawn("exec sleep 60");
        CompletableFuture<Throwable> failed = new CompletableFuture<>();
        p.output().subscribe(new Subscriber<RawEvent>() {
            @Override
            public void onSubscribe(Subscription s) {
                s.request(0);
            }

            @Override
            public void onNext(RawEvent event) {
                failed.completeExceptionally(new AssertionError("an event after request(0): " + event));
            }

            @Override
            public void onError(Throwable t) {
                failed.complete(t);
            }

            @Override
            public void onComplete() {
                failed.completeExceptionally(new AssertionError("completed after request(0)"));
            }
        });
        assertThat(failed.get(5, TimeUnit.SECONDS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got 0");
        awaitGone(p.pid());
    }

    /** Rule 1.9, which the TCK checks only on an empty publisher: a null subscriber is refused at once. */
    @Test
    void a_null_subscriber_is_refused() {
        NativeProcess p = spawn("exit 0");
        assertThatThrownBy(() -> p.output().subscribe(null)).isInstanceOf(NullPointerException.class);
    }

    private NativeProcess spawn(String script) {
        NativeProcess p = (NativeProcess) launcher.spawn(new ProcessSpec(
                "/bin/sh",
                List.of("sh", "-c", script),
                System.getProperty("java.io.tmpdir"),
                Map.of("PATH", "/usr/bin:/bin"),
                null));
        spawned.add(p);
        return p;
    }

    final class Verification extends PublisherVerification<RawEvent> {
        Verification() {
            super(new TestEnvironment(2_000, 200));
        }

        @Override
        public Publisher<RawEvent> createPublisher(long elements) {
            String script = switch ((int) Math.min(elements, 4)) {
                case 0 -> throw new SkipException(EXIT_ALWAYS);
                case 1 -> "exit 0";
                case 2 -> "printf out";
                case 3 -> "printf out; printf err >&2";
                default -> throw new SkipException(THREE_AT_MOST);
            };
            NativeProcess p = spawn(script);
            awaitGone(p.pid());
            return p.output();
        }

        @Override
        public Publisher<RawEvent> createFailedPublisher() {
            return null;
        }

        @Override
        public long maxElementsFromPublisher() {
            return 3;
        }
    }

    /** Waits until the process has exited and the loop has reaped it: its output is all in the pipes. */
    private static void awaitGone(long pid) {
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        while (ProcessHandle.of(pid).isPresent()) {
            assertThat(System.currentTimeMillis())
                    .as("process " + pid + " exits and is reaped")
                    .isLessThan(deadline);
            LockSupport.parkNanos(1_000_000);
        }
    }
}
