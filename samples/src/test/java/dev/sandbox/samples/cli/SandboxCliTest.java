package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.implementation.Version;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Runs the CLI in-process through {@link SandboxCli#run}, with real commands on the local provider. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SandboxCliTest {

    @TempDir
    Path tmp;

    record Outcome(int code, String out, String err) {}

    private static Outcome cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code;
        try (PrintStream o = new PrintStream(out, false, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, false, StandardCharsets.UTF_8)) {
            code = SandboxCli.run(args, o, e);
        }
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void execStreamsStdoutAndStderrSeparatelyAndExitsWithTheCommandsCode() {
        Outcome o = cli("exec", "--", "sh", "-c", "echo one; echo warn >&2; echo two; exit 3");

        assertThat(o.code()).isEqualTo(3);
        assertThat(o.out()).isEqualTo("one\ntwo\n");
        assertThat(o.err()).isEqualTo("warn\n");
    }

    @Test
    void execPassesNonAsciiTextThrough() {
        Outcome o = cli("exec", "--", "sh", "-c", "printf 'gr\\303\\274\\303\\237e \\342\\202\\254\\n'");

        assertThat(o.code()).isZero();
        assertThat(o.out()).isEqualTo("grüße €\n");
    }

    @Test
    void workdirAndEnvGoToTheSession() {
        Outcome o = cli(
                "exec",
                "--workdir",
                tmp.toString(),
                "--env",
                "GREETING=hi there",
                "--env=EMPTY=",
                "--",
                "sh",
                "-c",
                "pwd; echo \"$GREETING\"; echo \"[$EMPTY]\"");

        assertThat(o.code()).isZero();
        assertThat(o.out()).isEqualTo(tmp.toAbsolutePath() + "\nhi there\n[]\n");
        assertThat(tmp).exists(); // a given workdir is kept
    }

    @Test
    void timeoutExitsWith124() {
        long start = System.nanoTime();
        Outcome o = cli("exec", "--timeout", "500ms", "--", "sleep", "5");

        assertThat(o.code()).isEqualTo(124);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(4000);
        assertThat(o.err()).isEqualTo("sandbox: timed out after 500ms; killed\n");
    }

    @Test
    void aCommandThatExits124ByItselfIsNotCalledTimedOut() {
        Outcome o = cli("exec", "--timeout", "10s", "--", "sh", "-c", "exit 124");

        assertThat(o.code()).isEqualTo(124);
        assertThat(o.err()).isEmpty();
    }

    @Test
    void idleTimeoutExitsWith124() {
        Outcome o = cli("exec", "--idle-timeout", "300ms", "--", "sh", "-c", "echo started; sleep 5");

        assertThat(o.code()).isEqualTo(124);
        assertThat(o.out()).isEqualTo("started\n");
        assertThat(o.err()).isEqualTo("sandbox: timed out: no output for 300ms; killed\n");
    }

    @Test
    void runPrintsOneJsonObjectAndExitsWithTheCommandsCode() throws Exception {
        Outcome o = cli("run", "--", "sh", "-c", "echo out; echo err >&2; exit 5");

        assertThat(o.code()).isEqualTo(5);
        assertThat(o.err()).isEmpty();
        assertThat(o.out()).endsWith("\n").doesNotContain("\n{");
        JsonNode json = new ObjectMapper().readTree(o.out());
        assertThat(json.get("exitCode").asInt()).isEqualTo(5);
        assertThat(json.get("stdout").asText()).isEqualTo("out\n");
        assertThat(json.get("stderr").asText()).isEqualTo("err\n");
        assertThat(json.get("stdoutTruncated").asBoolean()).isFalse();
        assertThat(json.get("stderrTruncated").asBoolean()).isFalse();
        assertThat(json.get("durationMs").isIntegralNumber()).isTrue();
        assertThat(json.get("durationMs").asLong()).isBetween(0L, 10_000L);
        assertThat(json.get("termination").asText()).isEqualTo("exited");
    }

    @Test
    void runTruncatesAtMaxOutput() throws Exception {
        Outcome o = cli("run", "--max-output", "10", "--", "sh", "-c", "printf 0123456789abcdef; printf xy >&2");

        assertThat(o.code()).isZero();
        JsonNode json = new ObjectMapper().readTree(o.out());
        assertThat(json.get("stdout").asText()).isEqualTo("0123456789");
        assertThat(json.get("stdoutTruncated").asBoolean()).isTrue();
        assertThat(json.get("stdoutBytes").asLong()).isEqualTo(16);
        assertThat(json.get("stderr").asText()).isEqualTo("xy");
        assertThat(json.get("stderrTruncated").asBoolean()).isFalse();
    }

    @Test
    void runTimeoutStillPrintsTheResultAndExitsWith124() throws Exception {
        Outcome o = cli("run", "--timeout", "300ms", "--", "sh", "-c", "echo partial; sleep 5");

        assertThat(o.code()).isEqualTo(124);
        JsonNode json = new ObjectMapper().readTree(o.out());
        assertThat(json.get("exitCode").asInt()).isEqualTo(124);
        assertThat(json.get("stdout").asText()).isEqualTo("partial\n");
        assertThat(json.get("termination").asText()).isEqualTo("timed_out");
        assertThat(o.err()).isEqualTo("sandbox: timed out after 300ms; killed\n");
    }

    @Test
    void helpPrintsUsageToStdoutAndExitsZero() {
        Outcome o = cli("--help");

        assertThat(o.code()).isZero();
        assertThat(o.out()).isEqualTo(SandboxCommand.USAGE);
        assertThat(o.err()).isEmpty();
    }

    @Test
    void versionPrintsTheSdksVersionAndExitsZero() {
        Outcome o = cli("--version");

        assertThat(o.code()).isZero();
        assertThat(o.out()).isEqualTo("sandbox " + Version.get() + "\n");
        assertThat(Version.get()).isNotEqualTo("unknown");
        assertThat(o.err()).isEmpty();
        assertThat(cli("-V")).isEqualTo(o);
    }

    @Test
    void generateCompletionPrintsAScriptThatKnowsEverySubcommand() {
        Outcome o = cli("generate-completion");

        assertThat(o.code()).isZero();
        assertThat(o.err()).isEmpty();
        assertThat(o.out()).startsWith("#!/usr/bin/env bash").endsWith("\n");
        assertThat(o.out()).contains("complete -F _complete_sandbox -o default sandbox");
        String topLevel = o.out()
                .lines()
                .filter(line -> line.strip().startsWith("local commands=\"exec "))
                .findFirst()
                .orElseThrow();
        assertThat(topLevel.substring(topLevel.indexOf('"') + 1, topLevel.lastIndexOf('"'))
                        .split(" "))
                .containsExactly(
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
                        "mcp",
                        "generate-completion",
                        "help");
        // the values of the options that have a fixed set
        assertThat(o.out()).contains("(\"local\" \"docker\" \"kubernetes\" \"remote\") # --provider values");
        assertThat(o.out()).contains("(\"always\" \"if-not-present\" \"never\") # --pull-policy values");
        // zsh loads it through bashcompinit
        assertThat(o.out()).contains("ZSH_VERSION");
    }

    @Test
    void usageErrorsArePrintedShortToStderrAndExit2() {
        String[][] cases = {
            {},
            {"exec"},
            {"exec", "--"},
            {"exec", "--bogus", "--", "true"},
            {"exec", "--timeout", "soon", "--", "true"},
            {"exec", "--env", "NOEQUALS", "--", "true"},
            {"exec", "--provider", "k8s", "--", "true"},
            {"exec", "--provider", "kubernetes", "--namespace", "Not_A_Label", "--", "true"},
            {"frobnicate", "--", "true"},
        };
        for (String[] args : cases) {
            Outcome o = cli(args);
            assertThat(o.code()).as(String.join(" ", args)).isEqualTo(2);
            assertThat(o.out()).as(String.join(" ", args)).isEmpty();
            assertThat(o.err())
                    .as(String.join(" ", args))
                    .startsWith("sandbox: ")
                    .contains("see 'sandbox help");
            assertThat(o.err().lines()).as(String.join(" ", args)).hasSizeLessThanOrEqualTo(4);
        }
    }

    @Test
    void commandsForLastingSessionsExplainThatLocalSessionsEndWithTheCommand() {
        String[][] cases = {
            {"exec", "--background", "--", "sleep", "60"},
            {"logs", "some-session", "p-1"},
            {"logs", "--follow", "--from", "100", "some-session", "p-1"},
            {"cp", tmp.resolve("x").toString(), "some-session:/tmp/x"},
            {"cp", "some-session:/tmp/x", tmp.toString()},
            {"ls-files", "some-session:/tmp"},
            {"port-forward", "some-session", "8080"},
        };
        for (String[] args : cases) {
            Outcome o = cli(args);
            String shown = String.join(" ", args);
            assertThat(o.code()).as(shown).isEqualTo(2);
            assertThat(o.out()).as(shown).isEmpty();
            assertThat(o.err())
                    .as(shown)
                    .startsWith("sandbox: ")
                    .contains("local sessions live only as long as the sandbox command that made them")
                    .contains("--provider remote")
                    .doesNotContain("usage:"); // the command line was right
        }
        assertThat(cli("logs", "some-session", "p-1").err()).contains("'some-session'");
        assertThat(cli("exec", "--background", "--", "true").err()).contains("--background");
    }

    @Test
    void aSessionLifetimeEndsTheCommandAsATimeout() {
        long start = System.nanoTime();
        Outcome o = cli("exec", "--lifetime", "500ms", "--", "sh", "-c", "echo started; exec sleep 30");

        assertThat(o.out()).isEqualTo("started\n");
        assertThat(o.code()).isEqualTo(124);
        assertThat(o.err()).startsWith("sandbox: ").contains("lifetime").contains("the command was killed");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(10_000);

        // a kill from elsewhere keeps its own exit code
        assertThat(cli("exec", "--", "sh", "-c", "kill -9 $$").code()).isEqualTo(137);
    }

    @Test
    void aProgramThatCannotStartExits127() {
        Outcome o = cli("exec", "--", "no-such-program-for-sure");

        assertThat(o.code()).isEqualTo(127);
        assertThat(o.out()).isEmpty();
        assertThat(o.err())
                .startsWith("sandbox: ")
                .contains("no-such-program-for-sure")
                .endsWith("\n");
        assertThat(cli("run", "--", "/no/such/program").code()).isEqualTo(127);
    }

    @Test
    void otherSandboxErrorsExit1() {
        Outcome o = cli("exec", "--workdir", tmp.resolve("missing").toString(), "--", "true");

        assertThat(o.code()).isEqualTo(1);
        assertThat(o.err()).startsWith("sandbox: ").contains("workdir");
    }

    @Test
    void bulkOutputOnBothStreamsAtOnceIsCopiedExactly() {
        CountingStream out = new CountingStream((byte) 'a');
        CountingStream err = new CountingStream((byte) 'b');
        int code;
        try (PrintStream o = new PrintStream(out, false, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, false, StandardCharsets.UTF_8)) {
            code = SandboxCli.run(
                    new String[] {
                        "exec",
                        "--",
                        "sh",
                        "-c",
                        "head -c 20000000 /dev/zero | tr '\\0' a | fold -w 100 &"
                                + " head -c 20000000 /dev/zero | tr '\\0' b | fold -w 100 >&2; wait"
                    },
                    o,
                    e);
        }

        assertThat(code).isZero();
        assertThat(out.total).isEqualTo(20_200_000L);
        assertThat(err.total).isEqualTo(20_200_000L);
        assertThat(out.newlines).isEqualTo(200_000L);
        assertThat(err.newlines).isEqualTo(200_000L);
        assertThat(out.unexpected).isZero();
        assertThat(err.unexpected).isZero();
        // bulk output is written in blocks, not line by line
        assertThat(out.writes).isLessThan(20_000L);
    }

    /** Counts bytes, newlines, bytes other than the expected letter, and write calls. */
    static final class CountingStream extends OutputStream {
        private final byte letter;
        long total;
        long newlines;
        long unexpected;
        long writes;

        CountingStream(byte letter) {
            this.letter = letter;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            writes++;
            total += len;
            for (int i = off; i < off + len; i++) {
                if (b[i] == '\n') {
                    newlines++;
                } else if (b[i] != letter) {
                    unexpected++;
                }
            }
        }
    }
}
