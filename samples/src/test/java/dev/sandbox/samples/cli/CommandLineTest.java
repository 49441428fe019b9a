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

    private static void assertUsageError(String message, String... args) {
        assertThatThrownBy(() -> CommandLine.parse(args))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining(message);
    }

    @Test
    void execWithDefaults() throws UsageException {
        CommandLine cl = parse("exec", "--", "echo", "hi");

        assertThat(cl.mode()).isEqualTo(CommandLine.Mode.EXEC);
        assertThat(cl.provider()).isEqualTo("local");
        assertThat(cl.workdir()).isNull();
        assertThat(cl.env()).isEmpty();
        assertThat(cl.timeout()).isNull();
        assertThat(cl.idleTimeout()).isNull();
        assertThat(cl.maxOutput()).isNull();
        assertThat(cl.command()).containsExactly("echo", "hi");
    }

    @Test
    void everyOptionInBothForms() throws UsageException {
        CommandLine cl = parse(
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
        assertThat(cl.maxOutput()).isEqualTo(42L);
        assertThat(cl.command()).containsExactly("sh", "-c", "exit 3");
    }

    @Test
    void argumentsAfterTheDashesBelongToTheCommand() throws UsageException {
        CommandLine cl = parse("exec", "--", "grep", "--help", "-h", "--", "--timeout");

        assertThat(cl.mode()).isEqualTo(CommandLine.Mode.EXEC);
        assertThat(cl.command()).containsExactly("grep", "--help", "-h", "--", "--timeout");
    }

    @Test
    void relativeWorkdirIsMadeAbsolute() throws UsageException {
        CommandLine cl = parse("exec", "--workdir", "some/dir/..", "--", "true");

        assertThat(cl.workdir())
                .isEqualTo(Path.of("some").toAbsolutePath().normalize().toString());
    }

    @Test
    void helpAnywhereBeforeTheDashes() throws UsageException {
        assertThat(parse("--help").mode()).isEqualTo(CommandLine.Mode.HELP);
        assertThat(parse("-h").mode()).isEqualTo(CommandLine.Mode.HELP);
        assertThat(parse("help").mode()).isEqualTo(CommandLine.Mode.HELP);
        assertThat(parse("exec", "--help").mode()).isEqualTo(CommandLine.Mode.HELP);
        assertThat(parse("run", "--bogus", "-h", "--", "x").mode()).isEqualTo(CommandLine.Mode.HELP);
    }

    @Test
    void usageErrors() {
        assertUsageError("missing subcommand");
        assertUsageError("unknown subcommand 'shell'", "shell", "--", "ls");
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
        assertUsageError("unknown provider 'docker' (available: local)", "exec", "--provider", "docker", "--", "ls");
        assertUsageError("--max-output applies to 'sandbox run' only", "exec", "--max-output", "5", "--", "ls");
        assertUsageError("invalid --max-output '5k'", "run", "--max-output", "5k", "--", "ls");
        assertUsageError("invalid --max-output '-1'", "run", "--max-output=-1", "--", "ls");
        assertUsageError("--workdir needs a directory", "exec", "--workdir=", "--", "ls");
    }

    @Test
    void usageNamesEveryOptionAndExitCode() {
        for (String option :
                List.of("--provider", "--workdir", "--env", "--timeout", "--idle-timeout", "--max-output", "--help")) {
            assertThat(CommandLine.USAGE).contains(option);
        }
        assertThat(CommandLine.USAGE).contains("124", "127", "500ms");
    }
}
