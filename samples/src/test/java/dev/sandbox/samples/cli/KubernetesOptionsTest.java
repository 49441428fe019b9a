package dev.sandbox.samples.cli;

import static dev.sandbox.samples.cli.CommandLineTest.cli;
import static dev.sandbox.samples.cli.CommandLineTest.parse;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --provider kubernetes} on the command line, without a cluster: what each subcommand gets from its options,
 * and the usage errors (exit 2) that name the option and the value.
 */
class KubernetesOptionsTest {
    @TempDir
    Path tmp;

    private Path kubeconfig() throws IOException {
        Path file = tmp.resolve("kubeconfig");
        Files.writeString(file, "apiVersion: v1\nkind: Config\n");
        return file;
    }

    private static void assertUsageError(String message, String... args) {
        CommandLineTest.Outcome o = cli(args);
        String shown = String.join(" ", args);
        assertThat(o.code()).as(shown).isEqualTo(2);
        assertThat(o.out()).as(shown).isEmpty();
        assertThat(o.firstErrorLine()).as(shown).startsWith("sandbox: ").contains(message);
        assertThat(o.err()).as(shown).contains("see 'sandbox help " + args[0] + "'");
    }

    /** A command line the parser accepts and the provider refuses: exit 2, one line naming the option. */
    private static void assertRefused(String message, String... args) {
        CommandLineTest.Outcome o = cli(args);
        String shown = String.join(" ", args);
        assertThat(o.code()).as(shown).isEqualTo(2);
        assertThat(o.out()).as(shown).isEmpty();
        assertThat(o.err().lines().toList())
                .as(shown)
                .singleElement()
                .asString()
                .startsWith("sandbox: " + message);
    }

    @Test
    void everyKubernetesOptionReachesTheProvidersSettings() throws IOException {
        Path config = kubeconfig();
        ExecCommand exec = parse(
                ExecCommand.class,
                "exec",
                "--provider",
                "kubernetes",
                "--kubeconfig",
                config.toString(),
                "--context",
                "ci",
                "--namespace",
                "sandboxes",
                "--image",
                "sandbox-test:busybox",
                "--agent-image",
                "registry.example/sandbox-agent:1",
                "--pull-policy",
                "never",
                "--cpus",
                "0.5",
                "--memory",
                "256m",
                "--container-lease",
                "30s",
                "--",
                "true");
        assertThat(exec.provider)
                .isEqualTo(new Provider(
                        "kubernetes",
                        null,
                        null,
                        null,
                        null,
                        new Provider.Kubernetes(
                                config,
                                "ci",
                                "sandboxes",
                                "sandbox-test:busybox",
                                "registry.example/sandbox-agent:1",
                                "never",
                                0.5,
                                256L << 20,
                                Duration.ofSeconds(30))));
        // --pull is the same option as --pull-policy, as for docker
        CreateCommand create = parse(
                CreateCommand.class,
                "create",
                "--provider",
                "kubernetes",
                "--kubeconfig",
                config.toString(),
                "--pull",
                "always");
        assertThat(create.provider.kubernetes().pull()).isEqualTo("always");
        assertThat(create.provider.kubernetes().image()).isEqualTo(Provider.Docker.DEFAULT_IMAGE);

        ServeCommand serve = parse(
                ServeCommand.class,
                "serve",
                "--provider",
                "kubernetes",
                "--kubeconfig",
                config.toString(),
                "--namespace",
                "ns-1",
                "--token-file",
                "t");
        assertThat(serve.served.name()).isEqualTo("kubernetes");
        assertThat(serve.served.kubernetes().namespace()).isEqualTo("ns-1");

        McpCommand mcp = parse(McpCommand.class, "mcp", "--provider", "kubernetes", "--kubeconfig", config.toString());
        assertThat(mcp.provider.kubernetes().kubeconfig()).isEqualTo(config);
    }

    @Test
    void badValuesAndMisplacedOptionsAreUsageErrorsNamingThem() throws IOException {
        String config = kubeconfig().toString();
        assertUsageError(
                "Invalid value for option '--namespace': expected a DNS label",
                "exec",
                "--provider",
                "kubernetes",
                "--kubeconfig",
                config,
                "--namespace",
                "Team_A",
                "--",
                "true");
        assertThat(cli("exec", "--provider", "kubernetes", "--namespace", "Team_A", "--", "true")
                        .firstErrorLine())
                .contains("got 'Team_A'");
        assertUsageError(
                "--kubeconfig: no readable kubeconfig file at '" + tmp.resolve("missing") + "'",
                "exec",
                "--provider",
                "kubernetes",
                "--kubeconfig",
                tmp.resolve("missing").toString(),
                "--",
                "true");
        assertUsageError(
                "Invalid value for option '--pull-policy': expected one of always, if-not-present, never, got 'sometimes'",
                "exec",
                "--provider",
                "kubernetes",
                "--kubeconfig",
                config,
                "--pull-policy",
                "sometimes",
                "--",
                "true");
        assertUsageError(
                "--namespace applies to --provider kubernetes only",
                "exec",
                "--provider",
                "docker",
                "--namespace",
                "ns",
                "--",
                "true");
        assertUsageError("--agent-image applies to --provider kubernetes only", "create", "--agent-image", "a:1");
        assertUsageError(
                "--runtime applies to --provider docker only",
                "exec",
                "--provider",
                "kubernetes",
                "--kubeconfig",
                config,
                "--runtime",
                "runsc",
                "--",
                "true");
        assertUsageError(
                "--kubeconfig applies to --provider kubernetes only",
                "serve",
                "--kubeconfig",
                config,
                "--token-file",
                "t");
    }

    /** Values the provider refuses before it connects: a usage error naming the option (no cluster needed). */
    @Test
    void valuesTheProviderRefusesAreUsageErrorsNamingTheOption() throws IOException {
        String config = kubeconfig().toString();
        assertRefused(
                "--container-lease: lease must be at least PT3S, got PT1S",
                "exec",
                "--provider",
                "kubernetes",
                "--kubeconfig",
                config,
                "--container-lease",
                "1s",
                "--",
                "true");
        assertRefused(
                "--image: ",
                "exec",
                "--provider",
                "kubernetes",
                "--kubeconfig",
                config,
                "--image",
                "two words",
                "--",
                "true");
        assertRefused(
                "--agent-image: ",
                "create",
                "--provider",
                "kubernetes",
                "--kubeconfig",
                config,
                "--agent-image",
                "a b");
    }

    @Test
    void helpNamesTheKubernetesProviderAndItsOptions() {
        assertThat(SandboxCommand.USAGE)
                .contains("kubernetes", "--namespace NAME", "--kubeconfig FILE", "--context NAME", "--agent-image");
        assertThat(cli("exec", "--help").out()).contains("--namespace", "--kubeconfig", "--agent-image", "kubernetes");
        assertThat(cli("serve", "--help").out().replaceAll("\\s+", " "))
                .contains("--namespace", "whose sessions to serve: local, docker or kubernetes");
    }
}
