package dev.sandbox.micrometer;

import static dev.sandbox.micrometer.SandboxObservationNames.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionOptions;
import dev.sandbox.Wrapped;
import dev.sandbox.local.LocalSandboxProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.search.MeterNotFoundException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The observations and counters of real local sessions, read back from a {@link TestObservationRegistry} and the
 * timers and counters Micrometer's meter handler makes of them in a {@link SimpleMeterRegistry}.
 */
class SandboxObservationsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static LocalSandboxProvider local;

    private TestObservationRegistry observations;
    private MeterRegistry meters;
    private SandboxProvider provider;

    @BeforeAll
    static void startProvider() {
        local = LocalSandboxProvider.create();
    }

    @AfterAll
    static void closeProvider() {
        local.close();
    }

    @BeforeEach
    void observe() {
        observations = TestObservationRegistry.create();
        meters = new SimpleMeterRegistry();
        observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        provider = SandboxObservations.observe(local, observations, meters);
    }

    private SandboxSession session() {
        return provider.create(SessionOptions.defaults()).block(WAIT);
    }

    private Timer timer(String name, String... tags) {
        return meters.get(name).tag(PROVIDER, "local").tags(tags).timer();
    }

    private double counter(String name, String... tags) {
        return meters.get(name).tag(PROVIDER, "local").tags(tags).counter().count();
    }

    @Test
    void createAttachAndDestroyAreTimedWithTheProviderAndTheSessionId() {
        SandboxSession session = session();
        SandboxSession attached = provider.attach(session.id()).block(WAIT);
        attached.destroy().block(WAIT);

        assertThat(timer(CREATE, OUTCOME, OUTCOME_SUCCESS, "error", "none").count())
                .isEqualTo(1);
        assertThat(timer(DESTROY, OUTCOME, OUTCOME_SUCCESS, END_REASON, NONE).count())
                .isEqualTo(1);
        TestObservationRegistryAssert.assertThat(observations)
                .hasObservationWithNameEqualTo(CREATE)
                .that()
                .hasHighCardinalityKeyValue(SESSION_ID, session.id())
                .hasLowCardinalityKeyValue(PROVIDER, "local")
                .doesNotHaveError();
        assertThat(timer(ATTACH, OUTCOME, OUTCOME_SUCCESS).count()).isEqualTo(1);
        TestObservationRegistryAssert.assertThat(observations)
                .hasObservationWithNameEqualTo(DESTROY)
                .that()
                .hasHighCardinalityKeyValue(SESSION_ID, session.id());
    }

    @Test
    void namedSessionsPassThroughTheObservedProviderAndAttachByNameIsTimed() {
        SandboxSession created = provider.createOrAttach("observed-name", SessionOptions.defaults())
                .block(WAIT);
        try {
            SandboxSession again = provider.createOrAttach("observed-name", SessionOptions.defaults())
                    .block(WAIT);
            assertThat(again.id()).isEqualTo(created.id());
            assertThat(again.name()).contains("observed-name");
            assertThat(again).isInstanceOf(Wrapped.class);
            assertThat(timer(CREATE, OUTCOME, OUTCOME_SUCCESS, "error", "none").count())
                    .isEqualTo(1);
            // the first caller's lookup found nothing, the second's found the session
            assertThat(meters.get(ATTACH).tag(PROVIDER, "local").timers())
                    .extracting(Timer::count)
                    .containsExactlyInAnyOrder(1L, 1L);
        } finally {
            created.destroy().block(WAIT);
        }
    }

    @Test
    void anObservedSessionSaysWhichSessionItWraps() {
        SandboxSession session = session();
        try {
            assertThat(session).isInstanceOf(Wrapped.class);
            Object wrapped = ((Wrapped<?>) session).unwrap();
            assertThat(wrapped).isInstanceOf(SandboxSession.class).isNotSameAs(session);
            assertThat(((SandboxSession) wrapped).id()).isEqualTo(session.id());
            // the wrapped session is the provider's own, not observed: what is done on it directly is not timed
            ((SandboxSession) wrapped).run(ExecOptions.of("true")).block(WAIT);
            assertThat(meters.find(RUN).timers()).isEmpty();
            Class<?> innerType = wrapped.getClass();
            assertThat(Wrapped.find(session, innerType).orElseThrow()).isSameAs(wrapped);
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void anExecIsTimedWithItsExitCodeAndTerminationAndItsLinesAndBytesCounted() {
        SandboxSession session = session();
        try {
            List<ExecEvent> events = session.exec(ExecOptions.shell("printf 'a\\nbb\\n'; printf 'err\\n' >&2"))
                    .collectList()
                    .block(WAIT);
            assertThat(events.getLast()).isInstanceOf(ExecEvent.Exit.class);
            session.exec(ExecOptions.shell("exit 3")).blockLast(WAIT);

            assertThat(timer(EXEC, EXIT_CODE, "0", TERMINATION, "EXITED", OUTCOME, OUTCOME_SUCCESS, "error", "none")
                            .count())
                    .isEqualTo(1);
            assertThat(timer(EXEC, EXIT_CODE, "3", TERMINATION, "EXITED", OUTCOME, OUTCOME_SUCCESS)
                            .count())
                    .isEqualTo(1);
            assertThat(counter(OUTPUT_LINES, STREAM, "stdout")).isEqualTo(2);
            assertThat(counter(OUTPUT_LINES, STREAM, "stderr")).isEqualTo(1);
            assertThat(counter(OUTPUT_BYTES, OPERATION, "exec", STREAM, "stdout"))
                    .isEqualTo(5); // "a\n" and "bb\n"
            assertThat(counter(OUTPUT_BYTES, OPERATION, "exec", STREAM, "stderr"))
                    .isEqualTo(4);
            TestObservationRegistryAssert.assertThat(observations)
                    .hasNumberOfObservationsWithNameEqualTo(EXEC, 2)
                    .forAllObservationsWithNameEqualTo(
                            EXEC, o -> o.hasHighCardinalityKeyValue(SESSION_ID, session.id()));
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void anExecWithByteOutputCountsItsBytes() {
        SandboxSession session = session();
        try {
            session.exec(ExecOptions.shell("printf 'abc'; printf 'de' >&2").withByteOutput(true))
                    .blockLast(WAIT);

            assertThat(counter(OUTPUT_BYTES, OPERATION, "exec", STREAM, "stdout"))
                    .isEqualTo(3);
            assertThat(counter(OUTPUT_BYTES, OPERATION, "exec", STREAM, "stderr"))
                    .isEqualTo(2);
            assertThat(counter(OUTPUT_LINES, STREAM, "stdout")).isZero();
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void anExecThatTimesOutIsTaggedTimedOut() {
        SandboxSession session = session();
        try {
            ExecEvent last = session.exec(ExecOptions.of("sleep", "30").withTimeout(Duration.ofMillis(200)))
                    .blockLast(WAIT);
            assertThat(((ExecEvent.Exit) last).termination()).isEqualTo(ExecEvent.Termination.TIMED_OUT);

            assertThat(timer(EXEC, TERMINATION, "TIMED_OUT", OUTCOME, OUTCOME_SUCCESS)
                            .count())
                    .isEqualTo(1);
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void aCancelledExecEndsItsObservationAsCancelled() {
        SandboxSession session = session();
        try {
            ExecEvent first = session.exec(ExecOptions.shell("echo ready; exec sleep 30"))
                    .next()
                    .block(WAIT);
            assertThat(first).isInstanceOf(ExecEvent.Stdout.class);

            assertThat(timer(EXEC, OUTCOME, OUTCOME_CANCELLED, EXIT_CODE, NONE, TERMINATION, NONE, "error", "none")
                            .count())
                    .isEqualTo(1);
            assertThat(meters.find(EXEC).tag(OUTCOME, OUTCOME_SUCCESS).timer()).isNull();
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void aBackgroundStartIsTimed() {
        SandboxSession session = session();
        try {
            BackgroundProcess process =
                    session.start(ExecOptions.of("sleep", "30")).block(WAIT);
            assertThat(timer(START, OUTCOME, OUTCOME_SUCCESS).count()).isEqualTo(1);
            process.kill().block(WAIT);
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void aRunIsTimedWithItsExitCodeAndItsBytesCounted() {
        SandboxSession session = session();
        try {
            ExecResult result =
                    session.run(ExecOptions.shell("printf 'hello\\n'; exit 7")).block(WAIT);
            assertThat(result.exitCode()).isEqualTo(7);

            assertThat(timer(RUN, EXIT_CODE, "7", TERMINATION, "EXITED", OUTCOME, OUTCOME_SUCCESS)
                            .count())
                    .isEqualTo(1);
            assertThat(counter(OUTPUT_BYTES, OPERATION, "run", STREAM, "stdout"))
                    .isEqualTo(6);
            assertThat(counter(OUTPUT_BYTES, OPERATION, "run", STREAM, "stderr"))
                    .isZero();
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void fileWritesReadsTransfersAndListingsAreTimedAndTheirBytesCounted(@TempDir Path dir) throws Exception {
        SandboxSession session = session();
        try {
            byte[] content = "twelve bytes".getBytes(StandardCharsets.UTF_8);
            session.files().write("a.txt", content).block(WAIT);
            assertThat(session.files().readAllBytes("a.txt", 1024).block(WAIT)).isEqualTo(content);
            Path local = Files.writeString(dir.resolve("up.txt"), "0123456789");
            session.files().upload(local, "up.txt").block(WAIT);
            assertThat(session.files()
                            .download("up.txt", dir.resolve("down.txt"))
                            .block(WAIT))
                    .isEqualTo(10);
            assertThat(session.files().list(".").collectList().block(WAIT)).hasSize(2);

            for (String name : List.of(FILE_WRITE, FILE_READ, FILE_UPLOAD, FILE_DOWNLOAD, FILE_LIST)) {
                assertThat(timer(name, OUTCOME, OUTCOME_SUCCESS).count())
                        .as(name)
                        .isEqualTo(1);
            }
            assertThat(counter(FILE_BYTES, OPERATION, "write")).isEqualTo(12);
            assertThat(counter(FILE_BYTES, OPERATION, "read")).isEqualTo(12);
            assertThat(counter(FILE_BYTES, OPERATION, "upload")).isEqualTo(10);
            assertThat(counter(FILE_BYTES, OPERATION, "download")).isEqualTo(10);
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void aFailedReadIsTimedWithItsError() {
        SandboxSession session = session();
        try {
            assertThatThrownBy(() -> session.files().readAllBytes("missing", 10).block(WAIT))
                    .isInstanceOf(dev.sandbox.FileOperationException.class);

            assertThat(timer(FILE_READ, OUTCOME, OUTCOME_ERROR, "error", "FileOperationException")
                            .count())
                    .isEqualTo(1);
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void anOperationOnADestroyedSessionIsTaggedWithTheEndReason() {
        SandboxSession session = session();
        session.destroy().block(WAIT);

        assertThatThrownBy(() -> session.exec(ExecOptions.of("true")).blockLast(WAIT))
                .isInstanceOf(SessionClosedException.class);

        assertThat(timer(EXEC, OUTCOME, OUTCOME_ERROR, END_REASON, "DESTROYED", "error", "SessionClosedException")
                        .count())
                .isEqualTo(1);
    }

    @Test
    void anObservationIsAChildOfTheCallersObservation() {
        Observation parent = Observation.start("request", observations);
        SandboxSession session = provider.create(SessionOptions.defaults())
                .contextWrite(c -> c.put(ObservationThreadLocalAccessor.KEY, parent))
                .block(WAIT);
        parent.stop();
        session.destroy().block(WAIT);

        TestObservationRegistryAssert.assertThat(observations)
                .hasHandledContextsThatSatisfy(contexts -> assertThat(contexts)
                        .filteredOn(c -> c.getName().equals(CREATE))
                        .singleElement()
                        .satisfies(c -> assertThat(c.getParentObservation()).isSameAs(parent)));
    }

    @Test
    void withSessionIsObservedFromCreateToDestroy() {
        ExecResult result = provider.withSession(SessionOptions.defaults(), s -> s.run(ExecOptions.of("echo", "hi")))
                .blockLast(WAIT);
        assertThat(result.stdout()).isEqualTo("hi\n");

        assertThat(timer(CREATE).count()).isEqualTo(1);
        assertThat(timer(RUN, EXIT_CODE, "0").count()).isEqualTo(1);
        assertThat(timer(DESTROY).count()).isEqualTo(1);
    }

    @Test
    void nothingIsWrappedWhenThereIsNothingToRecord() {
        assertThat(SandboxObservations.observe(local, ObservationRegistry.NOOP)).isSameAs(local);
        assertThat(SandboxObservations.observe(provider, observations, meters)).isSameAs(provider);
        assertThat(SandboxObservations.isObserved(provider)).isTrue();
        assertThat(SandboxObservations.isObserved(local)).isFalse();
    }

    @Test
    void withoutAMeterRegistryThereAreObservationsButNoCounters() {
        SimpleMeterRegistry timersOnly = new SimpleMeterRegistry();
        TestObservationRegistry registry = TestObservationRegistry.create();
        registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(timersOnly));
        SandboxProvider observed = SandboxObservations.observe(local, registry);

        observed.withSession(SessionOptions.defaults(), s -> s.exec(ExecOptions.of("echo", "x")))
                .blockLast(WAIT);

        assertThat(timersOnly.get(EXEC).timer().count()).isEqualTo(1);
        assertThatThrownBy(() -> timersOnly.get(OUTPUT_LINES).counter()).isInstanceOf(MeterNotFoundException.class);
    }
}
