package dev.sandbox.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The README's example (its code is {@link #example}), run: the timers and counters it promises are there. */
class ReadmeExampleTest {

    // README: begin
    static ExecResult example(ObservationRegistry observations, MeterRegistry meters) {
        try (SandboxProvider provider =
                SandboxObservations.observe(LocalSandboxProvider.create(), observations, meters)) {
            // timers sandbox.create, sandbox.run, sandbox.destroy; counter sandbox.output.bytes
            return provider.withSession(SessionOptions.defaults(), session -> session.run(ExecOptions.of("uname")))
                    .blockLast(Duration.ofSeconds(30));
        }
    }
    // README: end

    @Test
    void theExampleIsObserved() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));

        assertThat(example(observations, meters).exitCode()).isZero();

        for (String timer : new String[] {"sandbox.create", "sandbox.run", "sandbox.destroy"}) {
            assertThat(meters.get(timer)
                            .tag("sandbox.provider", "local")
                            .timer()
                            .count())
                    .as(timer)
                    .isEqualTo(1);
        }
        assertThat(meters.get("sandbox.output.bytes")
                        .tag("sandbox.operation", "run")
                        .tag("sandbox.stream", "stdout")
                        .counter()
                        .count())
                .isEqualTo("Linux\n".length());
    }
}
