package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.kubernetes.RequiresKubernetes;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded jar with {@code --provider kubernetes}, as a user runs it against the cluster of {@code KUBECONFIG}: the
 * command's output and nothing else (no client library's log lines), and a refusal or a missing kubeconfig as one line
 * in the user's words.
 */
@RequiresKubernetes
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class KubernetesCliJarIT {
    @TempDir
    Path dir;

    private JarCli.Result run(Map<String, String> env, String... args) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(JarCli.command(args))
                .directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        env.forEach((k, v) -> {
            if (v == null) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        Process p = pb.start();
        CompletableFuture<String> out = JarCli.drain(p.getInputStream());
        CompletableFuture<String> err = JarCli.drain(p.getErrorStream());
        boolean exited = p.waitFor(120, TimeUnit.SECONDS);
        if (!exited) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        assertThat(exited).as("the CLI exited: " + List.of(args)).isTrue();
        return new JarCli.Result(p.exitValue(), out.get(30, TimeUnit.SECONDS), err.get(30, TimeUnit.SECONDS));
    }

    @Test
    void execPrintsOnlyTheCommandsOutput() throws Exception {
        JarCli.Result r = run(
                Map.of(),
                "exec",
                "--provider",
                "kubernetes",
                "--image",
                "sandbox-test:busybox",
                "--pull-policy",
                "never",
                "--",
                "sh",
                "-c",
                "echo hi; echo there >&2");
        assertThat(r).isEqualTo(new JarCli.Result(0, "hi\n", "there\n"));
    }

    @Test
    void serveServesPodsThatRemoteCommandsUseAndRemovesThemWhenItStops() throws Exception {
        Path token = JarCli.tokenFile(dir.resolve("token"), "kubernetes-serve-token-0123456789");
        String pod;
        try (JarCli.Server server = JarCli.Server.start(
                dir, token, "--provider", "kubernetes", "--image", "sandbox-test:busybox", "--pull-policy", "never")) {
            String[] remote = {"--provider", "remote", "--url", server.url(), "--token-file", token.toString()};
            JarCli.Result created = run(Map.of(), concat(new String[] {"create"}, remote));
            assertThat(created.code()).as(created.err()).isZero();
            pod = created.out().strip();
            assertThat(pod).matches("kube-[0-9a-f]{16}");
            JarCli.Result host = run(
                    Map.of(), concat(new String[] {"exec"}, remote, new String[] {"--session", pod, "--", "hostname"}));
            assertThat(host).isEqualTo(new JarCli.Result(0, pod + "\n", ""));
            assertThat(server.stop()).as("serve stopped by SIGTERM").isIn(0, 130, 143);
        }
        // serve destroyed its sessions on the way out: the pod is gone or going
        try (KubernetesClient client = new KubernetesClientBuilder().build()) {
            Pod left = client.pods()
                    .inNamespace(client.getNamespace())
                    .withName(pod)
                    .get();
            assertThat(left == null || left.getMetadata().getDeletionTimestamp() != null)
                    .as("pod %s after serve stopped", pod)
                    .isTrue();
        }
    }

    private static String[] concat(String[]... parts) {
        return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream).toArray(String[]::new);
    }

    @Test
    void aRefusedCallIsOneLineNamingTheVerbResourceAndNamespace() throws Exception {
        JarCli.Result r = run(
                Map.of(),
                "exec",
                "--provider",
                "kubernetes",
                "--namespace",
                "sandbox-test-denied",
                "--image",
                "sandbox-test:busybox",
                "--",
                "true");
        assertThat(r.code()).isEqualTo(SandboxCli.EXIT_ERROR);
        assertThat(r.out()).isEmpty();
        assertThat(r.err().lines().toList())
                .singleElement()
                .asString()
                .startsWith("sandbox: the Kubernetes API server forbids '")
                .contains("on 'pods' in namespace 'sandbox-test-denied'");
    }

    @Test
    void aKubeconfigVariableNamingNoFileIsAUsageError() throws Exception {
        java.util.HashMap<String, String> env = new java.util.HashMap<>();
        env.put("KUBECONFIG", dir.resolve("missing").toString());
        JarCli.Result r = run(env, "exec", "--provider", "kubernetes", "--", "true");
        assertThat(r.code()).isEqualTo(SandboxCli.EXIT_USAGE);
        assertThat(r.out()).isEmpty();
        assertThat(r.err().lines().findFirst().orElse(""))
                .isEqualTo("sandbox: --provider kubernetes: KUBECONFIG is '" + dir.resolve("missing")
                        + "', and no readable kubeconfig file is there; set KUBECONFIG to your cluster's kubeconfig"
                        + " or pass --kubeconfig FILE");
    }
}
