package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CommandLineTest {

    private static CommandLine parse(String... args) throws UsageException {
        return CommandLine.parse(args);
    }

    private static CommandLine.Exec exec(String... args) throws UsageException {
        return (CommandLine.Exec) CommandLine.parse(args);
    }

    private static void assertUsageError(String message, String... args) {
        assertThatThrownBy(() -> CommandLine.parse(args))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining(message);
    }

    @Test
    void execWithDefaults() throws UsageException {
        CommandLine.Exec cl = exec("exec", "--", "echo", "hi");

        assertThat(cl.mode()).isEqualTo(CommandLine.Mode.EXEC);
        assertThat(cl.provider().name()).isEqualTo("local");
        assertThat(cl.workdir()).isNull();
        assertThat(cl.env()).isEmpty();
        assertThat(cl.timeout()).isNull();
        assertThat(cl.idleTimeout()).isNull();
        assertThat(cl.lifetime()).isNull();
        assertThat(cl.maxOutput()).isNull();
        assertThat(cl.background()).isFalse();
        assertThat(cl.command()).containsExactly("echo", "hi");
    }

    @Test
    void everyOptionInBothForms() throws UsageException {
        CommandLine.Exec cl = exec(
                "run",
                "--provider",
                "local",
                "--workdir=/tmp",
                "--env",
                "A=1",
                "--env=B=x=y",
                "--env",
                "EMPTY=",
                "--timeout",
                "10s",
                "--idle-timeout=500ms",
                "--lifetime",
                "1h",
                "--max-output",
                "42",
                "--",
                "sh",
                "-c",
                "exit 3");

        assertThat(cl.mode()).isEqualTo(CommandLine.Mode.RUN);
        assertThat(cl.workdir()).isEqualTo("/tmp");
        assertThat(cl.env()).containsExactly(Map.entry("A", "1"), Map.entry("B", "x=y"), Map.entry("EMPTY", ""));
        assertThat(cl.timeout()).isEqualTo(Duration.ofSeconds(10));
        assertThat(cl.idleTimeout()).isEqualTo(Duration.ofMillis(500));
        assertThat(cl.lifetime()).isEqualTo(Duration.ofHours(1));
        assertThat(cl.maxOutput()).isEqualTo(42L);
        assertThat(cl.command()).containsExactly("sh", "-c", "exit 3");
    }

    @Test
    void argumentsAfterTheDashesBelongToTheCommand() throws UsageException {
        CommandLine.Exec cl = exec("exec", "--", "grep", "--help", "-h", "--", "--timeout");

        assertThat(cl.mode()).isEqualTo(CommandLine.Mode.EXEC);
        assertThat(cl.command()).containsExactly("grep", "--help", "-h", "--", "--timeout");
    }

    @Test
    void relativeWorkdirIsMadeAbsolute() throws UsageException {
        CommandLine.Exec cl = exec("exec", "--workdir", "some/dir/..", "--", "true");

        assertThat(cl.workdir())
                .isEqualTo(Path.of("some").toAbsolutePath().normalize().toString());
    }

    @Test
    void helpAnywhereBeforeTheDashes() throws UsageException {
        assertThat(parse("--help")).isInstanceOf(CommandLine.Help.class);
        assertThat(parse("-h")).isInstanceOf(CommandLine.Help.class);
        assertThat(parse("help")).isInstanceOf(CommandLine.Help.class);
        assertThat(parse("exec", "--help")).isInstanceOf(CommandLine.Help.class);
        assertThat(parse("run", "--bogus", "-h", "--", "x")).isInstanceOf(CommandLine.Help.class);
        assertThat(parse("logs", "s", "--help")).isInstanceOf(CommandLine.Help.class);
        assertThat(parse("cp", "-h")).isInstanceOf(CommandLine.Help.class);
    }

    @Test
    void usageErrors() {
        assertUsageError(
                "missing subcommand: exec, run, create, ls, destroy, snapshot, logs, cp, ls-files, shell or serve");
        assertUsageError(
                "unknown subcommand 'sh'; expected exec, run, create, ls, destroy, snapshot, logs, cp, ls-files,"
                        + " shell or serve",
                "sh",
                "--",
                "ls");
        assertUsageError("unknown option '--verbose'", "--verbose");
        assertUsageError("unknown option '--bogus'", "exec", "--bogus", "--", "ls");
        assertUsageError("unknown option '--bogus'", "exec", "--bogus=1", "--", "ls");
        assertUsageError("missing -- before the command", "exec");
        assertUsageError("unexpected argument 'ls'", "exec", "ls");
        assertUsageError("missing command after --", "exec", "--");
        assertUsageError("missing command after --", "run", "--timeout", "1s", "--");
        assertUsageError("--timeout needs a value", "exec", "--timeout");
        assertUsageError("invalid duration for --timeout: 'soon'", "exec", "--timeout", "soon", "--", "ls");
        assertUsageError("invalid duration for --idle-timeout", "exec", "--idle-timeout=5", "--", "ls");
        assertUsageError("invalid --env 'NOVALUE'", "exec", "--env", "NOVALUE", "--", "ls");
        assertUsageError("invalid --env '=x'", "exec", "--env", "=x", "--", "ls");
        assertUsageError(
                "unknown provider 'k8s' (available: local, docker, remote)", "exec", "--provider", "k8s", "--", "ls");
        assertUsageError("--max-output applies to 'sandbox run' only", "exec", "--max-output", "5", "--", "ls");
        assertUsageError("invalid --max-output '5k'", "run", "--max-output", "5k", "--", "ls");
        assertUsageError("invalid --max-output '-1'", "run", "--max-output=-1", "--", "ls");
        assertUsageError("--workdir needs a directory", "exec", "--workdir=", "--", "ls");
        assertUsageError("--background applies to 'sandbox exec' only", "run", "--background", "--", "ls");
        assertUsageError("option --background takes no value", "exec", "--background=yes", "--", "ls");
        assertUsageError("invalid duration for --lifetime", "exec", "--lifetime", "forever", "--", "ls");
    }

    @Test
    void execInTheBackground() throws UsageException {
        CommandLine.Exec cl = exec("exec", "--background", "--lifetime", "2h", "--timeout=90m", "--", "sleep", "1");

        assertThat(cl.mode()).isEqualTo(CommandLine.Mode.EXEC);
        assertThat(cl.background()).isTrue();
        assertThat(cl.lifetime()).isEqualTo(Duration.ofHours(2));
        assertThat(cl.timeout()).isEqualTo(Duration.ofMinutes(90));
        assertThat(cl.command()).containsExactly("sleep", "1");
    }

    @Test
    void logsWithDefaultsAndWithEveryOption() throws UsageException {
        assertThat(parse("logs", "sess-1", "p-2"))
                .isEqualTo(new CommandLine.Logs(CommandLine.Provider.LOCAL, "sess-1", "p-2", 0, 0, false));
        assertThat(parse("logs", "--follow", "--from", "4096", "sess-1", "p-2"))
                .isEqualTo(new CommandLine.Logs(CommandLine.Provider.LOCAL, "sess-1", "p-2", 4096, 4096, true));
        assertThat(parse("logs", "sess-1", "--from=10,20", "p-2", "--provider", "local", "--follow"))
                .isEqualTo(new CommandLine.Logs(CommandLine.Provider.LOCAL, "sess-1", "p-2", 10, 20, true));
        // ids that look like options go after --
        assertThat(parse("logs", "--", "-odd", "--id"))
                .isEqualTo(new CommandLine.Logs(CommandLine.Provider.LOCAL, "-odd", "--id", 0, 0, false));
    }

    @Test
    void logsUsageErrors() {
        assertUsageError("sandbox logs needs a SESSION and a PROCESS id", "logs");
        assertUsageError("sandbox logs needs a SESSION and a PROCESS id", "logs", "sess-1");
        assertUsageError("unexpected argument 'extra'", "logs", "s", "p", "extra");
        assertUsageError("invalid --from 'x'", "logs", "--from", "x", "s", "p");
        assertUsageError("invalid --from '-5'", "logs", "--from=-5", "s", "p");
        assertUsageError("invalid --from ''", "logs", "--from", "1,", "s", "p");
        assertUsageError("invalid --from '2,3'", "logs", "--from", "1,2,3", "s", "p");
        assertUsageError("option --from needs a value", "logs", "s", "p", "--from");
        assertUsageError("option --follow takes no value", "logs", "--follow=1", "s", "p");
        assertUsageError("unknown option '--timeout'", "logs", "--timeout", "1s", "s", "p");
        assertUsageError("unknown provider 'kubernetes'", "logs", "--provider", "kubernetes", "s", "p");
        assertUsageError("PROCESS must not be empty", "logs", "s", " ");
    }

    @Test
    void copyInEitherDirection() throws UsageException {
        CommandLine.Copy up = (CommandLine.Copy) parse("cp", "build/app.jar", "sess-1:/srv/app.jar");
        assertThat(up.source()).isEqualTo(new CommandLine.Location(null, "build/app.jar"));
        assertThat(up.target()).isEqualTo(new CommandLine.Location("sess-1", "/srv/app.jar"));
        assertThat(up.session()).isEqualTo("sess-1");
        assertThat(up.provider().name()).isEqualTo("local");

        CommandLine.Copy down = (CommandLine.Copy) parse("cp", "--provider=local", "sess-1:out/report.csv", ".");
        assertThat(down.source()).isEqualTo(new CommandLine.Location("sess-1", "out/report.csv"));
        assertThat(down.target()).isEqualTo(new CommandLine.Location(null, "."));
        assertThat(down.session()).isEqualTo("sess-1");

        // a colon after a slash, or at the start, belongs to a local name
        CommandLine.Copy odd = (CommandLine.Copy) parse("cp", "./a:b", "s:c");
        assertThat(odd.source().inSession()).isFalse();
        assertThat(odd.source().path()).isEqualTo("./a:b");
        assertThat(((CommandLine.Copy) parse("cp", ":x", "s:y")).source().inSession())
                .isFalse();
    }

    @Test
    void copyUsageErrors() {
        assertUsageError("sandbox cp needs a SRC and a DST", "cp");
        assertUsageError("sandbox cp needs a SRC and a DST", "cp", "a");
        assertUsageError("unexpected argument 'c'", "cp", "a", "s:b", "c");
        assertUsageError("one of SRC and DST must be SESSION:PATH", "cp", "a", "b");
        assertUsageError("one of SRC and DST must be a local path", "cp", "s:a", "t:b");
        assertUsageError("missing path after 's:'", "cp", "a", "s:");
        assertUsageError("unknown option '--recursive'", "cp", "--recursive", "a", "s:b");
        assertUsageError("empty path", "cp", "", "s:b");
    }

    @Test
    void listFiles() throws UsageException {
        assertThat(parse("ls-files", "sess-1:/srv"))
                .isEqualTo(new CommandLine.ListFiles(
                        CommandLine.Provider.LOCAL, new CommandLine.Location("sess-1", "/srv")));
        assertThat(parse("ls-files", "sess-1:"))
                .isEqualTo(
                        new CommandLine.ListFiles(CommandLine.Provider.LOCAL, new CommandLine.Location("sess-1", ".")));

        assertUsageError("sandbox ls-files needs SESSION:PATH", "ls-files");
        assertUsageError("sandbox ls-files needs SESSION:PATH, got 'local/dir'", "ls-files", "local/dir");
        assertUsageError("unexpected argument 's:b'", "ls-files", "s:a", "s:b");
    }

    @Test
    void usageNamesEveryOptionAndExitCode() {
        for (String option : List.of(
                "--provider",
                "--workdir",
                "--env",
                "--timeout",
                "--idle-timeout",
                "--lifetime",
                "--max-output",
                "--background",
                "--from",
                "--follow",
                "--url",
                "--token-file",
                "--session",
                "--port",
                "--host",
                "--help")) {
            assertThat(CommandLine.USAGE).contains(option);
        }
        for (String subcommand : List.of(
                "sandbox exec",
                "sandbox run",
                "sandbox logs",
                "sandbox cp",
                "sandbox ls-files",
                "sandbox shell",
                "sandbox serve")) {
            assertThat(CommandLine.USAGE).contains(subcommand);
        }
        assertThat(CommandLine.USAGE).contains("124", "127", "500ms");
    }

    @Test
    void remoteProviderOptionsOnEverySessionCommand() throws UsageException {
        CommandLine.Provider remote =
                new CommandLine.Provider("remote", "http://127.0.0.1:7070", java.nio.file.Path.of("tok"), null);
        String[] r = {"--provider", "remote", "--url", "http://127.0.0.1:7070", "--token-file", "tok"};
        assertThat(exec(concat(new String[] {"exec"}, r, new String[] {"--", "ls"}))
                        .provider())
                .isEqualTo(remote);
        assertThat(parse(concat(new String[] {"logs"}, r, new String[] {"s", "p"})))
                .isEqualTo(new CommandLine.Logs(remote, "s", "p", 0, 0, false));
        assertThat(parse(concat(new String[] {"ls-files"}, r, new String[] {"s:"})))
                .isEqualTo(new CommandLine.ListFiles(remote, new CommandLine.Location("s", ".")));
        assertThat(parse(concat(new String[] {"shell"}, r, new String[] {"--session", "s"})))
                .isEqualTo(new CommandLine.Shell(remote, "s", List.of("/bin/sh")));

        assertUsageError(
                "--provider remote needs --url URL and --token-file FILE", "exec", "--provider", "remote", "--", "ls");
        assertUsageError(
                "--provider remote needs --url URL and --token-file FILE",
                "cp",
                "--provider",
                "remote",
                "--url",
                "http://h:1",
                "a",
                "s:b");
        assertUsageError("--url applies to --provider remote only", "exec", "--url", "http://h:1", "--", "ls");
        assertUsageError(
                "invalid --url 'ftp://h'",
                "ls-files",
                "--provider",
                "remote",
                "--url",
                "ftp://h",
                "--token-file",
                "t",
                "s:");
    }

    @Test
    void shellAndServe() throws UsageException {
        assertThat(parse("shell"))
                .isEqualTo(new CommandLine.Shell(CommandLine.Provider.LOCAL, null, List.of("/bin/sh")));
        assertThat(parse("shell", "--", "bash", "-l"))
                .isEqualTo(new CommandLine.Shell(CommandLine.Provider.LOCAL, null, List.of("bash", "-l")));
        assertUsageError("missing command after --", "shell", "--");
        assertUsageError("unexpected argument 'bash'", "shell", "bash");

        assertThat(parse("serve", "--token-file", "t"))
                .isEqualTo(new CommandLine.Serve(
                        "127.0.0.1", 7070, java.nio.file.Path.of("t"), CommandLine.Provider.LOCAL));
        assertThat(parse("serve", "--port=0", "--host", "0.0.0.0", "--provider", "local", "--token-file=t"))
                .isEqualTo(new CommandLine.Serve("0.0.0.0", 0, java.nio.file.Path.of("t"), CommandLine.Provider.LOCAL));
        assertThat(parse("serve", "--provider", "docker", "--image", "img:1", "--memory", "1g", "--token-file", "t")
                        .toString())
                .contains("img:1", "memory=1073741824");
        assertUsageError("sandbox serve needs --token-file FILE", "serve", "--port", "1");
        assertUsageError("invalid --port '70000'", "serve", "--port", "70000", "--token-file", "t");
        assertUsageError(
                "serves the local or the docker provider", "serve", "--provider", "remote", "--token-file", "t");
    }

    @Test
    void dockerProviderOptionsAndSessionCommands() throws UsageException {
        CommandLine.Exec exec = exec(
                "exec",
                "--provider",
                "docker",
                "--image",
                "python:3.12-slim",
                "--pull",
                "never",
                "--runtime",
                "runsc",
                "--network",
                "bridge",
                "--cpus",
                "1.5",
                "--memory",
                "512m",
                "--pids-limit",
                "64",
                "--",
                "python3");
        assertThat(exec.provider())
                .isEqualTo(new CommandLine.Provider(
                        "docker",
                        null,
                        null,
                        new CommandLine.Docker("python:3.12-slim", "never", "runsc", "bridge", 1.5, 512L << 20, 64L)));
        assertThat(exec("exec", "--provider", "docker", "--session", "docker-1", "--", "true")
                        .session())
                .isEqualTo("docker-1");
        assertThat(parse("create", "--provider", "docker", "--label", "a=b", "--label", "c=d", "--lifetime", "2m"))
                .isEqualTo(new CommandLine.Create(
                        new CommandLine.Provider(
                                "docker",
                                null,
                                null,
                                new CommandLine.Docker(
                                        CommandLine.Docker.DEFAULT_IMAGE, null, null, null, null, null, null)),
                        java.util.Map.of("a", "b", "c", "d"),
                        java.time.Duration.ofMinutes(2),
                        null,
                        null));
        assertThat(parse("destroy", "--provider", "docker", "s1", "s2"))
                .isEqualTo(new CommandLine.Destroy(
                        ((CommandLine.Create) parse("create", "--provider", "docker")).provider(),
                        List.of("s1", "s2")));
        assertThat(parse("ls", "--label", "k=v")).isInstanceOf(CommandLine.ListSessions.class);
        assertThat(parse("snapshot", "s1")).isInstanceOf(CommandLine.Snapshot.class);

        assertUsageError("--image applies to --provider docker only", "exec", "--image", "x", "--", "ls");
        assertUsageError("invalid --pull 'sometimes'", "create", "--provider", "docker", "--pull", "sometimes");
        assertUsageError("invalid --runtime 'kata'", "create", "--provider", "docker", "--runtime", "kata");
        assertUsageError("invalid --network 'host'", "create", "--provider", "docker", "--network", "host");
        assertUsageError("invalid --cpus '0'", "create", "--provider", "docker", "--cpus", "0");
        assertUsageError("invalid --memory '1x'", "create", "--provider", "docker", "--memory", "1x");
        assertUsageError("invalid --label 'novalue'", "create", "--provider", "docker", "--label", "novalue");
        assertUsageError("sandbox destroy needs at least one SESSION id", "destroy", "--provider", "docker");
        assertUsageError("sandbox snapshot needs a SESSION id", "snapshot");
        assertUsageError(
                "--session and --background do not go together",
                "exec",
                "--session",
                "s",
                "--background",
                "--",
                "true");
        assertUsageError("with --session the session exists", "exec", "--session", "s", "--env", "A=1", "--", "true");
    }

    private static String[] concat(String[]... parts) {
        return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream).toArray(String[]::new);
    }
}
