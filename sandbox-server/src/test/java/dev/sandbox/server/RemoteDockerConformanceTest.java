package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import dev.sandbox.docker.RequiresDocker;
import dev.sandbox.remote.RemoteSandboxProvider;
import dev.sandbox.tck.SandboxProviderConformance;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * The provider conformance kit on the remote provider, through a real server on loopback that serves Docker
 * sessions: the server is provider-agnostic, and a remote client of Docker sandboxes gets the same behaviour.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RemoteDockerConformanceTest implements SandboxProviderConformance {
    private static final char[] TOKEN = "docker-conformance-token-0123456789".toCharArray();
    private static final String RUN_LABEL = "remote-docker-test";

    private final String run = UUID.randomUUID().toString();
    private DockerSandboxProvider docker;
    private SandboxServer server;
    private RemoteSandboxProvider remote;
    private RemoteSandboxProvider second;

    @BeforeAll
    void start() {
        docker = DockerSandboxProvider.create(
                DockerSettings.of("sandbox-test:busybox").withPullPolicy(DockerSettings.PullPolicy.NEVER));
        server = SandboxServer.builder(docker).port(0).token(TOKEN).start();
        remote = RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(TOKEN)
                .build();
        second = RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(TOKEN)
                .build();
    }

    @AfterAll
    void stop() {
        try {
            remote.close();
            second.close();
            server.close();
            // the server destroyed what it made; nothing of this run is left on the daemon
            assertThat(docker.list(Map.of(RUN_LABEL, run)).collectList().block(Duration.ofSeconds(30)))
                    .as("sessions left on the daemon")
                    .isEmpty();
        } finally {
            docker.close();
        }
    }

    @Override
    public boolean supportsPty() {
        return true;
    }

    @Override
    public java.util.Optional<SandboxProvider> secondProvider() {
        return java.util.Optional.of(second);
    }

    @Override
    public SandboxProvider provider() {
        return remote;
    }

    @Override
    public SessionOptions sessionOptions() {
        return SessionOptions.defaults().withLabel(RUN_LABEL, run);
    }
}
