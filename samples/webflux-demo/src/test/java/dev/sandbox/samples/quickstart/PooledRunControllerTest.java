package dev.sandbox.samples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.pool.SandboxPool;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The README's pool handler on a pool of the local provider: each call gets its own customised sandbox. */
class PooledRunControllerTest {
    @Test
    void eachCallRunsInAWarmSandboxCustomisedForItsTenantAndGivesItBack() {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create();
                SandboxPool pool = SandboxPool.builder(provider).warm(2).build()) {
            PooledRunController controller = new PooledRunController(pool);
            assertThat(controller.run("acme", "echo $TENANT").collectList().block(Duration.ofSeconds(30)))
                    .containsExactly("acme");
            assertThat(controller.run("globex", "echo $TENANT").collectList().block(Duration.ofSeconds(30)))
                    .containsExactly("globex");
            assertThat(pool.stats().inUse()).isZero();
            assertThat(pool.stats().acquired()).isEqualTo(2);
        }
    }
}
