package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sandbox shell} used as a person would: in a real terminal (a tmux pane), with keys typed into it and the
 * screen read back. Each test runs its own tmux server (its own socket), killed afterwards.
 *
 * <p>Without tmux the tests are skipped with a message; with {@code CI=true} a missing tmux fails them ({@code .ci/run}
 * installs it).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ShellTmuxIT {
    private static final long WAIT_MS = 30_000;

    @TempDir
    Path dir;

    private String socket;

    @BeforeEach
    void needTmux() throws Exception {
        boolean present;
        try {
            present = new ProcessBuilder("tmux", "-V")
                            .redirectErrorStream(true)
                            .start()
                            .waitFor()
                    == 0;
        } catch (IOException e) {
            present = false;
        }
        if (!present) {
            String missing = "tmux is not installed, so the shell cannot be tried in a terminal";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                Assertions.fail("CI=true and the terminal test must run, but " + missing);
            }
            Assumptions.abort(missing + " (skipped; apt-get install tmux to run it)");
        }
        socket = "sandbox-shell-it-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    }

    @AfterEach
    void killTmux() throws Exception {
        if (socket != null) {
            tmux("kill-server");
        }
    }

    private String tmux(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("tmux", "-L", socket));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("tmux " + List.of(args) + " did not finish");
        }
        return out;
    }

    /** Starts the CLI in a new 100x30 pane; the pane stays after it exits and shows its exit code. */
    private void start(List<String> cli) throws Exception {
        String command = cli.stream().map(ShellTmuxIT::quote).collect(Collectors.joining(" "));
        tmux(
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                "100",
                "-y",
                "30",
                "-c",
                dir.toString(),
                "sh -c " + quote(command + "; echo SHELL-EXIT=$?; sleep 120"));
    }

    private static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    private String screen() throws Exception {
        return tmux("capture-pane", "-p", "-J", "-t", "t");
    }

    private String awaitScreen(String text) throws Exception {
        long deadline = System.currentTimeMillis() + WAIT_MS;
        String screen = screen();
        while (!screen.contains(text)) {
            if (System.currentTimeMillis() > deadline) {
                throw new AssertionError("never saw '" + text + "' on the terminal; it shows:\n" + screen);
            }
            Thread.sleep(100);
            screen = screen();
        }
        return screen;
    }

    private void type(String line) throws Exception {
        tmux("send-keys", "-t", "t", "-l", line);
        tmux("send-keys", "-t", "t", "Enter");
    }

    @Test
    void aLocalShellRunsTypedCommandsFollowsTheTerminalSizeAndExitsWithTheCommandsCode() throws Exception {
        start(JarCli.command("shell"));
        type("echo typed-$((6*7)); stty size");
        awaitScreen("typed-42");
        awaitScreen("30 100");

        tmux("resize-window", "-t", "t", "-x", "120", "-y", "40");
        Thread.sleep(1000); // the CLI checks the size four times a second
        type("stty size");
        awaitScreen("40 120");

        type("[ -t 0 ] && echo stdin-is-a-$TERM-tty");
        awaitScreen("stdin-is-a-xterm-256color-tty");
        type("exit 3");
        String screen = awaitScreen("SHELL-EXIT=3");
        // the terminal was restored: the line after the shell starts at the first column, not mid-line
        assertThat(screen.lines().filter(l -> l.startsWith("SHELL-EXIT=3"))).hasSize(1);
    }

    @Test
    void aShellOnAServedSessionSeesWhatOtherCommandsLeftThere() throws Exception {
        Path token = dir.resolve("token");
        JarCli.tokenFile(token, "shell-token-0123456789abcdef");
        try (JarCli.Server server = JarCli.Server.start(dir, token)) {
            List<String> remote =
                    List.of("--provider", "remote", "--url", server.url(), "--token-file", token.toString());
            List<String> background = new ArrayList<>(List.of("exec"));
            background.addAll(remote);
            background.addAll(
                    List.of("--background", "--lifetime", "2m", "--", "sh", "-c", "echo left-here > note.txt"));
            JarCli.Result started = JarCli.run(dir, background.toArray(String[]::new));
            assertThat(started.code()).as(started.err()).isZero();
            String session = started.out().strip().split(" ")[0];

            List<String> shell = new ArrayList<>(List.of("shell"));
            shell.addAll(remote);
            shell.addAll(List.of("--session", session, "--", "/bin/sh"));
            start(JarCli.command(shell.toArray(String[]::new)));
            type("cat note.txt; echo sum-$((40+2))");
            awaitScreen("left-here");
            awaitScreen("sum-42");
            type("exit 5");
            awaitScreen("SHELL-EXIT=5");

            // the shell attached to the session: it is still there for the next command
            List<String> ls = new ArrayList<>(List.of("ls-files"));
            ls.addAll(remote);
            ls.add(session + ":note.txt");
            JarCli.Result listed = JarCli.run(dir, ls.toArray(String[]::new));
            assertThat(listed.code()).as(listed.err()).isZero();
            assertThat(listed.out()).contains("note.txt");
        }
    }
}
