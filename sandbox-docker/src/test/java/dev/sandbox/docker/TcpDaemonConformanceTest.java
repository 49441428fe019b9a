package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.tck.SandboxProviderConformance;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The conformance kit on the Docker provider reaching its daemon over TCP ({@link TcpDaemon}): no direct channel is
 * possible there, every session uses the relay, and the whole kit passes on it.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TcpDaemonConformanceTest implements SandboxProviderConformance {
    private DockerTestSupport support;
    private TcpDaemon daemon;
    private DockerSandboxProvider provider;

    @BeforeAll
    void start() throws Exception {
        support = new DockerTestSupport();
        String local = System.getenv().getOrDefault("DOCKER_HOST", "unix:///var/run/docker.sock");
        daemon = new TcpDaemon(Path.of(URI.create(local).getPath()));
        provider = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .dockerHost(daemon.dockerHost())
                .build();
    }

    @AfterAll
    void stop() throws Exception {
        try {
            support.finish(provider);
        } finally {
            daemon.close();
        }
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

    @Test
    void aDaemonOverTcpIsReachedThroughTheRelay() {
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
    }
}
