package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.docker.RequiresDocker;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ctrl-C (SIGINT) on a CLI running a command in an existing session ({@code exec --session}): the CLI exits 130 and
 * the command is gone from the session, for the remote provider and for Docker, as it is for a one-shot {@code exec}
 * (whose session is destroyed). Each CLI is a real {@code java -jar} process, sent a real SIGINT.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class CtrlCCliIT {
    @TempDir
    Path dir;

    /**
     * Starts the CLI with SIGINT at its default: a JVM started with SIGINT ignored (as a background job of a
     * non-interactive shell is, and so may this test's JVM be) never runs its shutdown hooks on Ctrl-C.
     */
    private Process start(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("env", "--default-signal=INT"));
        command.addAll(JarCli.command(args));
        return new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
    }

    /** Waits for the command's first line, sends SIGINT, and returns the CLI's exit code and stderr. */
    private JarCli.Result interruptAfterFirstLine(Process cli) throws Exception {
        CompletableFuture<String> err = JarCli.drain(cli.getErrorStream());
        BufferedReader out = new BufferedReader(new InputStreamReader(cli.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        try {
            assertThat(first.get(90, TimeUnit.SECONDS)).as(() -> err.getNow("")).isEqualTo("started");
            Process kill = new ProcessBuilder("kill", "-INT", Long.toString(cli.pid()))
                    .inheritIO()
                    .start();
            assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(kill.exitValue()).isZero();
            assertThat(cli.waitFor(60, TimeUnit.SECONDS))
                    .as("the CLI exits on SIGINT")
                    .isTrue();
            JarCli.drain(cli.getInputStream());
            return new JarCli.Result(cli.exitValue(), "", err.get(30, TimeUnit.SECONDS));
        } finally {
            cli.destroyForcibly();
        }
    }

    @Test
    void ctrlCOnExecInARemoteSessionKillsTheCommand() throws Exception {
        Path token = dir.resolve("token");
        JarCli.tokenFile(token, "ctrl-c-token-0123456789abcdef");
        try (JarCli.Server server = JarCli.Server.start(dir, token)) {
            List<String> remote =
                    List.of("--provider", "remote", "--url", server.url(), "--token-file", token.toString());
            JarCli.Result created = JarCli.run(dir, concat(List.of("create"), remote));
            assertThat(created.code()).as(created.err()).isZero();
            String session = created.out().strip();

            // the server runs local sessions, so the command is a process of this machine: its pid tells if it lives
            Path pidFile = dir.resolve("pid");
            Process cli = start(concat(
                    List.of("exec"),
                    remote,
                    List.of(
                            "--session",
                            session,
                            "--",
                            "sh",
                            "-c",
                            "echo $$ > '" + pidFile + "'; echo started; exec sleep 300")));
            JarCli.Result interrupted = interruptAfterFirstLine(cli);
            assertThat(interrupted.code()).as(interrupted.err()).isEqualTo(130);

            long pid = Long.parseLong(Files.readString(pidFile).strip());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (alive(pid) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(alive(pid)).as("the command after Ctrl-C on its CLI").isFalse();

            // the session itself stays: it was not made by this command
            JarCli.Result after =
                    JarCli.run(dir, concat(List.of("exec"), remote, List.of("--session", session, "--", "true")));
            assertThat(after.code()).as(after.err()).isZero();
        }
    }

    /** The same on Docker, and a failed pull. */
    @Nested
    @RequiresDocker
    class OnDocker {
        @Test
        void ctrlCOnExecInADockerSessionKillsTheCommand() throws Exception {
            List<String> docker = List.of("--provider", "docker", "--pull", "never");
            JarCli.Result created = JarCli.run(dir, concat(List.of("create"), docker, List.of("--lifetime", "3m")));
            assertThat(created.code()).as(created.err()).isZero();
            String session = created.out().strip();
            try {
                Process cli = start(concat(
                        List.of("exec"),
                        docker,
                        List.of("--session", session, "--", "sh", "-c", "echo started; exec sleep 317")));
                JarCli.Result interrupted = interruptAfterFirstLine(cli);
                assertThat(interrupted.code()).as(interrupted.err()).isEqualTo(130);

                // what runs in the container now: no sleep 317 (the kill is done before the CLI exits)
                JarCli.Result ps =
                        JarCli.run(dir, concat(List.of("exec"), docker, List.of("--session", session, "--", "ps")));
                assertThat(ps.code()).as(ps.err()).isZero();
                assertThat(ps.out()).contains("PID").doesNotContain("sleep 317");
            } finally {
                JarCli.run(dir, "destroy", "--provider", "docker", session);
            }
        }

        /** Defect 9: a pull that fails is one line, the daemon's message whole (no registry here, so any pull fails). */
        @Test
        void aFailedPullIsOneLineWithTheWholeMessage() throws Exception {
            JarCli.Result r =
                    JarCli.run(dir, "create", "--provider", "docker", "--image", "nosuch:tag", "--pull", "always");

            assertThat(r.code()).isEqualTo(1);
            assertThat(r.out()).isEmpty();
            assertThat(r.err().lines().toList())
                    .as(r.err())
                    .singleElement()
                    .asString()
                    .startsWith("sandbox: docker: cannot pull image 'nosuch:tag'")
                    .doesNotContain("\\\"")
                    .doesNotEndWith("\\");
            String daemonSays = r.err().substring(r.err().indexOf("): ") + 3).strip();
            assertThat(daemonSays).as("the daemon's message").isNotEmpty();
            assertThat(daemonSays.chars().filter(c -> c == '"').count() % 2)
                    .as("its quotes are all there: " + daemonSays)
                    .isZero();
        }
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    private static String[] concat(List<String> a, List<String> b) {
        return concat(a, b, List.of());
    }

    private static String[] concat(List<String> a, List<String> b, List<String> c) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        all.addAll(c);
        return all.toArray(String[]::new);
    }
}
