package dev.sandbox.samples.cli;

import static dev.sandbox.samples.cli.CommandLineTest.cli;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.kubernetes.RequiresKubernetes;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The CLI's {@code --provider kubernetes}, in-process through {@link SandboxCli#run}, against the real cluster of
 * {@code KUBECONFIG} (a service account bound to the provider's Role) with the test image and the agent image the
 * build made, both loaded into the node's Docker daemon: hence {@code --pull-policy never}.
 */
@RequiresKubernetes
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class KubernetesCliTest {
    private static final String IMAGE = "sandbox-test:busybox";

    /** An exec on the cluster: the provider options, then {@code rest}. */
    private static CommandLineTest.Outcome exec(String... rest) {
        List<String> args = new ArrayList<>(
                List.of("exec", "--provider", "kubernetes", "--image", IMAGE, "--pull-policy", "never"));
        args.addAll(List.of(rest));
        return cli(args.toArray(String[]::new));
    }

    @Test
    void execRunsTheCommandInAPodAndExitsWithItsCode() {
        assertThat(exec("--", "echo", "hi")).isEqualTo(new CommandLineTest.Outcome(0, "hi\n", ""));
        CommandLineTest.Outcome failed = exec("--", "sh", "-c", "echo oops >&2; exit 3");
        assertThat(failed).isEqualTo(new CommandLineTest.Outcome(3, "", "oops\n"));
    }

    @Test
    void theSessionsPodIsDeletedWhenExecEnds() throws InterruptedException {
        CommandLineTest.Outcome o = exec("--", "hostname");
        assertThat(o.code()).as(o.err()).isZero();
        String pod = o.out().strip();
        assertThat(pod).matches("kube-[0-9a-f]{16}");
        try (KubernetesClient client = new KubernetesClientBuilder().build()) {
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            Pod left = client.pods()
                    .inNamespace(client.getNamespace())
                    .withName(pod)
                    .get();
            while (left != null && left.getMetadata().getDeletionTimestamp() == null && System.nanoTime() < deadline) {
                Thread.sleep(200);
                left = client.pods()
                        .inNamespace(client.getNamespace())
                        .withName(pod)
                        .get();
            }
            assertThat(left == null || left.getMetadata().getDeletionTimestamp() != null)
                    .as("pod %s deleted or being deleted", pod)
                    .isTrue();
        }
    }

    @Test
    void aBadNamespaceIsAUsageErrorNamingIt() {
        CommandLineTest.Outcome o = exec("--namespace", "Sandbox_Test", "--", "echo", "hi");
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.out()).isEmpty();
        assertThat(o.firstErrorLine())
                .startsWith("sandbox: Invalid value for option '--namespace': expected a DNS label")
                .endsWith("got 'Sandbox_Test'");
    }

    @Test
    void aNamespaceTheAccountMayNotUseIsRefusedInTheApiServersWords() {
        // the account has no Role in sandbox-test-denied (scripts/kube-up.sh)
        CommandLineTest.Outcome o = exec("--namespace", "sandbox-test-denied", "--", "echo", "hi");
        assertThat(o.code()).isEqualTo(SandboxCli.EXIT_ERROR);
        assertThat(o.out()).isEmpty();
        assertThat(o.err().lines().toList())
                .singleElement()
                .asString()
                .startsWith("sandbox: the Kubernetes API server forbids '")
                .contains("'pods'", "in namespace 'sandbox-test-denied'");
    }
}
