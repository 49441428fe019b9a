package dev.sandbox.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionOptions;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The idle timeout counts a running command as activity, in the background as in the foreground, as {@link
 * SessionOptions#withIdleTimeout(Duration)} promises ("no command started or running").
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocalIdleTimeoutTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private LocalSandboxProvider provider;

    @BeforeAll
    void start() {
        provider = LocalSandboxProvider.create();
    }

    @AfterAll
    void stop() {
        provider.close();
    }

    @Test
    void aRunningBackgroundProcessKeepsAnIdleSessionAlive() throws InterruptedException {
        SandboxSession s = provider.create(SessionOptions.defaults().withIdleTimeout(Duration.ofMillis(400)))
                .block(WAIT);
        try {
            BackgroundProcess p = s.start(ExecOptions.of("sleep", "2")).block(WAIT);
            // well past the idle timeout with nothing going on but the background process (ping is not activity)
            Thread.sleep(1400);
            assertThat(s.ping().block(WAIT).status()).isEqualTo("running");

            assertThat(p.exit().block(WAIT).code()).isZero();
            // once it has ended, the session is idle and ends
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (true) {
                try {
                    s.ping().block(WAIT);
                } catch (SessionClosedException e) {
                    assertThat(e.reason()).isEqualTo(SessionEndReason.IDLE_TIMEOUT);
                    break;
                }
                if (System.nanoTime() > deadline) {
                    fail("the session did not idle out after its background process ended");
                }
                Thread.sleep(20);
            }
        } finally {
            s.destroy().onErrorComplete().block(WAIT);
        }
    }
}
