package dev.sandbox.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * A local session (real processes) observed through the Micrometer decorator and published to a registry: the meters
 * appear with the first sample, follow what runs in the session, and are gone once the observation is disposed or the
 * session is destroyed.
 */
class SessionStatsMetricsTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static void await(String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never: " + what);
            }
            Thread.sleep(20);
        }
    }

    private static List<Meter> meters(SimpleMeterRegistry registry, String session) {
        return registry.getMeters().stream()
                .filter(m -> session.equals(m.getId().getTag("session")))
                .toList();
    }

    @Test
    void theMetersFollowTheSessionWhileObservedAndGoAfterwards() throws InterruptedException {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LocalSandboxProvider local = LocalSandboxProvider.create()) {
            SandboxProvider provider = SandboxObservations.observe(local, ObservationRegistry.create());
            SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
            String id = s.id();
            assertThat(meters(registry, id))
                    .as("nothing before anyone observes")
                    .isEmpty();

            Disposable watching = SessionStatsMetrics.bind(s, Duration.ofMillis(100), registry);
            await("the meters", () -> meters(registry, id).size() == 4);
            BackgroundProcess sleeps = s.start(ExecOptions.shell(
                            "i=0; while [ $i -lt 5 ]; do sleep 60 & i=$((i+1)); done; " + "while :; do :; done"))
                    .block(WAIT);
            await(
                    "6 pids",
                    () -> registry.get(SessionStatsMetrics.PIDS)
                                    .tag("session", id)
                                    .gauge()
                                    .value()
                            >= 6);
            await(
                    "a quarter second of cpu",
                    () -> registry.get(SessionStatsMetrics.CPU)
                                    .tag("session", id)
                                    .functionCounter()
                                    .count()
                            >= 0.25);
            assertThat(registry.get(SessionStatsMetrics.MEMORY)
                            .tag("session", id)
                            .gauge()
                            .value())
                    .isPositive();
            watching.dispose();
            assertThat(meters(registry, id)).as("after dispose").isEmpty();

            // a second observation ends with the session
            SessionStatsMetrics.bind(s, Duration.ofMillis(100), registry);
            await("the meters again", () -> meters(registry, id).size() == 4);
            sleeps.kill().block(WAIT);
            s.destroy().block(WAIT);
            await("no meters after destroy", () -> meters(registry, id).isEmpty());
        }
    }
}
