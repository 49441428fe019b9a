package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the shaded {@code sandbox.jar} as a real {@code java -jar} subprocess, as a user would. Both of the CLI's
 * output pipes are drained concurrently so the test itself cannot deadlock.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SandboxCliJarIT {
    private static Path jar;

    @BeforeAll
    static void findJar() {
        jar = Path.of(System.getProperty("sandbox.jar", "target/sandbox.jar"));
        assertThat(jar).as("the shaded CLI jar, built in the package phase").isRegularFile();
    }

    /** What the CLI printed, as byte counts and, for small output, text. */
    record Result(int code, Drained out, Drained err, Duration took) {}

    /** One drained pipe: every byte counted, the first 64 KiB kept as text. */
    record Drained(long bytes, long newlines, long bytesOtherThanLetter, String head) {}

    private static ProcessBuilder cli(String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-jar");
        command.add(jar.toString());
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    }

    private static Result run(String... args) throws Exception {
        return run((byte) 0, args);
    }

    /** Runs the CLI to its end; {@code letter} is the byte expected besides newlines (0 to not check). */
    private static Result run(byte letter, String... args) throws Exception {
        long start = System.nanoTime();
        Process p = cli(args).start();
        CompletableFuture<Drained> out = drain(p.getInputStream(), letter == 0 ? 0 : letter);
        CompletableFuture<Drained> err = drain(p.getErrorStream(), letter == 0 ? 0 : (byte) (letter + 1));
        boolean exited = p.waitFor(90, TimeUnit.SECONDS);
        if (!exited) {
            p.destroyForcibly();
        }
        assertThat(exited).as("the CLI exited").isTrue();
        return new Result(
                p.exitValue(),
                out.get(30, TimeUnit.SECONDS),
                err.get(30, TimeUnit.SECONDS),
                Duration.ofNanos(System.nanoTime() - start));
    }

    private static CompletableFuture<Drained> drain(InputStream in, byte letter) {
        CompletableFuture<Drained> result = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            StringBuilder head = new StringBuilder();
            long bytes = 0;
            long newlines = 0;
            long other = 0;
            try (in) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    if (head.length() < 64 * 1024) {
                        head.append(new String(buf, 0, Math.min(n, 64 * 1024), StandardCharsets.UTF_8));
                    }
                    bytes += n;
                    for (int i = 0; i < n; i++) {
                        if (buf[i] == '\n') {
                            newlines++;
                        } else if (buf[i] != letter) {
                            other++;
                        }
                    }
                }
                result.complete(new Drained(bytes, newlines, other, head.toString()));
            } catch (IOException e) {
                result.completeExceptionally(e);
            }
        });
        reader.setDaemon(true);
        reader.start();
        return result;
    }

    @Test
    void exitCodeIsPropagated() throws Exception {
        Result r = run("exec", "--", "sh", "-c", "exit 3");

        assertThat(r.code()).isEqualTo(3);
        assertThat(r.out().bytes()).isZero();
        assertThat(r.err().head()).isEmpty();
    }

    @Test
    void stdoutAndStderrAreSeparateAndCarryNothingElse() throws Exception {
        Result r = run("exec", "--", "sh", "-c", "echo to-out; echo to-err >&2; echo more-out");

        assertThat(r.code()).isZero();
        assertThat(r.out().head()).isEqualTo("to-out\nmore-out\n");
        assertThat(r.err().head()).isEqualTo("to-err\n");
    }

    @Test
    void timeoutExitsWith124() throws Exception {
        Result r = run("exec", "--timeout", "500ms", "--", "sleep", "5");

        assertThat(r.code()).isEqualTo(124);
        assertThat(r.took()).isLessThan(Duration.ofSeconds(5));
        assertThat(r.err().head()).isEqualTo("sandbox: timed out after 500ms; killed\n");

        Result run = run("run", "--idle-timeout", "1s", "--", "sleep", "5");
        assertThat(run.code()).isEqualTo(124);
        assertThat(run.out().head()).contains("\"termination\":\"idle_timed_out\"");
        assertThat(run.err().head()).isEqualTo("sandbox: timed out: no output for 1s; killed\n");
    }

    /** The jar declares native access (JNA, the local provider's launcher): the JDK prints no warning for it. */
    @Test
    void theLocalProviderRunsWithoutANativeAccessWarning() throws Exception {
        Result r = run("exec", "--", "sh", "-c", "echo ran");

        assertThat(r.code()).isZero();
        assertThat(r.out().head()).isEqualTo("ran\n");
        assertThat(r.err().head())
                .doesNotContain("WARNING: A restricted method")
                .isEmpty();
    }

    @Test
    void helpAndVersion() throws Exception {
        Result help = run("--help");
        assertThat(help.code()).isZero();
        assertThat(help.out().head()).startsWith("usage: sandbox exec").contains("generate-completion");
        assertThat(help.err().bytes()).isZero();

        Result version = run("--version");
        assertThat(version.code()).isZero();
        assertThat(version.out().head()).matches("sandbox \\d+\\.\\d+\\.\\d+\\S*\n");
        assertThat(version.err().bytes()).isZero();
    }

    /** The generated script, sourced in bash, registers itself and completes subcommands and option values. */
    @Test
    void theCompletionScriptLoadsInBashAndCompletes() throws Exception {
        String script = """
                source <("$1" -jar "$2" generate-completion) || exit 1
                complete -p sandbox || exit 1
                words() {
                    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
                    COMPREPLY=(); _complete_sandbox 2>/dev/null; echo "${COMPREPLY[*]}"
                }
                words sandbox ex
                words sandbox ls
                words sandbox exec --provider ''
                words sandbox run --ti
                """;
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder("bash", "-c", script, "bash", java, jar.toString())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        CompletableFuture<Drained> out = drain(p.getInputStream(), (byte) 0);
        CompletableFuture<Drained> err = drain(p.getErrorStream(), (byte) 0);
        boolean exited = p.waitFor(90, TimeUnit.SECONDS);
        if (!exited) {
            p.destroyForcibly();
        }
        assertThat(exited).as("bash exited").isTrue();
        String stderr = err.get(30, TimeUnit.SECONDS).head();
        assertThat(p.exitValue()).as(stderr).isZero();
        assertThat(out.get(30, TimeUnit.SECONDS).head().lines())
                .containsExactly(
                        "complete -o default -F _complete_sandbox sandbox",
                        "exec",
                        "ls ls-files",
                        "local docker kubernetes remote",
                        "--timeout");
    }

    /**
     * On a Java older than 21 the jar's entry point (compiled for Java 8) says which Java it needs, which one this is,
     * and how to choose another, and exits 2, instead of an {@code UnsupportedClassVersionError} trace.
     */
    @Test
    void anOldJavaIsToldWhichJavaTheCliNeedsAndHowToChooseIt() throws Exception {
        Path oldJava = olderJdk();
        Process p = new ProcessBuilder(oldJava.resolve("bin/java").toString(), "-jar", jar.toString(), "--help")
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        CompletableFuture<Drained> out = drain(p.getInputStream(), (byte) 0);
        CompletableFuture<Drained> err = drain(p.getErrorStream(), (byte) 0);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();

        assertThat(p.exitValue()).isEqualTo(2);
        assertThat(out.get(30, TimeUnit.SECONDS).bytes()).isZero();
        String message = err.get(30, TimeUnit.SECONDS).head();
        String version = Files.readAllLines(oldJava.resolve("release")).stream()
                .filter(line -> line.startsWith("JAVA_VERSION="))
                .map(line -> line.substring("JAVA_VERSION=".length()).replace("\"", ""))
                .findFirst()
                .orElseThrow();
        assertThat(message)
                .startsWith("sandbox needs Java 21 or newer; this is Java " + version + " (")
                .contains(oldJava.toRealPath().toString())
                .contains("Set JAVA_HOME to a JDK 21 or newer")
                .doesNotContain("Exception")
                .doesNotContain("\tat ");
        assertThat(message.lines()).hasSize(2);
    }

    /**
     * What a start loads, the larger part of its time: {@code --help} loads two classes of the jar (the launcher and
     * the CLI) and no picocli; {@code exec} on the local provider builds the parser of {@code exec} only (no other
     * subcommand's class is initialized) and loads nothing of Netty, Jackson, docker-java, the server or MCP.
     */
    @Test
    void aStartLoadsOnlyWhatItsCommandNeeds() throws Exception {
        List<String> help = loadedFromTheJar("--help");
        assertThat(help).containsExactly("dev.sandbox.samples.cli.Launcher", "dev.sandbox.samples.cli.SandboxCli");

        List<String> exec = loadedFromTheJar("exec", "--provider", "local", "--", "true");
        assertThat(exec).contains("dev.sandbox.samples.cli.ExecCommand", "dev.sandbox.local.LocalSandboxProvider");
        assertThat(exec)
                .filteredOn(name -> name.startsWith("io.netty.")
                        || name.startsWith("com.fasterxml.")
                        || name.startsWith("com.github.dockerjava.")
                        || name.startsWith("dev.sandbox.server.")
                        || name.startsWith("dev.sandbox.mcp.")
                        || name.startsWith("dev.sandbox.docker.")
                        || name.startsWith("dev.sandbox.remote.")
                        || name.startsWith("io.modelcontextprotocol."))
                .isEmpty();
        // another subcommand's class may be loaded (a class literal), never built: none of their nested classes
        assertThat(exec)
                .noneMatch(name -> name.startsWith("dev.sandbox.samples.cli.ServeCommand$")
                        || name.startsWith("dev.sandbox.samples.cli.McpCommand$")
                        || name.startsWith("dev.sandbox.samples.cli.LogsCommand$"));
    }

    /** The classes a run of the jar loads from the jar, in order ({@code -Xlog:class+load}). */
    private static List<String> loadedFromTheJar(String... args) throws Exception {
        Path log = Files.createTempFile("class-load", ".log");
        try {
            List<String> command = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xlog:class+load:file=" + log + ":none",
                    "-jar",
                    jar.toString()));
            command.addAll(List.of(args));
            Process p = new ProcessBuilder(command)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
            CompletableFuture<Drained> out = drain(p.getInputStream(), (byte) 0);
            CompletableFuture<Drained> err = drain(p.getErrorStream(), (byte) 0);
            assertThat(p.waitFor(90, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(err.get(30, TimeUnit.SECONDS).head()).isZero();
            out.get(30, TimeUnit.SECONDS);
            return Files.readAllLines(log).stream()
                    .filter(line -> line.contains(" source: file:") || line.contains(" source: jar:"))
                    .map(line -> line.substring(0, line.indexOf(' ')))
                    .toList();
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /**
     * The README's {@code sandbox} wrapper ({@code scripts/sandbox}): the first short command writes the class-data
     * archive without a word on stdout or stderr (the JVM's archive messages would corrupt {@code run}'s JSON), later
     * ones start from it, and it runs the {@code java} of {@code JAVA_HOME} (a JDK 17 there gets the launcher's
     * message, not the {@code java} on the {@code PATH}).
     */
    @Test
    void theWrapperRunsTheJavaOfJavaHomeAndWritesItsArchiveSilently(@TempDir Path cache) throws Exception {
        Path wrapper = Path.of("..", "scripts", "sandbox").toAbsolutePath().normalize();
        assertThat(wrapper).isExecutable();
        String javaHome = System.getProperty("java.home");

        Wrapped first = wrapped(wrapper, cache, javaHome, "run", "--", "echo", "first");
        assertThat(first.err()).isEmpty();
        assertThat(first.code()).isZero();
        assertThat(first.out())
                .startsWith("{")
                .contains("\"stdout\":\"first\\n\"")
                .endsWith("}\n");
        assertThat(cache.resolve("cli.jsa")).isNotEmptyFile();

        Wrapped second = wrapped(wrapper, cache, javaHome, "exec", "--", "sh", "-c", "echo second; exit 3");
        assertThat(second).isEqualTo(new Wrapped(3, "second\n", ""));

        Wrapped old = wrapped(wrapper, cache, olderJdk().toString(), "exec", "--", "true");
        assertThat(old.code()).isEqualTo(2);
        assertThat(old.out()).isEmpty();
        assertThat(old.err()).startsWith("sandbox needs Java 21 or newer; this is Java ");
    }

    record Wrapped(int code, String out, String err) {}

    private static Wrapped wrapped(Path wrapper, Path cache, String javaHome, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(wrapper.toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder =
                new ProcessBuilder(command).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        builder.environment().put("JAVA_HOME", javaHome);
        builder.environment().put("SANDBOX_JAR", jar.toAbsolutePath().toString());
        builder.environment().put("SANDBOX_CACHE_DIR", cache.toString());
        Process p = builder.start();
        CompletableFuture<Drained> out = drain(p.getInputStream(), (byte) 0);
        CompletableFuture<Drained> err = drain(p.getErrorStream(), (byte) 0);
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("the wrapper exited").isTrue();
        return new Wrapped(
                p.exitValue(),
                out.get(30, TimeUnit.SECONDS).head(),
                err.get(30, TimeUnit.SECONDS).head());
    }

    /**
     * A JDK older than 21: one a CI runner names ({@code JAVA_HOME_17_X64} and the like) or one under {@code
     * /usr/lib/jvm}. Without one the test cannot say anything: under {@code CI=true} that fails, elsewhere it is
     * skipped.
     */
    private static Path olderJdk() throws IOException {
        List<Path> candidates = new ArrayList<>();
        for (String release : List.of("8", "11", "17")) {
            String home = System.getenv("JAVA_HOME_" + release + "_X64");
            if (home != null) {
                candidates.add(Path.of(home));
            }
        }
        Path jvms = Path.of("/usr/lib/jvm");
        if (Files.isDirectory(jvms)) {
            try (var dirs = Files.list(jvms)) {
                dirs.sorted().forEach(candidates::add);
            }
        }
        for (Path home : candidates) {
            Path release = home.resolve("release");
            if (Files.isRegularFile(home.resolve("bin/java")) && Files.isRegularFile(release)) {
                boolean older = Files.readAllLines(release).stream()
                        .filter(line -> line.startsWith("JAVA_VERSION="))
                        .map(line -> Launcher.feature(
                                line.substring("JAVA_VERSION=".length()).replace("\"", "")))
                        .anyMatch(feature -> feature > 0 && feature < Launcher.REQUIRED);
                if (older) {
                    return home;
                }
            }
        }
        String missing = "no JDK older than 21 to run the jar with (JAVA_HOME_17_X64, or /usr/lib/jvm/*: install"
                + " openjdk-17-jre-headless)";
        assertThat(System.getenv("CI")).as(missing).isNotEqualTo("true");
        org.junit.jupiter.api.Assumptions.abort(missing);
        return null;
    }

    @Test
    void usageErrorExits2() throws Exception {
        Result r = run("exec", "sleep", "1");

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.out().bytes()).isZero();
        assertThat(r.err().head())
                .isEqualTo("sandbox: unexpected argument 'sleep'; put the command after --\n"
                        + "usage: sandbox exec [OPTIONS] [--session SESSION] [--background [--label K=V]...] -- CMD"
                        + " [ARG...]\n"
                        + "see 'sandbox help exec'\n");
    }

    @Test
    void backgroundWithTheLocalProviderIsAUsageErrorThatExplainsWhy() throws Exception {
        Result r = run("exec", "--background", "--", "sleep", "60");

        assertThat(r.code()).isEqualTo(2);
        assertThat(r.out().bytes()).isZero();
        assertThat(r.err().head())
                .startsWith("sandbox: exec --background: ")
                .contains("local sessions live only as long as the sandbox command that made them")
                .doesNotContain("usage:");
        assertThat(r.took()).isLessThan(Duration.ofSeconds(30)); // nothing was left to wait for
    }

    @Test
    void launchFailureExits127() throws Exception {
        Result r = run("exec", "--", "no-such-program-for-sure");

        assertThat(r.code()).isEqualTo(127);
        assertThat(r.err().head()).startsWith("sandbox: ").contains("no-such-program-for-sure");
    }

    @Test
    void runPrintsJsonAndExitsWithTheCommandsCode() throws Exception {
        Result r = run("run", "--", "sh", "-c", "echo hi; exit 4");

        assertThat(r.code()).isEqualTo(4);
        assertThat(r.out().head())
                .startsWith("{\"exitCode\":4,\"stdout\":\"hi\\n\"")
                .endsWith("}\n");
        assertThat(r.err().head()).isEmpty();
    }

    @Test
    void twentyMegabytesOnBothStreamsAtOnceWithoutDeadlock() throws Exception {
        Result r = run(
                (byte) 'a',
                "exec",
                "--",
                "sh",
                "-c",
                "head -c 20000000 /dev/zero | tr '\\0' a | fold -w 100 &"
                        + " head -c 20000000 /dev/zero | tr '\\0' b | fold -w 100 >&2; wait");

        assertThat(r.code()).isZero();
        assertThat(r.out().bytes()).isEqualTo(20_200_000L);
        assertThat(r.err().bytes()).isEqualTo(20_200_000L);
        assertThat(r.out().newlines()).isEqualTo(200_000L);
        assertThat(r.err().newlines()).isEqualTo(200_000L);
        assertThat(r.out().bytesOtherThanLetter()).isZero();
        assertThat(r.err().bytesOtherThanLetter()).isZero();
    }

    @Test
    void aLoneLineShowsAtOnceAndTerminatingTheCliKillsTheCommand() throws Exception {
        Path pidFile = Files.createTempFile("sandbox-cli-it", ".pid");
        Process p = cli("exec", "--", "sh", "-c", "echo $$ > '" + pidFile + "'; echo started; exec sleep 60")
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            CompletableFuture<String> firstLine = CompletableFuture.supplyAsync(() -> {
                try {
                    return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))
                            .readLine();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            // the command keeps running for a minute: the line must not wait in a buffer until it ends
            assertThat(firstLine.get(20, TimeUnit.SECONDS)).isEqualTo("started");
            long pid = Long.parseLong(Files.readString(pidFile).trim());
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).contains(true);

            p.destroy(); // SIGTERM: the CLI's shutdown hook destroys the session
            assertThat(p.waitFor(20, TimeUnit.SECONDS)).isTrue();

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                    .as("the command after the CLI was terminated")
                    .isFalse();
        } finally {
            p.destroyForcibly();
            Files.deleteIfExists(pidFile);
        }
    }
}
