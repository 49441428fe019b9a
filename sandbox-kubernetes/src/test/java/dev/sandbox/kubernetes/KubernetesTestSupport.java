package dev.sandbox.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.SessionOptions;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * What the Kubernetes tests share: the images (the session image {@value #IMAGE} and the agent image the build made,
 * loaded into the Docker daemon the kubelet uses), a label on everything one test class makes, a plain fabric8
 * client to look at pods from outside the SDK, and the teardown check that nothing labelled is left.
 */
final class KubernetesTestSupport implements AutoCloseable {
    static final String IMAGE = "sandbox-test:busybox";
    static final String RUN_LABEL = "sandbox-test-run";
    /**
     * The agent image archive sandbox-agent-image's build writes, from a module's directory (a top-level module's, or
     * a nested one's such as samples/webflux-demo).
     */
    static final Path AGENT_IMAGE_TAR = Files.isDirectory(Path.of("../sandbox-agent-image"))
            ? Path.of("../sandbox-agent-image/target/sandbox-agent-image.tar")
            : Path.of("../../sandbox-agent-image/target/sandbox-agent-image.tar");

    private static volatile boolean agentLoaded;

    final String runId = UUID.randomUUID().toString();
    final KubernetesClient client = new KubernetesClientBuilder().build();
    final String namespace = client.getNamespace();

    /** Loads the agent image the build made into the local daemon, once per JVM. */
    static synchronized void loadAgentImage() {
        if (agentLoaded) {
            return;
        }
        if (!Files.isRegularFile(AGENT_IMAGE_TAR)) {
            throw new IllegalStateException("the agent image archive " + AGENT_IMAGE_TAR.toAbsolutePath()
                    + " is missing (build sandbox-agent-image first)");
        }
        run("docker", "load", "-q", "-i", AGENT_IMAGE_TAR.toString());
        run("docker", "image", "inspect", KubernetesSettings.defaultAgentImage());
        run("docker", "image", "inspect", IMAGE);
        agentLoaded = true;
    }

    static String run(String... argv) {
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readNBytes(64 * 1024);
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", argv) + " did not finish within 120 s");
            }
            String text = new String(out, StandardCharsets.UTF_8);
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", argv) + " failed: " + text.strip());
            }
            return text;
        } catch (IOException e) {
            throw new IllegalStateException(String.join(" ", argv) + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    static KubernetesSettings settings() {
        return KubernetesSettings.of(IMAGE).withPullPolicy(KubernetesSettings.PullPolicy.NEVER);
    }

    static KubernetesSandboxProvider provider() {
        return KubernetesSandboxProvider.builder().settings(settings()).build();
    }

    /** Session options carrying this run's label, so that the teardown finds everything a test made. */
    SessionOptions sessionOptions() {
        return SessionOptions.defaults().withLabel(RUN_LABEL, runId);
    }

    /** The pod of a session, seen with plain fabric8. */
    Pod pod(String sessionId) {
        return client.pods().inNamespace(namespace).withName(sessionId).get();
    }

    /** A test class's teardown: closes its provider, fails if a pod of this run is left (and removes it). */
    void finish(KubernetesSandboxProvider provider) {
        try {
            provider.close();
            assertNothingLeft();
        } finally {
            close();
        }
    }

    void assertNothingLeft() {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        List<Pod> left = leftovers();
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            left = leftovers();
        }
        List<String> names = new ArrayList<>();
        for (Pod p : left) {
            names.add(p.getMetadata().getName());
            client.pods().inNamespace(namespace).resource(p).withGracePeriod(0).delete();
        }
        assertThat(names).as("pods the tests left behind").isEmpty();
    }

    private List<Pod> leftovers() {
        return client
                .pods()
                .inNamespace(namespace)
                .withLabel("labels.dev.sandbox/" + RUN_LABEL, runId)
                .list()
                .getItems()
                .stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .toList();
    }

    @Override
    public void close() {
        client.close();
    }
}
