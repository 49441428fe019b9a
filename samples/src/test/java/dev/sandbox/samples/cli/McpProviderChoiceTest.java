package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Which provider {@code sandbox mcp} serves when none is named, as a real process: Docker or a refusal when no daemon
 * answers, never the local provider; {@code --provider local} only with a warning.
 */
class McpProviderChoiceTest {
    /** Runs {@code sandbox mcp} with stdin closed at once (it serves until then) and DOCKER_HOST set as given. */
    private static JarCli.Result run(String dockerHost, String... args) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(McpCliTest.cli(args))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().put("DOCKER_HOST", dockerHost);
        Process p = pb.start();
        CompletableFuture<String> out = JarCli.drain(p.getInputStream());
        CompletableFuture<String> err = JarCli.drain(p.getErrorStream());
        boolean exited = p.waitFor(60, TimeUnit.SECONDS);
        if (!exited) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        assertThat(exited).as("sandbox mcp exited").isTrue();
        return new JarCli.Result(p.exitValue(), out.get(30, TimeUnit.SECONDS), err.get(30, TimeUnit.SECONDS));
    }

    @Test
    void without_a_provider_and_no_docker_daemon_it_refuses_and_says_how_to_choose() throws Exception {
        JarCli.Result r = run("unix:///nonexistent/docker.sock", "mcp");
        assertThat(r.code()).isEqualTo(SandboxCli.EXIT_ERROR);
        assertThat(r.out()).as("stdout carries only MCP messages").isEmpty();
        assertThat(r.err())
                .startsWith("sandbox: sandbox mcp runs the code a model writes, so without --provider it uses Docker,"
                        + " and no Docker daemon answers (")
                .contains("unix:///nonexistent/docker.sock")
                .contains("--provider docker|kubernetes|remote|local")
                .contains("without isolation")
                .doesNotContain("\tat ");
    }

    @Test
    void the_local_provider_only_when_named_and_with_a_warning() throws Exception {
        // DOCKER_HOST pointing at nothing: the local provider does not need Docker, and is not refused
        JarCli.Result r = run("unix:///nonexistent/docker.sock", "mcp", "--provider", "local");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).isEmpty();
        assertThat(r.err())
                .startsWith("sandbox: warning: --provider local runs the model's commands as host processes of this"
                        + " user, without isolation");
        assertThat(r.err().getBytes(StandardCharsets.UTF_8).length).isLessThan(400);
    }
}
