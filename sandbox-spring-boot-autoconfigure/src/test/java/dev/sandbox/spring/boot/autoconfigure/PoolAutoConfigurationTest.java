package dev.sandbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.SandboxPool;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code sandbox.pool.*}: a pool bean over the application's provider when enabled, none otherwise, bad values named. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PoolAutoConfigurationTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @Test
    void noPoolUnlessEnabled() {
        LocalProviderAutoConfigurationTest.runner().run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(SandboxPool.class);
        });
    }

    @Test
    void anEnabledPoolHandsOutWarmSessionsOfTheApplicationsProviderWithItsSessionDefaults() {
        LocalProviderAutoConfigurationTest.runner()
                .withPropertyValues(
                        "sandbox.pool.enabled=true",
                        "sandbox.pool.warm=2",
                        "sandbox.pool.max-sessions=3",
                        "sandbox.session.labels.team=search")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    SandboxPool pool = context.getBean(SandboxPool.class);
                    long deadline = System.nanoTime() + WAIT.toNanos();
                    while (pool.stats().warm() < 2 && System.nanoTime() < deadline) {
                        Thread.sleep(10);
                    }
                    assertThat(pool.stats().warm()).isEqualTo(2);
                    SandboxSession s = pool.acquire(Claim.defaults().withEnv("TENANT", "acme"))
                            .block(WAIT);
                    assertThat(s.labels()).containsEntry("team", "search");
                    assertThat(s.run(ExecOptions.shell("echo $TENANT"))
                                    .block(WAIT)
                                    .stdout())
                            .isEqualTo("acme\n");
                    s.destroy().block(WAIT);
                });
    }

    @Test
    void aBadPoolSettingStopsTheApplicationNamingTheProperty() {
        LocalProviderAutoConfigurationTest.runner()
                .withPropertyValues("sandbox.pool.enabled=true", "sandbox.pool.warm=8", "sandbox.pool.max-sessions=2")
                .run(context -> LocalProviderAutoConfigurationTest.assertRefused(
                        context, "sandbox.pool.max-sessions", "at least warm"));
    }
}
