package dev.sandbox.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.code.CodeExecutionEngine;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxInterruptedException;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.tools.CodeLanguage;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** The engine's {@code execute} run directly against a real local session. */
class SandboxCodeExecutionEngineTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static LocalSandboxProvider provider;
    private SandboxTools tools;

    @BeforeAll
    static void startProvider() {
        provider = LocalSandboxProvider.create();
    }

    @AfterAll
    static void closeProvider() {
        provider.close();
    }

    @AfterEach
    void closeTools() {
        if (tools != null) {
            tools.close();
        }
    }

    private CodeExecutionEngine engine(CodeLanguage language, ToolLimits limits) {
        tools = SandboxTools.lazy(provider, SessionOptions.defaults(), limits);
        return SandboxCodeExecutionEngine.of(tools, language);
    }

    private boolean hostHas(String program) {
        String probe = tools.runCommand("command -v " + program).block(WAIT);
        return probe.startsWith("exit code: 0");
    }

    @Test
    void answersTheExitCodeAndBothStreams() {
        CodeExecutionEngine shell = engine(CodeLanguage.SHELL, ToolLimits.defaults());

        String answer = shell.execute("echo out\necho err >&2\n");

        assertThat(answer).isEqualTo("exit code: 0\nstdout:\nout\nstderr:\nerr");
    }

    @Test
    void aProgramThatFailsIsAnAnswer() {
        CodeExecutionEngine shell = engine(CodeLanguage.SHELL, ToolLimits.defaults());

        assertThat(shell.execute("echo partial; exit 7")).isEqualTo("exit code: 7\nstdout:\npartial\nstderr: (empty)");
    }

    @Test
    void snippetsShareTheSessionsFiles() {
        CodeExecutionEngine shell = engine(CodeLanguage.SHELL, ToolLimits.defaults());

        shell.execute("echo kept > state.txt");

        assertThat(shell.execute("cat state.txt")).isEqualTo("exit code: 0\nstdout:\nkept\nstderr: (empty)");
    }

    @Test
    void runsPythonAndJavaScriptWhereTheHostHasThem() {
        CodeExecutionEngine shell = engine(CodeLanguage.SHELL, ToolLimits.defaults());
        assertThat(shell.execute("echo $((2 + 3))")).startsWith("exit code: 0\nstdout:\n5\n");
        // extras: the local provider runs the host's interpreters, which a machine may lack
        if (hostHas("python3")) {
            CodeExecutionEngine python = SandboxCodeExecutionEngine.of(tools, CodeLanguage.PYTHON);
            assertThat(python.execute("print(6 * 7)")).isEqualTo("exit code: 0\nstdout:\n42\nstderr: (empty)");
            assertThat(python.execute("raise SystemExit('bad input')"))
                    .startsWith("exit code: 1\n")
                    .endsWith("stderr:\nbad input");
        }
        if (hostHas("node")) {
            CodeExecutionEngine node = SandboxCodeExecutionEngine.of(tools, CodeLanguage.JAVASCRIPT);
            assertThat(node.execute("console.log([1, 2, 3].map(x => x * 2).join(','))"))
                    .isEqualTo("exit code: 0\nstdout:\n2,4,6\nstderr: (empty)");
        }
    }

    @Test
    void aProgramThatRunsTooLongIsKilledAndTheAnswerSaysSo() {
        CodeExecutionEngine shell =
                engine(CodeLanguage.SHELL, ToolLimits.defaults().withTimeout(Duration.ofMillis(500)));

        long start = System.nanoTime();
        String answer = shell.execute("echo started\nsleep 30\necho never\n");
        Duration took = Duration.ofNanos(System.nanoTime() - start);

        assertThat(answer)
                .contains("[timed out after 500 ms: the command was killed]")
                .contains("stdout:\nstarted\n")
                .doesNotContain("never");
        assertThat(took).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void outputPastTheCapIsCutAndTheAnswerSaysHowMuch() {
        CodeExecutionEngine shell =
                engine(CodeLanguage.SHELL, ToolLimits.defaults().withMaxOutputBytes(100));

        String answer = shell.execute("i=0; while [ $i -lt 50 ]; do echo line-$i-padding; i=$((i + 1)); done");

        // 50 lines: line-0-padding..line-9-padding are 15 bytes with the newline, the 40 others 16: 790 bytes
        assertThat(answer).startsWith("exit code: 0\nstdout:\nline-0-padding\nline-1-padding\n");
        assertThat(answer).contains("[stdout truncated: the first 100 of 790 bytes are shown]");
        assertThat(answer).doesNotContain("line-49-padding");
    }

    @Test
    void badArgumentsAreRefusedNamingTheField() {
        tools = SandboxTools.lazy(provider, SessionOptions.defaults(), ToolLimits.defaults());
        assertThatThrownBy(() -> SandboxCodeExecutionEngine.of(null, CodeLanguage.SHELL))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("tools"));
        assertThatThrownBy(() -> SandboxCodeExecutionEngine.of(tools, null))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("language"));
        CodeExecutionEngine shell = SandboxCodeExecutionEngine.of(tools, CodeLanguage.SHELL);
        assertThatThrownBy(() -> shell.execute(""))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("code"));
        assertThatThrownBy(() -> shell.execute(null))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("code"));
    }

    @Test
    void refusesANonBlockingThreadBeforeStartingAnything() {
        CodeExecutionEngine shell = engine(CodeLanguage.SHELL, ToolLimits.defaults());
        tools.session().block(WAIT);

        Throwable error = Mono.fromCallable(() -> shell.execute("touch marker"))
                .subscribeOn(Schedulers.parallel())
                .map(answer -> (Throwable) null)
                .onErrorResume(e -> Mono.just(e))
                .block(WAIT);

        assertThat(error)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("must not be called on the non-blocking thread 'parallel-");
        assertThat(shell.execute("test -e marker")).startsWith("exit code: 1");
    }

    @Test
    void anInterruptWhileWaitingKillsTheProgram() throws Exception {
        CodeExecutionEngine shell = engine(CodeLanguage.SHELL, ToolLimits.defaults());
        Path workdir =
                Path.of(tools.runCommand("pwd").block(WAIT).lines().toList().get(2));
        Path pidFile = workdir.resolve("pid");
        CompletableFuture<Throwable> failure = new CompletableFuture<>();
        Thread caller = Thread.ofPlatform().start(() -> {
            try {
                shell.execute("echo $$ > pid.tmp && mv pid.tmp pid\nexec sleep 300\n");
                failure.complete(null);
            } catch (Throwable e) {
                failure.complete(Thread.currentThread().isInterrupted() ? e : new AssertionError("flag cleared", e));
            }
        });
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!Files.exists(pidFile) && System.nanoTime() < deadline) {
            LockSupport.parkNanos(5_000_000); // polls a file the program writes: no event tells when it exists
        }
        long pid = Long.parseLong(Files.readString(pidFile).trim());

        caller.interrupt();

        assertThat(failure.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(SandboxInterruptedException.class);
        ProcessHandle.of(pid)
                .ifPresent(p ->
                        p.onExit().completeOnTimeout(p, 10, TimeUnit.SECONDS).join());
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).isNotEqualTo(Optional.of(true));
    }

    @Test
    void anAlreadyInterruptedThreadStartsNothing() {
        CodeExecutionEngine shell = engine(CodeLanguage.SHELL, ToolLimits.defaults());
        tools.session().block(WAIT);

        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> shell.execute("touch marker")).isInstanceOf(SandboxInterruptedException.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(shell.execute("test -e marker")).startsWith("exit code: 1");
    }
}
