package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Image;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandbox.SessionOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * What the Docker tests share: the image, a label that marks everything one test class makes, a plain docker-java
 * client to look at containers from outside the SDK, and the teardown check that nothing labelled is left.
 */
final class DockerTestSupport implements AutoCloseable {
    static final String IMAGE = "sandbox-test:busybox";
    static final String RUN_LABEL = "sandbox-test-run";

    final String runId = UUID.randomUUID().toString();
    final DockerClient docker;

    DockerTestSupport() {
        DefaultDockerClientConfig config =
                DefaultDockerClientConfig.createDefaultConfigBuilder().build();
        docker = DockerClientImpl.getInstance(
                config,
                new ZerodepDockerHttpClient.Builder()
                        .dockerHost(config.getDockerHost())
                        .responseTimeout(Duration.ofMinutes(2))
                        .build());
    }

    static DockerSettings settings() {
        return DockerSettings.of(IMAGE).withPullPolicy(DockerSettings.PullPolicy.NEVER);
    }

    /** A provider with the test settings that sweeps only when a test asks it to. */
    static DockerSandboxProvider unsweptProvider() {
        return DockerSandboxProvider.builder()
                .settings(settings())
                .sweepInterval(null)
                .build();
    }

    /** Session options carrying this run's label, so that the teardown finds everything a test made. */
    SessionOptions sessionOptions() {
        return SessionOptions.defaults().withLabel(RUN_LABEL, runId);
    }

    /**
     * A test class's teardown: closes its provider, fails if anything labelled with this run is left, and closes this
     * support whatever happens.
     */
    void finish(DockerSandboxProvider provider) {
        try {
            provider.close();
            assertNothingLeft();
        } finally {
            close();
        }
    }

    /** The container of a session, looked up with plain docker-java. */
    Container container(String sessionId) {
        List<Container> found = docker.listContainersCmd()
                .withShowAll(true)
                .withLabelFilter(List.of("dev.sandbox.session=" + sessionId))
                .exec();
        return found.isEmpty() ? null : found.get(0);
    }

    /**
     * Removes whatever this run left and fails if there was anything: containers and images carrying the run label.
     * Containers that are already being removed by Docker itself are given a few seconds.
     */
    void assertNothingLeft() {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        List<String> left = leftovers();
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            left = leftovers();
        }
        List<String> removed = new ArrayList<>(left);
        for (Container c : containers()) {
            try {
                docker.removeContainerCmd(c.getId()).withForce(true).exec();
            } catch (RuntimeException ignored) {
                // best effort
            }
        }
        for (Image i : images()) {
            try {
                docker.removeImageCmd(i.getId()).withForce(true).exec();
            } catch (RuntimeException ignored) {
                // best effort
            }
        }
        assertThat(removed).as("containers and images the tests left behind").isEmpty();
    }

    private List<String> leftovers() {
        List<String> out = new ArrayList<>();
        containers().forEach(c -> out.add("container " + c.getId() + " " + c.getLabels()));
        images().forEach(i -> out.add(
                "image " + i.getId() + " " + List.of(i.getRepoTags() == null ? new String[0] : i.getRepoTags())));
        assertThat(docker.listVolumesCmd()
                        .withFilter("label", List.of(RUN_LABEL + "=" + runId))
                        .exec()
                        .getVolumes())
                .as("volumes")
                .isNullOrEmpty();
        return out;
    }

    private List<Container> containers() {
        return docker.listContainersCmd()
                .withShowAll(true)
                .withLabelFilter(List.of(RUN_LABEL + "=" + runId))
                .exec();
    }

    private List<Image> images() {
        return docker.listImagesCmd().withLabelFilter(RUN_LABEL + "=" + runId).exec();
    }

    @Override
    public void close() {
        try {
            docker.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
