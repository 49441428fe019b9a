package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.ParseResult;

/**
 * The command line as the CLI reads it: what each subcommand gets from it, and the usage errors, which exit 2 with a
 * first line naming what is wrong, then the usage.
 */
class CommandLineTest {

    /** Parses and checks {@code args} as the CLI does, without running anything. */
    static <T extends Subcommand> T parse(Class<T> type, String... args) {
        PrintStream nowhere = new PrintStream(OutputStream.nullOutputStream(), false, StandardCharsets.UTF_8);
        ParseResult parsed = new SandboxCommand(nowhere, nowhere).commandLine().parseArgs(args);
        T subcommand = type.cast(parsed.subcommand().commandSpec().userObject());
        subcommand.validate();
        return subcommand;
    }

    record Outcome(int code, String out, String err) {
        String firstErrorLine() {
            return err.lines().findFirst().orElse("");
        }
    }

    /** Runs the CLI in-process, as {@code SandboxCliTest} does. */
    static Outcome cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, false, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, false, StandardCharsets.UTF_8)) {
            code = SandboxCli.run(args, o, e);
        }
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static final List<String> SUBCOMMANDS = List.of(
            "exec",
            "run",
            "create",
            "ls",
            "destroy",
            "snapshot",
            "logs",
            "cp",
            "ls-files",
            "port-forward",
            "top",
            "shell",
            "serve",
            "mcp");

    private static void assertUsageError(String message, String... args) {
        Outcome o = cli(args);
        String shown = String.join(" ", args);
        assertThat(o.code()).as(shown).isEqualTo(2);
        assertThat(o.out()).as(shown).isEmpty();
        assertThat(o.firstErrorLine()).as(shown).startsWith("sandbox: ").contains(message);
        // the error, a hint, the synopsis and where the help is; never the whole help
        assertThat(o.err().lines()).as(shown).hasSizeBetween(2, 6);
        boolean subcommand = args.length > 0 && SUBCOMMANDS.contains(args[0]);
        assertThat(o.err()).as(shown).endsWith("\nsee 'sandbox help" + (subcommand ? " " + args[0] : "") + "'\n");
        assertThat(o.err()).as(shown).doesNotContain("--help");
    }

    private static void assertHelp(String usage, String... args) {
        Outcome o = cli(args);
        String shown = String.join(" ", args);
        assertThat(o.code()).as(shown).isZero();
        assertThat(o.err()).as(shown).isEmpty();
        assertThat(o.out()).as(shown).startsWith("usage: " + usage);
    }

    private static ExecCommand exec(String... args) {
        return parse(ExecCommand.class, args);
    }

    /** What {@code sandbox logs} got: provider, session, process, offsets, follow. */
    private static List<Object> logs(String... args) {
        LogsCommand logs = parse(LogsCommand.class, args);
        return List.of(logs.provider, logs.session, logs.process, logs.from, logs.follow);
    }

    private static List<Object> logs(Provider provider, String session, String process, long out, long err, boolean f) {
        return List.of(provider, session, process, new LogsCommand.Offsets(out, err), f);
    }

    @Test
    void execWithDefaults() {
        ExecCommand cl = exec("exec", "--", "echo", "hi");

        assertThat(cl.provider.name()).isEqualTo("local");
        assertThat(cl.workdir).isNull();
        assertThat(cl.environment()).isEmpty();
        assertThat(cl.timeout).isNull();
        assertThat(cl.idleTimeout).isNull();
        assertThat(cl.lifetime).isNull();
        assertThat(cl.background).isFalse();
        assertThat(cl.session).isNull();
        assertThat(cl.command).containsExactly("echo", "hi");
    }

    @Test
    void everyOptionInBothForms() {
        RunCommand cl = parse(
                RunCommand.class,
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

        assertThat(cl.workdir).isEqualTo("/tmp");
        assertThat(cl.environment())
                .containsExactly(Map.entry("A", "1"), Map.entry("B", "x=y"), Map.entry("EMPTY", ""));
        assertThat(cl.timeout).isEqualTo(Duration.ofSeconds(10));
        assertThat(cl.idleTimeout).isEqualTo(Duration.ofMillis(500));
        assertThat(cl.lifetime).isEqualTo(Duration.ofHours(1));
        assertThat(cl.maxOutput).isEqualTo(42L);
        assertThat(cl.execOptions().maxOutputBytes()).isEqualTo(42L);
        assertThat(cl.command).containsExactly("sh", "-c", "exit 3");
    }

    @Test
    void aRepeatedOptionKeepsItsLastValue() {
        ExecCommand cl = exec("exec", "--timeout", "1s", "--timeout=2s", "--env", "A=1", "--env", "A=2", "--", "true");

        assertThat(cl.timeout).isEqualTo(Duration.ofSeconds(2));
        assertThat(cl.environment()).containsExactly(Map.entry("A", "2"));
    }

    @Test
    void argumentsAfterTheDashesBelongToTheCommand() {
        ExecCommand cl = exec("exec", "--", "grep", "--help", "-h", "--", "--timeout", "@file");

        assertThat(cl.command).containsExactly("grep", "--help", "-h", "--", "--timeout", "@file");
    }

    @Test
    void relativeWorkdirIsMadeAbsolute() {
        ExecCommand cl = exec("exec", "--workdir", "some/dir/..", "--", "true");

        assertThat(cl.workdir)
                .isEqualTo(Path.of("some").toAbsolutePath().normalize().toString());
    }

    @Test
    void helpAnywhereBeforeTheDashes() {
        for (String[] args : new String[][] {{"--help"}, {"-h"}, {"help"}}) {
            Outcome o = cli(args);
            assertThat(o.code()).isZero();
            assertThat(o.out()).isEqualTo(SandboxCommand.USAGE);
            assertThat(o.err()).isEmpty();
        }
        // the CLI prints those without picocli, for speed; picocli's own top-level help is the same text
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (PrintStream stream = new PrintStream(printed, true, StandardCharsets.UTF_8)) {
            assertThat(new SandboxCommand(stream, stream).commandLine().execute("--help"))
                    .isZero();
        }
        assertThat(printed.toString(StandardCharsets.UTF_8)).isEqualTo(SandboxCommand.USAGE);
        // a subcommand's help is its own
        assertHelp("sandbox exec [OPTIONS]", "exec", "--help");
        assertHelp("sandbox run [OPTIONS]", "run", "--bogus", "-h", "--", "x");
        assertHelp("sandbox logs [PROVIDER]", "logs", "s", "--help");
        assertHelp("sandbox cp [PROVIDER] [-r] SRC DST", "cp", "-h");
        assertHelp("sandbox ls-files [PROVIDER] SESSION:PATH", "help", "ls-files");
    }

    @Test
    void usageErrors() {
        assertUsageError(
                "missing subcommand: exec, run, create, ls, destroy, snapshot, logs, cp, ls-files, port-forward, top,"
                        + " shell, serve or mcp");
        assertUsageError(
                "unknown subcommand 'sh'; expected exec, run, create, ls, destroy, snapshot, logs, cp, ls-files,"
                        + " port-forward, top, shell, serve or mcp",
                "sh",
                "--",
                "ls");
        assertUsageError("Unknown option: '--verbose'", "--verbose");
        assertUsageError("Unknown option: '--bogus'", "exec", "--bogus", "--", "ls");
        assertUsageError("Unknown option: '--bogus=1'", "exec", "--bogus=1", "--", "ls");
        assertUsageError("missing -- before the command", "exec");
        assertUsageError("unexpected argument 'ls'", "exec", "ls");
        assertUsageError("missing command after --", "exec", "--");
        assertUsageError("missing command after --", "run", "--timeout", "1s", "--");
        assertUsageError("Missing required parameter for option '--timeout'", "exec", "--timeout");
        assertUsageError(
                "Invalid value for option '--timeout': 'soon' is not a duration (use a whole number and a unit:"
                        + " 500ms, 10s, 2m or 1h)",
                "exec",
                "--timeout",
                "soon",
                "--",
                "ls");
        assertUsageError(
                "Invalid value for option '--idle-timeout': '5' is not a duration",
                "exec",
                "--idle-timeout=5",
                "--",
                "ls");
        assertUsageError(
                "Invalid value for option '--timeout': duration must be positive, got '0s'",
                "exec",
                "--timeout",
                "0s",
                "--",
                "ls");
        assertUsageError(
                "Invalid value for option '--env' (NAME=VALUE): expected a name, '=' and a value, got 'NOVALUE'",
                "exec",
                "--env",
                "NOVALUE",
                "--",
                "ls");
        assertUsageError("Invalid value for option '--env' (NAME=VALUE)", "exec", "--env", "=x", "--", "ls");
        assertUsageError("got '=x'", "exec", "--env", "=x", "--", "ls");
        assertUsageError(
                "Invalid value for option '--provider': expected one of local, docker, kubernetes, remote, got 'k8s'",
                "exec",
                "--provider",
                "k8s",
                "--",
                "ls");
        assertUsageError("--max-output applies to 'sandbox run' only", "exec", "--max-output", "5", "--", "ls");
        assertUsageError(
                "Invalid value for option '--max-output': expected a whole number, got '5k'",
                "run",
                "--max-output",
                "5k",
                "--",
                "ls");
        assertUsageError(
                "Invalid value for option '--max-output': expected a whole number, got '-1'",
                "run",
                "--max-output=-1",
                "--",
                "ls");
        assertUsageError("Invalid value for option '--workdir': needs a directory", "exec", "--workdir=", "--", "ls");
        assertUsageError("--background applies to 'sandbox exec' only", "run", "--background", "--", "ls");
        assertUsageError(
                "option '--background' should be specified without 'yes' parameter",
                "exec",
                "--background=yes",
                "--",
                "ls");
        assertUsageError(
                "Invalid value for option '--lifetime': 'forever' is not a duration",
                "exec",
                "--lifetime",
                "forever",
                "--",
                "ls");
    }

    @Test
    void theLauncherReadsEveryFormOfJavaSpecificationVersion() {
        assertThat(Launcher.feature("1.8")).isEqualTo(8);
        assertThat(Launcher.feature("17")).isEqualTo(17);
        assertThat(Launcher.feature("21")).isEqualTo(21);
        assertThat(Launcher.feature("26-ea")).isEqualTo(26);
        assertThat(Launcher.feature("")).isZero(); // unreadable: the launcher hands over and lets the JVM decide
        assertThat(Launcher.tooOld("17.0.15", "/opt/jdk-17"))
                .isEqualTo("sandbox needs Java 21 or newer; this is Java 17.0.15 (/opt/jdk-17).\nSet JAVA_HOME to a JDK"
                        + " 21 or newer and run \"$JAVA_HOME/bin/java\" -jar sandbox.jar (the README's sandbox wrapper"
                        + " does), or put that JDK's bin first on PATH.");
    }

    @Test
    void typosGetSuggestions() {
        Outcome subcommand = cli("exce", "--", "true");
        assertThat(subcommand.code()).isEqualTo(2);
        assertThat(subcommand.firstErrorLine()).startsWith("sandbox: unknown subcommand 'exce'");
        assertThat(subcommand.err().lines().toList().get(1)).isEqualTo("did you mean 'sandbox exec'?");

        Outcome option = cli("exec", "--timout", "1s", "--", "true");
        assertThat(option.code()).isEqualTo(2);
        assertThat(option.firstErrorLine()).isEqualTo("sandbox: Unknown option: '--timout'");
        assertThat(option.err().lines().toList().get(1)).isEqualTo("did you mean '--timeout'?");

        // the CLI's own suggestion, for a value outside a fixed set, in the same words
        Outcome value = cli("ls", "--provider", "dokcer");
        assertThat(value.code()).isEqualTo(2);
        assertThat(value.err().lines().toList().get(1)).isEqualTo("did you mean 'docker'?");
    }

    /** A usage error fits on a screen: what is wrong, a hint, the synopsis and where the help is, all on stderr. */
    @Test
    void usageErrorsAreAFewLinesNamingTheBadValueAndTheCommand() {
        assertThat(cli("exce", "--", "true")).isEqualTo(new Outcome(2, "", """
                        sandbox: unknown subcommand 'exce'; expected exec, run, create, ls, destroy, snapshot, logs, \
                        cp, ls-files, port-forward, top, shell, serve or mcp
                        did you mean 'sandbox exec'?
                        see 'sandbox help'
                        """));
        assertThat(cli("exec", "--timout", "1s", "--", "true")).isEqualTo(new Outcome(2, "", """
                        sandbox: Unknown option: '--timout'
                        did you mean '--timeout'?
                        usage: sandbox exec [OPTIONS] [--session SESSION] [--background [--label K=V]...] -- CMD \
                        [ARG...]
                        see 'sandbox help exec'
                        """));
        assertThat(cli("destroy", "--provider", "docker")).isEqualTo(new Outcome(2, "", """
                        sandbox: Missing required parameter: 'SESSION'
                        usage: sandbox destroy [PROVIDER] SESSION...
                        see 'sandbox help destroy'
                        """));
        assertThat(cli("create", "--provider", "dokcer")).isEqualTo(new Outcome(2, "", """
                        sandbox: Invalid value for option '--provider': expected one of local, docker, kubernetes, \
                        remote, got 'dokcer'
                        did you mean 'docker'?
                        usage: sandbox create [PROVIDER] [--label K=V]... [--lifetime D] [--idle-timeout D]
                                              [--from-snapshot REF] [--name NAME]
                        see 'sandbox help create'
                        """));
        assertThat(cli("exec", "--timeout", "soon", "--", "true").err())
                .startsWith("sandbox: Invalid value for option '--timeout': 'soon' is not a duration")
                .endsWith("\nsee 'sandbox help exec'\n")
                .hasLineCount(3);
        // the help is there when asked for
        assertThat(cli("exec", "--help").out().lines().count()).isGreaterThan(20);
    }

    @Test
    void execInTheBackground() {
        ExecCommand cl = exec("exec", "--background", "--lifetime", "2h", "--timeout=90m", "--", "sleep", "1");

        assertThat(cl.background).isTrue();
        assertThat(cl.lifetime).isEqualTo(Duration.ofHours(2));
        assertThat(cl.timeout).isEqualTo(Duration.ofMinutes(90));
        assertThat(cl.command).containsExactly("sleep", "1");
    }

    @Test
    void logsWithDefaultsAndWithEveryOption() {
        assertThat(logs("logs", "sess-1", "p-2")).isEqualTo(logs(Provider.LOCAL, "sess-1", "p-2", 0, 0, false));
        assertThat(logs("logs", "--follow", "--from", "4096", "sess-1", "p-2"))
                .isEqualTo(logs(Provider.LOCAL, "sess-1", "p-2", 4096, 4096, true));
        assertThat(logs("logs", "sess-1", "--from=10,20", "p-2", "--provider", "local", "--follow"))
                .isEqualTo(logs(Provider.LOCAL, "sess-1", "p-2", 10, 20, true));
        // ids that look like options go after --
        assertThat(logs("logs", "--", "-odd", "--id")).isEqualTo(logs(Provider.LOCAL, "-odd", "--id", 0, 0, false));
    }

    @Test
    void logsFromPerStreamInTheNamedFormsAndTheirErrors() {
        assertThat(logs("logs", "--from", "stdout=10,stderr=20", "s", "p"))
                .isEqualTo(logs(Provider.LOCAL, "s", "p", 10, 20, false));
        assertThat(logs("logs", "--from=stderr=7", "s", "p")).isEqualTo(logs(Provider.LOCAL, "s", "p", 0, 7, false));
        assertThat(logs("logs", "--from=stderr=7,stdout=3", "s", "p"))
                .isEqualTo(logs(Provider.LOCAL, "s", "p", 3, 7, false));
        assertThat(logs("logs", "--from-stdout", "5", "--from-stderr=9", "s", "p"))
                .isEqualTo(logs(Provider.LOCAL, "s", "p", 5, 9, false));
        assertThat(logs("logs", "--from-stderr", "9", "s", "p")).isEqualTo(logs(Provider.LOCAL, "s", "p", 0, 9, false));

        assertUsageError(
                "Invalid value for option '--from': expected stdout=OUT and/or stderr=ERR, got 'out=1' in 'out=1'",
                "logs",
                "--from",
                "out=1",
                "s",
                "p");
        assertUsageError(
                "Invalid value for option '--from': stdout is given twice in 'stdout=1,stdout=2'",
                "logs",
                "--from",
                "stdout=1,stdout=2",
                "s",
                "p");
        assertUsageError(
                "Invalid value for option '--from': expected a whole number, got 'stdout=x'",
                "logs",
                "--from",
                "stdout=x",
                "s",
                "p");
        assertUsageError(
                "--from and --from-stdout/--from-stderr do not go together",
                "logs",
                "--from",
                "1",
                "--from-stderr",
                "2",
                "s",
                "p");
    }

    @Test
    void execInASessionTakesTheCommandsOwnEnvAndWorkdir() {
        ExecCommand cl = exec("exec", "--session", "s-1", "--env", "A=1", "--workdir", "/srv/app", "--", "env");

        assertThat(cl.execOptions().env()).containsExactly(Map.entry("A", "1"));
        assertThat(cl.execOptions().cwd()).contains("/srv/app");

        assertUsageError(
                "--workdir with --session is a directory in the session and must be absolute, got 'rel'",
                "exec",
                "--session",
                "s-1",
                "--workdir",
                "rel",
                "--",
                "pwd");
        assertUsageError(
                "--lifetime sets up a new session; with --session the session exists",
                "exec",
                "--session",
                "s-1",
                "--lifetime",
                "1m",
                "--",
                "pwd");
    }

    @Test
    void labelsGoWithBackgroundOnly() {
        ExecCommand cl = exec("exec", "--background", "--label", "team=search", "--label=job=7", "--", "sleep", "1");
        assertThat(cl.labels).containsExactly(new Values.KeyValue("team", "search"), new Values.KeyValue("job", "7"));

        assertUsageError("--label labels the session --background makes", "exec", "--label", "a=b", "--", "true");
    }

    @Test
    void backgroundGoesWithAnExistingSession() {
        ExecCommand cl = exec("exec", "--session", "s-1", "--background", "--env", "A=1", "--", "sleep", "1");
        assertThat(cl.background).isTrue();
        assertThat(cl.session).isEqualTo("s-1");
        assertThat(cl.execOptions().env()).containsEntry("A", "1"); // the process's own, not a new session's
    }

    @Test
    void portForwardWithDefaultsAndWithEveryOption() throws Exception {
        PortForwardCommand plain = parse(PortForwardCommand.class, "port-forward", "sess-1", "8080");
        assertThat(plain.session).isEqualTo("sess-1");
        assertThat(plain.port).isEqualTo(8080);
        assertThat(plain.localPort).isZero();
        assertThat(plain.address).isEqualTo(java.net.InetAddress.getByName("127.0.0.1"));
        assertThat(plain.provider).isEqualTo(Provider.LOCAL);

        PortForwardCommand all = parse(
                PortForwardCommand.class,
                "port-forward",
                "--provider",
                "docker",
                "--image",
                "busybox:1",
                "--runtime",
                "runsc",
                "--local-port",
                "18080",
                "--address",
                "0.0.0.0",
                "sess-2",
                "65535");
        assertThat(all.port).isEqualTo(65535);
        assertThat(all.localPort).isEqualTo(18080);
        assertThat(all.address.isAnyLocalAddress()).isTrue();
        assertThat(all.provider.name()).isEqualTo("docker");
        assertThat(all.provider.docker().image()).isEqualTo("busybox:1");
        assertThat(parse(PortForwardCommand.class, "port-forward", "--address", "::1", "s", "1").address)
                .isEqualTo(java.net.InetAddress.getByName("::1"));
        assertThat(parse(PortForwardCommand.class, "port-forward", "--address", "[::]", "s", "1")
                        .address
                        .isAnyLocalAddress())
                .isTrue();
        assertThat(parse(PortForwardCommand.class, "port-forward", "--address", "localhost", "s", "1")
                        .address
                        .isLoopbackAddress())
                .isTrue();
    }

    @Test
    void portForwardUsageErrorsNameTheFieldAndTheValue() {
        assertUsageError("Missing required parameters: 'SESSION', 'PORT'", "port-forward");
        assertUsageError("Missing required parameter: 'PORT'", "port-forward", "sess-1");
        for (String bad : new String[] {"0", "70000", "abc", "-1", "65536"}) {
            assertUsageError(
                    "Invalid value for positional parameter at index 1 (PORT): expected a port from 1 to 65535, got '"
                            + bad + "'",
                    "port-forward",
                    "sess-1",
                    "--",
                    bad);
        }
        assertUsageError(
                "Invalid value for option '--local-port': expected 0 to 65535, got '70000'",
                "port-forward",
                "--local-port",
                "70000",
                "s",
                "80");
        assertUsageError(
                "Invalid value for option '--address': expected an IP address such as 127.0.0.1, 0.0.0.0 or ::1 (or"
                        + " localhost), got 'example.com'",
                "port-forward",
                "--address",
                "example.com",
                "s",
                "80");
        assertUsageError(
                "Invalid value for option '--address': expected an IP address",
                "port-forward",
                "--address",
                "256.1.1.1",
                "s",
                "80");
        assertUsageError("Unmatched argument at index 3: 'extra'", "port-forward", "s", "80", "extra");
    }

    @Test
    void logsUsageErrors() {
        assertUsageError("Missing required parameters: 'SESSION', 'PROCESS'", "logs");
        assertUsageError("Missing required parameter: 'PROCESS'", "logs", "sess-1");
        assertUsageError("Unmatched argument at index 3: 'extra'", "logs", "s", "p", "extra");
        assertUsageError(
                "Invalid value for option '--from': expected a whole number, got 'x'", "logs", "--from", "x", "s", "p");
        assertUsageError(
                "Invalid value for option '--from': expected a whole number, got '-5'", "logs", "--from=-5", "s", "p");
        assertUsageError(
                "Invalid value for option '--from': expected a whole number, got '1,'",
                "logs",
                "--from",
                "1,",
                "s",
                "p");
        assertUsageError(
                "Invalid value for option '--from': expected OFFSET, OUT,ERR or stdout=OUT,stderr=ERR, got '1,2,3'",
                "logs",
                "--from",
                "1,2,3",
                "s",
                "p");
        assertUsageError("Missing required parameter for option '--from'", "logs", "s", "p", "--from");
        assertUsageError("option '--follow' should be specified without '1' parameter", "logs", "--follow=1", "s", "p");
        assertUsageError("Unknown options: '--timeout'", "logs", "--timeout", "1s", "s", "p");
        assertUsageError(
                "Invalid value for option '--provider': expected one of local, docker, kubernetes, remote, got 'k8s'",
                "logs",
                "--provider",
                "k8s",
                "s",
                "p");
        assertUsageError(
                "Invalid value for positional parameter at index 1 (PROCESS): must not be empty", "logs", "s", " ");
    }

    @Test
    void copyInEitherDirection() {
        CopyCommand up = parse(CopyCommand.class, "cp", "build/app.jar", "sess-1:/srv/app.jar");
        assertThat(up.source).isEqualTo(new Location(null, "build/app.jar"));
        assertThat(up.target).isEqualTo(new Location("sess-1", "/srv/app.jar"));
        assertThat(up.session()).isEqualTo("sess-1");
        assertThat(up.provider.name()).isEqualTo("local");

        CopyCommand down = parse(CopyCommand.class, "cp", "--provider=local", "sess-1:out/report.csv", ".");
        assertThat(down.source).isEqualTo(new Location("sess-1", "out/report.csv"));
        assertThat(down.target).isEqualTo(new Location(null, "."));
        assertThat(down.session()).isEqualTo("sess-1");

        // a colon after a slash, or at the start, belongs to a local name
        CopyCommand odd = parse(CopyCommand.class, "cp", "./a:b", "s:c");
        assertThat(odd.source.inSession()).isFalse();
        assertThat(odd.source.path()).isEqualTo("./a:b");
        assertThat(parse(CopyCommand.class, "cp", ":x", "s:y").source.inSession())
                .isFalse();
    }

    @Test
    void copyUsageErrors() {
        assertUsageError("Missing required parameters: 'SRC', 'DST'", "cp");
        assertUsageError("Missing required parameter: 'DST'", "cp", "a");
        assertUsageError("Unmatched argument at index 3: 'c'", "cp", "a", "s:b", "c");
        assertUsageError("one of SRC and DST must be SESSION:PATH", "cp", "a", "b");
        assertUsageError("one of SRC and DST must be a local path", "cp", "s:a", "t:b");
        assertUsageError("missing path after 's:'", "cp", "a", "s:");
        assertUsageError("Unknown option: '--bogus'", "cp", "--bogus", "a", "s:b");
        assertUsageError("Invalid value for positional parameter at index 0 (SRC): empty path", "cp", "", "s:b");
    }

    @Test
    void listFiles() {
        assertThat(parse(ListFilesCommand.class, "ls-files", "sess-1:/srv").location)
                .isEqualTo(new Location("sess-1", "/srv"));
        ListFilesCommand workdir = parse(ListFilesCommand.class, "ls-files", "sess-1:");
        assertThat(workdir.location).isEqualTo(new Location("sess-1", "."));
        assertThat(workdir.provider).isEqualTo(Provider.LOCAL);

        assertUsageError("Missing required parameter: 'SESSION:PATH'", "ls-files");
        assertUsageError("expected SESSION:PATH, got 'local/dir'", "ls-files", "local/dir");
        assertUsageError("Unmatched argument at index 2: 's:b'", "ls-files", "s:a", "s:b");
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
                "--help",
                "--version")) {
            assertThat(SandboxCommand.USAGE).contains(option);
        }
        for (String subcommand : List.of(
                "sandbox exec",
                "sandbox run",
                "sandbox logs",
                "sandbox cp",
                "sandbox ls-files",
                "sandbox shell",
                "sandbox serve",
                "sandbox generate-completion",
                "sandbox help")) {
            assertThat(SandboxCommand.USAGE).contains(subcommand);
        }
        assertThat(SandboxCommand.USAGE).contains("124", "127", "500ms");
    }

    @Test
    void eachSubcommandsHelpNamesItsOptions() {
        Map<String, List<String>> options = Map.of(
                "exec",
                List.of("--provider", "--image", "--workdir", "--env", "--timeout", "--lifetime", "--background"),
                "run",
                List.of("--provider", "--url", "--session", "--idle-timeout", "--max-output"),
                "logs",
                List.of("--provider", "--token-file", "--from", "--follow", "SESSION", "PROCESS"),
                "create",
                List.of("--provider", "--memory", "--label", "--lifetime", "--idle-timeout", "--from-snapshot"),
                "serve",
                List.of("--provider", "--host", "--port", "--token-file", "--pids-limit"),
                "shell",
                List.of("--provider", "--session", "CMD"));
        options.forEach((subcommand, names) -> {
            Outcome o = cli(subcommand, "--help");
            assertThat(o.code()).isZero();
            assertThat(o.out()).as(subcommand).contains(names).contains("-h, --help");
        });
        // each accepts the other's option only to say where it belongs, and does not list it
        assertThat(cli("exec", "--help").out()).doesNotContain("--max-output");
        assertThat(cli("run", "--help").out()).doesNotContain("--background");
    }

    @Test
    void remoteProviderOptionsOnEverySessionCommand() {
        Provider remote = new Provider("remote", "http://127.0.0.1:7070", Path.of("tok"), null, null);
        String[] r = {"--provider", "remote", "--url", "http://127.0.0.1:7070", "--token-file", "tok"};
        assertThat(exec(concat(new String[] {"exec"}, r, new String[] {"--", "ls"})).provider)
                .isEqualTo(remote);
        assertThat(logs(concat(new String[] {"logs"}, r, new String[] {"s", "p"})))
                .isEqualTo(logs(remote, "s", "p", 0, 0, false));
        ListFilesCommand ls = parse(ListFilesCommand.class, concat(new String[] {"ls-files"}, r, new String[] {"s:"}));
        assertThat(ls.provider).isEqualTo(remote);
        assertThat(ls.location).isEqualTo(new Location("s", "."));
        ShellCommand shell =
                parse(ShellCommand.class, concat(new String[] {"shell"}, r, new String[] {"--session", "s"}));
        assertThat(List.of(shell.provider, shell.session, shell.command))
                .isEqualTo(List.of(remote, "s", List.of("/bin/sh")));

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
                "Invalid value for option '--url': expected http://HOST:PORT, got 'ftp://h'",
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
    void shellAndServe() {
        ShellCommand shell = parse(ShellCommand.class, "shell");
        assertThat(List.of(shell.provider, shell.command)).isEqualTo(List.of(Provider.LOCAL, List.of("/bin/sh")));
        assertThat(shell.session).isNull();
        assertThat(parse(ShellCommand.class, "shell", "--", "bash", "-l").command)
                .containsExactly("bash", "-l");
        assertUsageError("missing command after --", "shell", "--");
        assertUsageError("unexpected argument 'bash'", "shell", "bash");

        ServeCommand serve = parse(ServeCommand.class, "serve", "--token-file", "t");
        assertThat(List.of(serve.host, serve.port, serve.tokenFile, serve.served))
                .isEqualTo(List.of("127.0.0.1", 7070, Path.of("t"), Provider.LOCAL));
        serve = parse(
                ServeCommand.class, "serve", "--port=0", "--host", "0.0.0.0", "--provider", "local", "--token-file=t");
        assertThat(List.of(serve.host, serve.port, serve.tokenFile, serve.served))
                .isEqualTo(List.of("0.0.0.0", 0, Path.of("t"), Provider.LOCAL));
        assertThat(parse(
                                ServeCommand.class,
                                "serve",
                                "--provider",
                                "docker",
                                "--image",
                                "img:1",
                                "--memory",
                                "1g",
                                "--token-file",
                                "t")
                        .served
                        .toString())
                .contains("img:1", "memory=1073741824");
        assertUsageError("Missing required option: '--token-file=FILE'", "serve", "--port", "1");
        assertUsageError(
                "Invalid value for option '--port': expected 0 to 65535, got '70000'",
                "serve",
                "--port",
                "70000",
                "--token-file",
                "t");
        assertUsageError(
                "serves the local, the docker or the kubernetes provider",
                "serve",
                "--provider",
                "remote",
                "--token-file",
                "t");
        assertUsageError(
                "--image applies to --provider docker or kubernetes only",
                "serve",
                "--image",
                "x",
                "--token-file",
                "t");
        serve = parse(
                ServeCommand.class, "serve", "--mcp-max-sessions", "0", "--mcp-timeout", "5s", "--token-file", "t");
        assertThat(List.of(serve.mcpMaxSessions, serve.mcpTimeout)).isEqualTo(List.of(0L, Duration.ofSeconds(5)));
        assertThat(parse(ServeCommand.class, "serve", "--token-file", "t").mcpMaxSessions)
                .isEqualTo(8);
    }

    @Test
    void dockerProviderOptionsAndSessionCommands() {
        ExecCommand exec = exec(
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
                "--container-lease",
                "30s",
                "--",
                "python3");
        assertThat(exec.provider)
                .isEqualTo(new Provider(
                        "docker",
                        null,
                        null,
                        null,
                        new Provider.Docker(
                                "python:3.12-slim",
                                "never",
                                "runsc",
                                "bridge",
                                1.5,
                                512L << 20,
                                64L,
                                java.time.Duration.ofSeconds(30))));
        assertThat(exec("exec", "--provider", "docker", "--session", "docker-1", "--", "true").session)
                .isEqualTo("docker-1");
        CreateCommand create = parse(
                CreateCommand.class,
                "create",
                "--provider",
                "docker",
                "--label",
                "a=b",
                "--label",
                "c=d",
                "--lifetime",
                "2m");
        Provider docker = new Provider(
                "docker",
                null,
                null,
                null,
                new Provider.Docker(Provider.Docker.DEFAULT_IMAGE, null, null, null, null, null, null, null));
        assertThat(create.provider).isEqualTo(docker);
        assertThat(create.labels).containsExactly(new Values.KeyValue("a", "b"), new Values.KeyValue("c", "d"));
        assertThat(create.lifetime).isEqualTo(Duration.ofMinutes(2));
        assertThat(create.idleTimeout).isNull();
        assertThat(create.fromSnapshot).isNull();
        DestroyCommand destroy = parse(DestroyCommand.class, "destroy", "--provider", "docker", "s1", "s2");
        assertThat(destroy.provider).isEqualTo(docker);
        assertThat(destroy.sessions).containsExactly("s1", "s2");
        assertThat(parse(ListSessionsCommand.class, "ls", "--label", "k=v").labels())
                .isEqualTo(Map.of("k", "v"));
        assertThat(parse(SnapshotCommand.class, "snapshot", "s1").args).containsExactly("s1");

        assertUsageError("--image applies to --provider docker or kubernetes only", "exec", "--image", "x", "--", "ls");
        assertUsageError(
                "Invalid value for option '--pull-policy': expected one of always, if-not-present, never, got 'sometimes'",
                "create",
                "--provider",
                "docker",
                "--pull",
                "sometimes");
        assertUsageError(
                "Invalid value for option '--runtime': expected one of runc, runsc, got 'kata'",
                "create",
                "--provider",
                "docker",
                "--runtime",
                "kata");
        assertUsageError(
                "Invalid value for option '--network': expected one of none, bridge, got 'host'",
                "create",
                "--provider",
                "docker",
                "--network",
                "host");
        assertUsageError(
                "Invalid value for option '--cpus': expected a positive number such as 0.5, got '0'",
                "create",
                "--provider",
                "docker",
                "--cpus",
                "0");
        assertUsageError(
                "Invalid value for option '--memory': expected a number of bytes with an optional k, m or g suffix,"
                        + " got '1x'",
                "create",
                "--provider",
                "docker",
                "--memory",
                "1x");
        assertUsageError(
                "Invalid value for option '--label' (K=V): expected a name, '=' and a value, got 'novalue'",
                "create",
                "--provider",
                "docker",
                "--label",
                "novalue");
        assertUsageError("Missing required parameter: 'SESSION'", "destroy", "--provider", "docker");
        assertUsageError("Missing required parameter: 'SESSION'", "snapshot");
        assertUsageError(
                "--label labels the session --background makes; session 's' exists already",
                "exec",
                "--session",
                "s",
                "--background",
                "--label",
                "a=b",
                "--",
                "true");
        assertUsageError(
                "with --session the session exists", "exec", "--session", "s", "--lifetime", "1m", "--", "true");
    }

    private static String[] concat(String[]... parts) {
        return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream).toArray(String[]::new);
    }
}
