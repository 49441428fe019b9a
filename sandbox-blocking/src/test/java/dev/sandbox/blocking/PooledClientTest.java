package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SessionInfo;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.SandboxPool;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The blocking facade on a pool of the local provider: a claimed session, given back (destroyed) on close. */
class PooledClientTest {
    @Test
    void aClientFromThePoolRunsInItsClaimAndClosingGivesTheSessionBack() {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create();
                SandboxPool pool = SandboxPool.builder(provider).warm(1).build()) {
            String id;
            try (SandboxClient client =
                    SandboxClient.acquire(pool, Claim.defaults().withEnv("TENANT", "acme"))) {
                id = client.sessionId();
                assertThat(client.process()
                                .run(ExecOptions.shell("echo $TENANT"))
                                .stdout())
                        .isEqualTo("acme\n");
                assertThat(pool.stats().inUse()).isEqualTo(1);
            }
            assertThat(pool.stats().inUse()).isZero();
            assertThat(provider.list(Map.of())
                            .map(SessionInfo::id)
                            .collectList()
                            .block(Duration.ofSeconds(10)))
                    .doesNotContain(id);
        }
    }
}
