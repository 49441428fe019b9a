package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.tck.SandboxProviderConformance;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The conformance kit on the Docker provider with gVisor (runtime runsc, network none). */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GvisorProviderConformanceTest implements SandboxProviderConformance {
    private DockerTestSupport support;
    private DockerSandboxProvider provider;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        provider = DockerSandboxProvider.create(DockerTestSupport.settings()
                .withRuntime(DockerSettings.Runtime.RUNSC)
                .withNetwork(DockerSettings.Network.NONE));
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    @Override
    public boolean supportsEgress() {
        return true;
    }

    @Override
    public SandboxProvider provider() {
        return provider;
    }

    /** Docker pauses with the cgroup freezer ({@code docker pause}). */
    @Override
    public boolean supportsPause() {
        return true;
    }

    @Override
    public SessionOptions sessionOptions() {
        return support.sessionOptions();
    }

    /**
     * gVisor keeps a socket bound in the sandbox inside its own kernel (runsc without {@code --host-uds}): no socket
     * appears on the host, and sessions use the relay; two in a row, the second without waiting for its socket.
     */
    @Test
    void underGvisorTheAgentIsReachedThroughTheRelay() {
        for (int i = 0; i < 2; i++) {
            long t0 = System.nanoTime();
            SandboxSession s = provider.create(support.sessionOptions()).block(Duration.ofSeconds(60));
            try {
                assertThat(s.run(ExecOptions.shell("echo hi"))
                                .block(Duration.ofSeconds(60))
                                .stdout())
                        .isEqualTo("hi\n");
                assertThat(s.ping().block(Duration.ofSeconds(60)).processLauncher())
                        .isEqualTo(DockerSandboxProvider.PROCESS_LAUNCHER_RELAY);
            } finally {
                s.destroy().block(Duration.ofSeconds(60));
            }
            System.out.printf(
                    "gVisor session %d: create, echo, ping and destroy in %d ms%n",
                    i, (System.nanoTime() - t0) / 1_000_000);
        }
    }
}
