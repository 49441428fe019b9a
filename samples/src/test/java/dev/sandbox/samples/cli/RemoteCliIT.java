package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sandbox serve} as a real process on loopback (an ephemeral port), and every session command of the CLI run
 * against it with {@code --provider remote}, each as its own {@code java -jar} process: sessions outlive the commands
 * that made them, so a later command reaches them by id.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RemoteCliIT {
    private Path dir;
    private Path token;
    private JarCli.Server server;

    @BeforeAll
    void serve(@TempDir Path classDir) throws Exception {
        dir = classDir;
        token = dir.resolve("token");
        JarCli.tokenFile(token, "remote-cli-token-0123456789abcdef");
        server = JarCli.Server.start(dir, token);
    }

    @AfterAll
    void stop() throws Exception {
        if (server != null) {
            server.close();
        }
    }

    private String[] remote(String subcommand, String... rest) {
        List<String> args = new ArrayList<>();
        args.add(subcommand);
        args.addAll(List.of("--provider", "remote", "--url", server.url(), "--token-file", token.toString()));
        args.addAll(List.of(rest));
        return args.toArray(String[]::new);
    }

    @Test
    void execAndRunGoThroughTheServer() throws Exception {
        JarCli.Result exec =
                JarCli.run(dir, remote("exec", "--", "sh", "-c", "echo out-$((2+3)); echo err >&2; exit 4"));
        assertThat(exec.code()).isEqualTo(4);
        assertThat(exec.out()).isEqualTo("out-5\n");
        assertThat(exec.err()).isEqualTo("err\n");

        JarCli.Result run = JarCli.run(dir, remote("run", "--", "echo", "collected"));
        assertThat(run.code()).isZero();
        assertThat(run.out()).contains("\"stdout\":\"collected\\n\"");
    }

    @Test
    void backgroundLogsCopyAndListReachTheSameSessionAcrossCommands() throws Exception {
        JarCli.Result started = JarCli.run(
                dir, remote("exec", "--background", "--", "sh", "-c", "echo first; sleep 1; echo second; exit 6"));
        assertThat(started.code()).as(started.err()).isZero();
        String[] ids = started.out().strip().split(" ");
        assertThat(ids).hasSize(2);

        JarCli.Result followed = JarCli.run(dir, remote("logs", "--follow", ids[0], ids[1]));
        assertThat(followed.code()).isEqualTo(6);
        assertThat(followed.out()).isEqualTo("first\nsecond\n");

        Files.writeString(dir.resolve("up.txt"), "uploaded\n");
        assertThat(JarCli.run(dir, remote("cp", "up.txt", ids[0] + ":in-session.txt"))
                        .code())
                .isZero();
        JarCli.Result listed = JarCli.run(dir, remote("ls-files", ids[0] + ":"));
        assertThat(listed.code()).isZero();
        assertThat(listed.out()).contains("in-session.txt");
        assertThat(JarCli.run(dir, remote("cp", ids[0] + ":in-session.txt", "down.txt"))
                        .code())
                .isZero();
        assertThat(dir.resolve("down.txt")).hasContent("uploaded");
    }

    @Test
    void cpIntoRelativeTargetsWithDotSegmentsWorksAndAHostileTreeIsStillRefused(@TempDir Path work) throws Exception {
        JarCli.Result created = JarCli.run(dir, remote("create", "--lifetime", "3m"));
        assertThat(created.code()).as(created.err()).isZero();
        String id = created.out().strip();
        try {
            CopyTargets.check(work, id, this::remote);
        } finally {
            JarCli.run(dir, remote("destroy", id));
        }
    }

    @Test
    void aWrongTokenOrAnUnknownSessionIsAClearError() throws Exception {
        Path wrong = dir.resolve("wrong-token");
        JarCli.tokenFile(wrong, "not-the-token-0123456789abcdef");
        JarCli.Result refused = JarCli.run(
                dir,
                "exec",
                "--provider",
                "remote",
                "--url",
                server.url(),
                "--token-file",
                wrong.toString(),
                "--",
                "true");
        assertThat(refused.code()).isEqualTo(1);
        assertThat(refused.err()).startsWith("sandbox: ").contains("token");

        JarCli.Result missing = JarCli.run(dir, remote("logs", "no-such-session", "p-1"));
        assertThat(missing.code()).isEqualTo(1);
        assertThat(missing.err()).contains("no-such-session");

        JarCli.Result noTokenFile = JarCli.run(
                dir, "ls-files", "--provider", "remote", "--url", server.url(), "--token-file", "nope", "s:");
        assertThat(noTokenFile.code()).isEqualTo(2);
        assertThat(noTokenFile.err()).contains("--token-file 'nope'");
    }

    @Test
    void serveStopsGracefullyOnSigterm(@TempDir Path other) throws Exception {
        Path tokenFile = other.resolve("token");
        JarCli.tokenFile(tokenFile, "another-token-0123456789abcdef");
        JarCli.Server second = JarCli.Server.start(other, tokenFile);
        JarCli.Result ok = JarCli.run(
                other,
                "run",
                "--provider",
                "remote",
                "--url",
                second.url(),
                "--token-file",
                tokenFile.toString(),
                "--",
                "true");
        assertThat(ok.code()).isZero();
        int code = second.stop();
        assertThat(code).as("the JVM's exit status for SIGTERM").isEqualTo(143);
        assertThat(second.err().get(30, TimeUnit.SECONDS)).contains("sandbox: server stopped");
    }
}
