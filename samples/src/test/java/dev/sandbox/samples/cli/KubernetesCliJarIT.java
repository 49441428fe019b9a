package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.kubernetes.RequiresKubernetes;
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
