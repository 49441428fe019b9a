package dev.sandbox.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.SandboxSession;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.pool.SandboxPool;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A pool of the local provider published to a registry: the meters say what {@code stats()} says. */
class SandboxPoolMetricsTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void theMetersFollowThePool() throws InterruptedException {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (LocalSandboxProvider provider = LocalSandboxProvider.create();
                SandboxPool pool = SandboxPool.builder(provider).warm(2).build()) {
            SandboxPoolMetrics.bind(pool, "jobs", registry);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (pool.stats().warm() < 2 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(registry.get(SandboxPoolMetrics.SESSIONS)
                            .tags("pool", "jobs", "state", "warm")
                            .gauge()
                            .value())
                    .isEqualTo(2.0);
            SandboxSession s = pool.acquire().block(WAIT);
            assertThat(registry.get(SandboxPoolMetrics.SESSIONS)
                            .tags("pool", "jobs", "state", "in_use")
                            .gauge()
                            .value())
                    .isEqualTo(1.0);
            assertThat(registry.get(SandboxPoolMetrics.ACQUIRED)
                            .tags("pool", "jobs", "start", "warm")
                            .functionCounter()
                            .count())
                    .isEqualTo(1.0);
            assertThat(registry.get(SandboxPoolMetrics.WAITING)
                            .tags("pool", "jobs")
                            .gauge()
                            .value())
                    .isZero();
            s.destroy().block(WAIT);
        }
    }
}
