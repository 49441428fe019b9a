package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.server.SandboxServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code exec --session SESSION --background}: a background process in a session that exists, as the API's {@code
 * process().start} gives one. The sessions are the local provider's, served on loopback by a real {@link
 * SandboxServer} in this JVM, so that one CLI run can make a session and later ones reach it ({@code --provider
 * remote}); the CLI itself runs in-process.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BackgroundInSessionTest {
    @TempDir
    Path tmp;

    private LocalSandboxProvider local;
    private SandboxServer server;
    private Path token;

    @BeforeEach
    void serve() throws Exception {
        token = tmp.resolve("token");
        Files.writeString(token, "background-in-session-0123456789abcdef\n");
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local)
                .host("127.0.0.1")
                .port(0)
                .token("background-in-session-0123456789abcdef".toCharArray())
                .start();
    }

    @AfterEach
    void stop() {
        server.close();
        local.close();
    }

    private CommandLineTest.Outcome remote(String subcommand, String... rest) {
        List<String> args = new ArrayList<>(List.of(
                subcommand, "--provider", "remote", "--url", server.baseUrl(), "--token-file", token.toString()));
        args.addAll(List.of(rest));
        return CommandLineTest.cli(args.toArray(String[]::new));
    }

    @Test
    void backgroundWithSessionStartsTheProcessInThatSessionWhichStays() throws Exception {
        CommandLineTest.Outcome created = remote("create", "--label", "job=bg");
        assertThat(created.code()).as(created.err()).isZero();
        String session = created.out().strip();
        assertThat(remote("exec", "--session", session, "--", "sh", "-c", "echo kept > note.txt")
                        .code())
                .isZero();

        // the process runs in that session (its files) with its own --env
        CommandLineTest.Outcome started = remote(
                "exec",
                "--session",
                session,
                "--background",
                "--env",
                "GREETING=hi there",
                "--",
                "sh",
                "-c",
                "echo \"$GREETING\"; cat note.txt; echo err >&2; exit 5");
        assertThat(started.code()).as(started.err()).isZero();
        assertThat(started.err()).isEmpty();
        String[] ids = started.out().strip().split(" ");
        assertThat(ids).hasSize(2);
        assertThat(ids[0]).isEqualTo(session);

        CommandLineTest.Outcome followed = remote("logs", "--follow", session, ids[1]);
        assertThat(followed.code()).as(followed.err()).isEqualTo(5);
        assertThat(followed.out()).isEqualTo("hi there\nkept\n");
        assertThat(followed.err()).isEqualTo("err\n");

        // and in its own --workdir
        Path dir = Files.createDirectory(tmp.resolve("elsewhere"));
        String[] second = remote("exec", "--session", session, "--background", "--workdir", dir.toString(), "--", "pwd")
                .out()
                .strip()
                .split(" ");
        assertThat(remote("logs", "--follow", session, second[1]).out()).isEqualTo(dir + "\n");

        // the session was not made for the process, and outlives it, with its files and labels
        CommandLineTest.Outcome after = remote("exec", "--session", session, "--", "cat", "note.txt");
        assertThat(after.code()).as(after.err()).isZero();
        assertThat(after.out()).isEqualTo("kept\n");
        assertThat(remote("ls", "--label", "job=bg").out()).startsWith(session + " ");
        assertThat(remote("destroy", session).code()).isZero();

        // a session that is gone is named
        CommandLineTest.Outcome gone = remote("exec", "--session", session, "--background", "--", "true");
        assertThat(gone.code()).isEqualTo(SandboxCli.EXIT_ERROR);
        assertThat(gone.err()).startsWith("sandbox: ").contains(session);
    }

    @Test
    void aLocalSessionCannotBeReachedFromAnotherCommandAndSaysSo() {
        CommandLineTest.Outcome o = CommandLineTest.cli("exec", "--session", "s-1", "--background", "--", "true");
        assertThat(o.code()).isEqualTo(SandboxCli.EXIT_USAGE);
        assertThat(o.out()).isEmpty();
        assertThat(o.err())
                .startsWith("sandbox: cannot reach session 's-1': local sessions live only as long as")
                .contains("--provider remote");
    }
}
