package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionStats;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.Disposable;

/**
 * Docker's stats beyond the kit: network figures exactly when the sandbox has a network other than loopback, and
 * sampling that does not keep a session alive (the daemon is asked, not the sandbox's agent, so the idle timeout
 * still ends a watched session, and the stream ends with it).
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerSessionStatsTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private DockerTestSupport support;
    private DockerSandboxProvider provider;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        provider = DockerSandboxProvider.create(DockerTestSupport.settings());
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    private SessionStats first(SandboxSession s) {
        return s.stats(Duration.ofHours(1)).blockFirst(WAIT);
    }

    @Test
    void networkBytesAreKnownOnTheBridgeAndUnknownWithoutANetwork() {
        SandboxSession none = provider.create(
                        support.sessionOptions(), DockerTestSupport.settings().withNetwork(DockerSettings.Network.NONE))
                .block(WAIT);
        SandboxSession bridge = provider.create(
                        support.sessionOptions(),
                        DockerTestSupport.settings().withNetwork(DockerSettings.Network.BRIDGE))
                .block(WAIT);
        try {
            SessionStats quiet = first(none);
            assertThat(quiet.hasNetwork()).as("network none: " + quiet).isFalse();
            assertThat(quiet.networkInBytes()).isEqualTo(SessionStats.UNKNOWN);
            SessionStats wired = first(bridge);
            assertThat(wired.hasNetwork()).as("bridge: " + wired).isTrue();
            assertThat(wired.networkInBytes()).isNotNegative();
            assertThat(wired.networkOutBytes()).isNotNegative();
        } finally {
            none.destroy().block(WAIT);
            bridge.destroy().block(WAIT);
        }
    }

    @Test
    void samplingIsNotActivityTheIdleTimeoutEndsTheSessionAndTheStream() throws Exception {
        SandboxSession s = provider.create(support.sessionOptions().withIdleTimeout(Duration.ofSeconds(3)))
                .block(WAIT);
        assertThat(s.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
        List<SessionStats> samples = new CopyOnWriteArrayList<>();
        List<Throwable> ended = new CopyOnWriteArrayList<>();
        Disposable watching = s.stats(Duration.ofMillis(200)).subscribe(samples::add, ended::add);
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (ended.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertThat(samples).as("samples before the end").isNotEmpty();
            assertThat(ended)
                    .as("the stream ends with the idle session")
                    .singleElement()
                    .isInstanceOfSatisfying(
                            SessionClosedException.class,
                            e -> assertThat(e.reason()).isEqualTo(SessionEndReason.IDLE_TIMEOUT));
        } finally {
            watching.dispose();
            s.destroy().block(WAIT);
        }
    }
}
