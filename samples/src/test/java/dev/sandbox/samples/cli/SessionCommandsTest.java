package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.FileOperationException;
import dev.sandbox.ProcessNotFoundException;
import dev.sandbox.blocking.BackgroundProcessHandle;
import dev.sandbox.blocking.SandboxClient;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commands for lasting sessions ({@code exec --background}, {@code logs}, {@code cp}, {@code ls-files}) run
 * against a client of a real local session, as they will with a session a provider lets the CLI attach to: only
 * {@link SessionSource} decides where the client comes from.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SessionCommandsTest {
    @TempDir
    Path tmp;

    private SandboxClient client;

    @BeforeEach
    void open() {
        client = SandboxClient.builder().defaultTimeout(Duration.ofSeconds(30)).local();
    }

    @AfterEach
    void close() {
        client.close();
    }

    record Printed(int code, String out, String err) {}

    private static Printed capture(Function<PrintStream[], Integer> command) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, false, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, false, StandardCharsets.UTF_8)) {
            code = command.apply(new PrintStream[] {o, e});
        }
        return new Printed(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private Printed logs(String processId, long from, boolean follow) {
        List<String> args =
                new ArrayList<>(List.of("logs", "--from", Long.toString(from), client.sessionId(), processId));
        if (follow) {
            args.add("--follow");
        }
        LogsCommand logs = CommandLineTest.parse(LogsCommand.class, args.toArray(String[]::new));
        return capture(s -> logs.run(client, s[0], s[1]));
    }

    @Test
    void backgroundPrintsTheIdsThatLogsTakes() {
        Printed started = capture(s ->
                BackgroundCommand.run(client, ExecOptions.shell("echo one; echo warn >&2; echo two; exit 3"), s[0]));
        assertThat(started.code()).isZero();
        String[] ids = started.out().strip().split(" ");
        assertThat(ids).hasSize(2);
        assertThat(ids[0]).isEqualTo(client.sessionId());
        String processId = ids[1];

        Printed followed = logs(processId, 0, true);
        assertThat(followed.code()).isEqualTo(3); // the process's exit code
        assertThat(followed.out()).isEqualTo("one\ntwo\n");
        assertThat(followed.err()).isEqualTo("warn\n");

        // without --follow: what is there, exit 0; from an offset: the rest
        Printed again = logs(processId, 0, false);
        assertThat(again).isEqualTo(new Printed(0, "one\ntwo\n", "warn\n"));
        assertThat(logs(processId, "one\n".length(), false).out()).isEqualTo("two\n");
    }

    @Test
    void logsOfARunningProcessWithoutFollowShowWhatIsThereAndReturn() throws Exception {
        BackgroundProcessHandle p = client.process().start(ExecOptions.shell("echo ready; exec sleep 30"));
        Printed now = new Printed(0, "", "");
        for (int i = 0; i < 100 && now.out().isEmpty(); i++) {
            now = logs(p.id(), 0, false);
            Thread.sleep(20);
        }
        assertThat(now).isEqualTo(new Printed(0, "ready\n", ""));
        assertThat(p.running()).isTrue();
        p.kill();
    }

    @Test
    void logsOfAnUnknownProcessIsAnError() {
        assertThatThrownBy(() -> logs("p-404", 0, false))
                .isInstanceOf(ProcessNotFoundException.class)
                .hasMessageContaining("p-404");
    }

    @Test
    void copyUploadsAndDownloadsIntoDirectoriesAsCpDoes() throws Exception {
        Path local = tmp.resolve("notes.txt");
        Files.writeString(local, "first line\nsecond line\n");
        client.files().mkdir("docs");

        String session = client.sessionId();
        assertThat(copy(local.toString(), session + ":docs").run(client)).isZero();
        assertThat(copy(local.toString(), session + ":docs/renamed.txt").run(client))
                .isZero();
        assertThat(client.files().list("docs")).extracting(f -> f.name()).containsExactly("notes.txt", "renamed.txt");

        Path downloads = Files.createDirectory(tmp.resolve("downloads"));
        assertThat(copy(session + ":docs/renamed.txt", downloads.toString()).run(client))
                .isZero();
        assertThat(downloads.resolve("renamed.txt")).hasSameTextualContentAs(local);

        assertThatThrownBy(() -> copy(session + ":docs/missing.txt", downloads.toString())
                        .run(client))
                .isInstanceOfSatisfying(
                        FileOperationException.class,
                        e -> assertThat(e.reason()).isEqualTo(FileOperationException.Reason.NOT_FOUND));
    }

    @Test
    void copyRecursiveCopiesTreesBothWaysWithProgressOnlyWhenAsked() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("project/src"));
        Files.writeString(src.resolve("Main.java"), "class Main {}\n");
        Files.createDirectories(tmp.resolve("project/empty"));
        String session = client.sessionId();

        // without -r a directory is refused, naming it
        assertThatThrownBy(() ->
                        copy(tmp.resolve("project").toString(), session + ":up").run(client))
                .isInstanceOfSatisfying(
                        FileOperationException.class,
                        e -> assertThat(e).hasMessageContaining("project").hasMessageContaining("cp -r"));

        // into an existing directory: it gets the source's name, as cp -r does; progress when asked
        client.files().mkdir("work");
        Printed up = capture(s -> CommandLineTest.parse(
                        CopyCommand.class, "cp", "-r", tmp.resolve("project").toString(), session + ":work")
                .run(client, s[1], true));
        assertThat(up.code()).isZero();
        assertThat(up.err()).startsWith("\r").endsWith("3 entries, 14 B\u001b[K\n");
        assertThat(client.process()
                        .run(ExecOptions.shell("cd work && find . | sort"))
                        .stdout())
                .isEqualTo(".\n./project\n./project/empty\n./project/src\n./project/src/Main.java\n");

        // back down, silent (stderr not a terminal)
        Path downloads = Files.createDirectory(tmp.resolve("downloads"));
        Printed down = capture(s -> CommandLineTest.parse(
                        CopyCommand.class, "cp", "--recursive", session + ":work/project", downloads.toString())
                .run(client, s[1], false));
        assertThat(down).isEqualTo(new Printed(0, "", ""));
        assertThat(downloads.resolve("project/src/Main.java")).hasContent("class Main {}");
        assertThat(downloads.resolve("project/empty")).isEmptyDirectory();
        assertThatThrownBy(() -> copy(
                                session + ":work/project",
                                tmp.resolve("elsewhere").toString())
                        .run(client))
                .isInstanceOfSatisfying(
                        FileOperationException.class,
                        e -> assertThat(e.reason()).isEqualTo(FileOperationException.Reason.IS_A_DIRECTORY));
    }

    private static CopyCommand copy(String from, String to) {
        return CommandLineTest.parse(CopyCommand.class, "cp", from, to);
    }

    @Test
    void listFilesShowsTypeModeSizeAndName() {
        client.process()
                .run(ExecOptions.shell("mkdir -p d/sub && printf 12345 > d/five.txt && chmod 640 d/five.txt"
                        + " && ln -s five.txt d/link && touch d/sub/tool && chmod 4755 d/sub/tool"));
        String user = client.process().run(ExecOptions.shell("id -un")).stdout().trim();

        Printed listed = capture(s -> listFiles(client.sessionId() + ":d").run(client, s[0]));

        List<String> lines = listed.out().lines().toList();
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0))
                .matches("-rw-r----- " + user + " +\\S+ +5 \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ five\\.txt");
        assertThat(lines.get(1)).matches("lrwxrwxrwx " + user + " +\\S+ +8 \\S+ link -> five\\.txt");
        assertThat(lines.get(2)).matches("drwx.* sub");

        ListFilesCommand deep =
                CommandLineTest.parse(ListFilesCommand.class, "ls-files", "--depth", "2", client.sessionId() + ":d");
        List<String> tree = capture(s -> deep.run(client, s[0])).out().lines().toList();
        assertThat(tree).hasSize(4);
        assertThat(tree.get(3)).matches("-rwsr-xr-x " + user + " .* sub/tool");

        Printed one = capture(s -> listFiles(client.sessionId() + ":d/five.txt").run(client, s[0]));
        assertThat(one.out().lines().toList()).containsExactly(lines.get(0));
    }

    private static ListFilesCommand listFiles(String location) {
        return CommandLineTest.parse(ListFilesCommand.class, "ls-files", location);
    }
}
