package dev.sandbox.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The client JVM killed (SIGKILL, no shutdown hook runs) while it holds a leased session: another provider's sweep
 * deletes the dead client's expired Lease, and Kubernetes' garbage collector the pod that Lease owned.
 *
 * <p>The bound the design promises (KubernetesSandboxProvider, ClientLease): the lease is renewed every third of its
 * duration, so it expires at most {@code lease + SKEW} after the kill; a sweep (here one every {@link #SWEEP_EVERY})
 * deletes it; the garbage collector then deletes the pod, whose grace period is 2 s. So the pod's deletion starts
 * within {@code lease + SKEW + SWEEP_EVERY + COLLECTOR} (10.5 s here; measured 5.2 to 5.7 s), and the sandbox's
 * containers stop at most {@link #GRACE} later (the kubelet kills them after the pod's 2 s grace): nothing of the
 * session runs any more. The pod object itself disappears when the kubelet's status manager next confirms the
 * termination: 10.9 to 17.2 s after the kill in the first runs, 58.9 s in a CI run whose kubelet had removed the
 * containers 8 s after the kill. That last step is the kubelet's bookkeeping, not the SDK's: it is reported when
 * seen (-1 when not yet), not asserted.
 */
@RequiresKubernetes
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesClientDeathTest {
    private static final Duration WAIT = Duration.ofSeconds(90);
    /** The dead client's lease. */
    private static final Duration LEASE = Duration.ofSeconds(3);
    /** ClientLease.SKEW: how long past its expiry an unrenewed lease is left alone. */
    private static final Duration SKEW = Duration.ofSeconds(2);
    /** How often this test's provider sweeps. */
    private static final Duration SWEEP_EVERY = Duration.ofMillis(500);
    /** The garbage collector's delay from the Lease's deletion to the pod's (its graph is fed by watches). */
    private static final Duration COLLECTOR = Duration.ofSeconds(5);
    /**
     * From the deletion's start to the session's containers stopped: the pods' terminationGracePeriodSeconds (2 s,
     * PodSpecs), then the kubelet stops them (seen within 3 s of the deletion in CI, on two shared cores).
     */
    private static final Duration GRACE = Duration.ofSeconds(2 + 18);

    private KubernetesTestSupport support;
    private KubernetesSandboxProvider provider;

    @BeforeAll
    void start() {
        KubernetesTestSupport.loadAgentImage();
        support = new KubernetesTestSupport();
        provider = KubernetesTestSupport.provider();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    @Test
    void aKilledClientsLeasedPodIsDeletedWithinAboutALease() throws Exception {
        Path err = Files.createTempFile("lease-holder", ".err");
        Process child = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        KubernetesLeaseHolder.class.getName(),
                        support.runId,
                        Long.toString(LEASE.toSeconds()))
                .redirectError(err.toFile())
                .start();
        try {
            String id = sessionIdOf(child, err.toFile());
            Pod pod = support.pod(id);
            assertThat(pod).as("the child's session pod").isNotNull();
            List<OwnerReference> owners = pod.getMetadata().getOwnerReferences();
            assertThat(owners).as("the pod's owners").hasSize(1);
            String lease = owners.get(0).getName();
            assertThat(owners.get(0).getKind()).isEqualTo("Lease");
            // the child is alive and renews: the pod outlives its lease while it does
            Thread.sleep(LEASE.plus(SKEW).plusSeconds(1).toMillis());
            assertThat(provider.sweep().block(WAIT)).doesNotContain(lease);
            assertThat(support.pod(id).getMetadata().getDeletionTimestamp())
                    .as("deletion of a renewed session")
                    .isNull();

            long t0 = System.nanoTime();
            child.destroyForcibly(); // SIGKILL on Linux
            assertThat(child.waitFor(10, TimeUnit.SECONDS)).isTrue();

            long swept = -1;
            long deleting = -1;
            long stopped = -1;
            long gone = -1;
            long deadline = t0 + WAIT.toNanos();
            // until the session no longer runs: its lease swept, its pod's deletion under way, its containers
            // stopped (the pod object's removal afterwards is the kubelet's bookkeeping: reported if seen by then)
            while (gone < 0 && (swept < 0 || deleting < 0 || stopped < 0) && System.nanoTime() < deadline) {
                if (swept < 0 && provider.sweep().block(WAIT).contains(lease)) {
                    swept = System.nanoTime() - t0;
                }
                Pod now = support.pod(id);
                if (deleting < 0 && (now == null || now.getMetadata().getDeletionTimestamp() != null)) {
                    deleting = System.nanoTime() - t0;
                }
                if (stopped < 0 && !runningContainers(id)) {
                    stopped = System.nanoTime() - t0;
                }
                if (now == null) {
                    gone = System.nanoTime() - t0;
                } else {
                    Thread.sleep(SWEEP_EVERY.toMillis());
                }
            }
            System.out.printf(
                    "measured: client killed -> lease swept %d ms, pod deletion started %d ms, containers stopped %d"
                            + " ms, pod gone %d ms (lease %d s)%n",
                    swept / 1_000_000, deleting / 1_000_000, stopped / 1_000_000, gone / 1_000_000, LEASE.toSeconds());
            assertThat(swept).as("the dead client's lease was swept").isPositive();
            assertThat(Duration.ofNanos(swept))
                    .as("lease expiry to its sweep")
                    .isBetween(
                            LEASE.minus(Duration.ofSeconds(1)), LEASE.plus(SKEW).plus(SWEEP_EVERY.multipliedBy(3)));
            Duration bound = LEASE.plus(SKEW).plus(SWEEP_EVERY).plus(COLLECTOR);
            assertThat(deleting).as("the pod's deletion started").isPositive();
            assertThat(Duration.ofNanos(deleting))
                    .as("kill to the pod's deletion")
                    .isLessThanOrEqualTo(bound);
            assertThat(stopped).as("the session's containers stopped").isPositive();
            assertThat(Duration.ofNanos(stopped))
                    .as("kill to the session's containers stopped")
                    .isLessThanOrEqualTo(bound.plus(GRACE));
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
            Files.deleteIfExists(err);
        }
    }

    /** Reads the child's output until it names its session (bounded), failing with its stderr if it does not. */
    private static String sessionIdOf(Process child, File err) throws Exception {
        CompletableFuture<String> id = CompletableFuture.supplyAsync(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                    if (line.startsWith("session kube-")) {
                        return line.substring("session ".length()).strip();
                    }
                }
                return null;
            } catch (java.io.IOException e) {
                return null;
            }
        });
        String found;
        try {
            found = id.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            found = null;
        }
        if (found == null) {
            child.destroyForcibly();
            throw new AssertionError("the child JVM did not create its session; its stderr: "
                    + Files.readString(err.toPath(), StandardCharsets.UTF_8));
        }
        return found;
    }

    /** Whether a container of the session's pod still runs on the node's Docker daemon (dockershim labels them). */
    private static boolean runningContainers(String podName) {
        String out =
                KubernetesTestSupport.run("docker", "ps", "-q", "--filter", "label=io.kubernetes.pod.name=" + podName);
        return !out.isBlank();
    }
}
