package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.RequiresDocker;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sandbox serve --provider docker --pool 2} on the real daemon, a real process: a plain create over HTTP takes
 * a warm container (one that was there before the create, labelled as asked; the time to create and run a first
 * command is printed beside a cold create's, not asserted: on a loaded daemon both vary), a destroyed one is removed and replaced, and
 * SIGTERM leaves no container. The server's containers are told from other tests' by the
 * image reference they were created from: a tag of the test image made for this test alone.
 */
@RequiresDocker
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ServePoolDockerCliTest {
    private static final String TOKEN = "serve-pool-docker-token-0123456789";
    private static final Duration WAIT = Duration.ofSeconds(90);

    @TempDir
    Path dir;

    private static List<Container> containers(DockerClient docker, String image) {
        return docker.listContainersCmd().withShowAll(true).exec().stream()
                .filter(c -> image.equals(c.getImage()))
                .toList();
    }

    private static List<String> sessionIds(DockerClient docker, String image) {
        return containers(docker, image).stream()
                .map(c -> c.getLabels().get("dev.sandbox.session"))
                .toList();
    }

    private static long awaitContainers(DockerClient docker, String image, int count) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        List<Container> now = containers(docker, image);
        while (now.size() != count) {
            assertThat(System.nanoTime())
                    .as("%d containers of %s; now %d", count, image, now.size())
                    .isLessThan(deadline);
            Thread.sleep(100); // polling the daemon, bounded by the deadline
            now = containers(docker, image);
        }
        return now.size();
    }

    @Test
    void plainCreatesTakeWarmContainersAndSigtermLeavesNone() throws Exception {
        DefaultDockerClientConfig config =
                DefaultDockerClientConfig.createDefaultConfigBuilder().build();
        String tag = "pool-cli-" + UUID.randomUUID().toString().substring(0, 8);
        String image = "sandbox-test:" + tag;
        try (DockerClient docker = DockerClientImpl.getInstance(
                config,
                new ZerodepDockerHttpClient.Builder()
                        .dockerHost(config.getDockerHost())
                        .build())) {
            docker.tagImageCmd(DockerCliTest.TEST_IMAGE, "sandbox-test", tag).exec();
            try {
                run(docker, image);
            } finally {
                for (Container c : containers(docker, image)) {
                    docker.removeContainerCmd(c.getId()).withForce(true).exec();
                }
                docker.removeImageCmd(image).exec(); // the tag only: the test image stays
            }
        }
    }

    private void run(DockerClient docker, String image) throws Exception {
        Path token = JarCli.tokenFile(dir.resolve("token"), TOKEN);
        ServedPool serve = ServedPool.start(
                McpCliTest.cli(
                        "serve",
                        "--provider",
                        "docker",
                        "--image",
                        image,
                        "--pull",
                        "never",
                        "--port",
                        "0",
                        "--pool",
                        "2",
                        "--mcp-max-sessions",
                        "0",
                        "--token-file",
                        token.toString()),
                TOKEN,
                dir.resolve("stderr"));
        try {
            serve.await("two warm containers", c -> c.get("warm").asInt() == 2);
            assertThat(containers(docker, image)).hasSize(2);
            try (RemoteSandboxProvider client = RemoteSandboxProvider.builder()
                    .baseUrl(serve.url())
                    .token(TOKEN.toCharArray())
                    .build()) {
                client.list(Map.of()).collectList().block(WAIT); // the client's first request: connect, load classes
                SandboxSession first = client.create(SessionOptions.defaults().withEnv("TENANT", "acme"))
                        .block(WAIT);
                assertThat(first.run(ExecOptions.shell("echo $TENANT"))
                                .block(WAIT)
                                .stdout())
                        .isEqualTo("acme\n");
                JsonNode taken = serve.counts();
                assertThat(taken.get("acquired").asInt()).isEqualTo(1);
                assertThat(taken.get("coldAcquires").asInt()).isZero();
                serve.await("refilled", c -> c.get("warm").asInt() == 2);

                // timed once the server has served a pooled create (its first one also loads and compiles the path)
                List<String> warmIds = sessionIds(docker, image);
                long t0 = System.nanoTime();
                SandboxSession warm = client.create(SessionOptions.defaults()
                                .withEnv("TENANT", "acme")
                                .withLabel("tenant", "acme"))
                        .block(WAIT);
                warm.run(ExecOptions.shell("echo $TENANT")).block(WAIT);
                long warmNanos = System.nanoTime() - t0;
                assertThat(warmIds)
                        .as("a container that was there before the create")
                        .contains(warm.id());
                assertThat(serve.counts().get("acquired").asInt()).isEqualTo(2);

                long t1 = System.nanoTime();
                assertThat(client.list(Map.of("tenant", "acme"))
                                .map(SessionInfo::id)
                                .collectList()
                                .block(WAIT))
                        .as("the claim's label, kept in the reaper's state")
                        .containsExactly(warm.id());
                SandboxSession cold = client.create(SessionOptions.defaults().withSecret("KEY", "cold"))
                        .block(WAIT);
                cold.run(ExecOptions.shell("echo cold")).block(WAIT);
                long coldNanos = System.nanoTime() - t1;
                assertThat(serve.counts().get("acquired").asInt())
                        .as("a secret: a cold create")
                        .isEqualTo(2);
                System.out.printf(
                        "serve --pool (docker): create + first command %.1f ms from the pool, %.1f ms cold%n",
                        warmNanos / 1e6, coldNanos / 1e6);
                first.destroy().block(WAIT);
                cold.destroy().block(WAIT);
                warm.destroy().block(WAIT);
                serve.await(
                        "replaced",
                        c -> c.get("warm").asInt() == 2
                                && c.get("inUse").asInt() == 0
                                && c.get("destroying").asInt() == 0);
                awaitContainers(docker, image, 2);
                assertThat(sessionIds(docker, image))
                        .as("the destroyed sessions' containers are gone")
                        .doesNotContain(first.id(), warm.id(), cold.id());
            }
            serve.stop(); // SIGTERM
            assertThat(containers(docker, image))
                    .as("containers serve left; stderr: %s", serve.err())
                    .isEmpty();
        } finally {
            serve.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
