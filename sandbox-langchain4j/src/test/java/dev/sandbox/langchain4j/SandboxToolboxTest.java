package dev.sandbox.langchain4j;

import static dev.sandbox.langchain4j.ScriptedChatModel.call;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.service.AiServices;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A LangChain4j AI service whose scripted model calls the sandbox tools: the framework finds the {@code @Tool}
 * methods, passes the model's JSON arguments, runs them against a real local session and hands their answers back to
 * the model.
 */
class SandboxToolboxTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** The AI service under test: one user message in, the model's final text out. */
    interface Assistant {
        String chat(String message);
    }

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

    @BeforeEach
    void createTools() {
        tools = SandboxTools.lazy(provider, SessionOptions.defaults(), ToolLimits.defaults());
    }

    @AfterEach
    void closeTools() {
        tools.close();
    }

    private Assistant assistant(ScriptedChatModel model) {
        return AiServices.builder(Assistant.class)
                .chatModel(model)
                .tools(SandboxToolbox.of(tools))
                .build();
    }

    private SandboxSession session() {
        return tools.session().block(WAIT);
    }

    @Test
    void theModelIsOfferedTheFiveToolsWithTheirParameters() {
        ScriptedChatModel model = ScriptedChatModel.calling();
        assertThat(assistant(model).chat("hello")).isEqualTo("the tools answered:");

        Map<String, ToolSpecification> offered = model.requests().get(0).toolSpecifications().stream()
                .collect(Collectors.toMap(ToolSpecification::name, t -> t));
        assertThat(offered).containsOnlyKeys("run_command", "run_code", "read_file", "write_file", "list_files");
        assertThat(offered.get("run_command").parameters().required()).containsExactly("command");
        assertThat(offered.get("run_code").parameters().required()).containsExactlyInAnyOrder("language", "code");
        assertThat(offered.get("write_file").parameters().required()).containsExactlyInAnyOrder("path", "content");
        assertThat(offered.get("read_file").parameters().required()).containsExactly("path");
        assertThat(offered.get("list_files").parameters().properties()).containsOnlyKeys("path");
        assertThat(offered.get("list_files").parameters().required()).isNullOrEmpty();
        assertThat(offered.get("run_code")
                        .parameters()
                        .properties()
                        .get("language")
                        .description())
                .contains("python", "javascript", "shell");
    }

    @Test
    void runsACommandAndTheModelReadsItsExitCodeAndOutput() {
        ScriptedChatModel model =
                ScriptedChatModel.calling(call("run_command", "command", "echo hello from $((6 * 7)); echo oops >&2"));

        String reply = assistant(model).chat("say hello");

        assertThat(reply)
                .isEqualTo("the tools answered:\n[run_command] exit code: 0\nstdout:\nhello from 42\nstderr:\noops");
    }

    @Test
    void aFailingCommandIsAnAnswerWithItsExitCode() {
        ScriptedChatModel model = ScriptedChatModel.calling(call("run_command", "command", "echo no >&2; exit 3"));

        String reply = assistant(model).chat("fail");

        assertThat(reply).isEqualTo("the tools answered:\n[run_command] exit code: 3\nstdout: (empty)\nstderr:\nno");
    }

    @Test
    void writesThenReadsAndListsAFile() {
        String content = "first line\nsecond line: ünïcode\n";
        int bytes = content.getBytes(StandardCharsets.UTF_8).length;
        ScriptedChatModel model = ScriptedChatModel.calling(
                call("write_file", "path", "notes/today.txt", "content", content),
                call("read_file", "path", "notes/today.txt"),
                call("list_files", "path", "notes"));

        String reply = assistant(model).chat("keep a note");

        List<ToolExecutionResultMessage> results = model.lastResults();
        assertThat(results)
                .extracting(ToolExecutionResultMessage::toolName)
                .containsExactly("write_file", "read_file", "list_files");
        assertThat(results.get(0).text())
                .startsWith("wrote " + bytes + " bytes to ")
                .endsWith("today.txt");
        assertThat(results.get(1).text()).isEqualTo(content);
        assertThat(results.get(2).text()).matches("-rw-\\S* +" + bytes + " today\\.txt");
        assertThat(reply).contains("[read_file] " + content);
        // the file is really in the session, where another client of it finds it
        byte[] stored = session().files().readAllBytes("notes/today.txt", 1024).block(WAIT);
        assertThat(new String(stored, StandardCharsets.UTF_8)).isEqualTo(content);
    }

    @Test
    void listsTheWorkingDirectoryWhenThePathIsLeftOut() {
        session()
                .files()
                .write("here.txt", "x".getBytes(StandardCharsets.UTF_8))
                .block(WAIT);
        ScriptedChatModel model = ScriptedChatModel.calling(new ScriptedChatModel.Call("list_files", "{}"));

        assistant(model).chat("what is here?");

        assertThat(model.lastResults().get(0).text()).matches("-rw-\\S* +1 here\\.txt");
    }

    @Test
    void runsShellCodeAlwaysAndPythonWhereTheHostHasIt() {
        ScriptedChatModel model = ScriptedChatModel.calling(
                call("run_code", "language", "shell", "code", "x=6\necho \"shell says $((x * 7))\"\n"));

        assertThat(assistant(model).chat("compute"))
                .isEqualTo("the tools answered:\n[run_code] exit code: 0\nstdout:\nshell says 42\nstderr: (empty)");

        // Python only as an extra: the local provider runs the host's python3, which a machine may lack
        String probe = tools.runCommand("python3 -c 'print(1)'").block(WAIT);
        if (probe.startsWith("exit code: 0")) {
            ScriptedChatModel python = ScriptedChatModel.calling(call(
                    "run_code", "language", "python", "code", "import sys\nprint(sum(range(10)), file=sys.stdout)"));
            assertThat(assistant(python).chat("compute"))
                    .isEqualTo("the tools answered:\n[run_code] exit code: 0\nstdout:\n45\nstderr: (empty)");
        }
    }

    @Test
    void aCommandThatRunsTooLongIsKilledAndTheModelIsToldSo() {
        try (SandboxTools quick = SandboxTools.lazy(
                provider, SessionOptions.defaults(), ToolLimits.defaults().withTimeout(Duration.ofMillis(300)))) {
            ScriptedChatModel model =
                    ScriptedChatModel.calling(call("run_command", "command", "echo begun; sleep 30; echo done"));
            Assistant assistant = AiServices.builder(Assistant.class)
                    .chatModel(model)
                    .tools(SandboxToolbox.of(quick))
                    .build();

            String reply = assistant.chat("wait");

            assertThat(reply)
                    .startsWith("the tools answered:\n[run_command] exit code: ")
                    .contains("[timed out after 300 ms: the command was killed]\nstdout:\nbegun\n")
                    .doesNotContain("done");
        }
    }

    @Test
    void toolsTheModelCallsAtOnceAreAllAnsweredWhenLangChain4jRunsThemConcurrently() {
        ScriptedChatModel model = ScriptedChatModel.callingAtOnce(
                call("run_command", "command", "echo one"),
                call("run_code", "language", "sh", "code", "echo two"),
                call("write_file", "path", "three.txt", "content", "3"));
        Assistant assistant = AiServices.builder(Assistant.class)
                .chatModel(model)
                .tools(SandboxToolbox.of(tools))
                .executeToolsConcurrently()
                .build();

        assistant.chat("all at once");

        assertThat(model.lastResults())
                .extracting(ToolExecutionResultMessage::text)
                .containsExactly(
                        "exit code: 0\nstdout:\none\nstderr: (empty)",
                        "exit code: 0\nstdout:\ntwo\nstderr: (empty)",
                        "wrote 1 bytes to "
                                + session()
                                        .files()
                                        .stat("three.txt")
                                        .block(WAIT)
                                        .path());
    }

    @Test
    void aBadArgumentReachesTheModelAsAnErrorNamingIt() {
        ScriptedChatModel model = ScriptedChatModel.calling(
                call("run_code", "language", "cobol", "code", "DISPLAY 'HI'"),
                call("run_command", "command", "  "),
                call("read_file", "path", ""));

        assistant(model).chat("try things");

        List<ToolExecutionResultMessage> results = model.lastResults();
        assertThat(results.get(0).text()).isEqualTo("language must be one of python, javascript or shell, got 'cobol'");
        assertThat(results.get(1).text()).isEqualTo("command must not be empty");
        assertThat(results.get(2).text()).isEqualTo("path must not be empty");
        assertThat(results).allSatisfy(r -> assertThat(r.isError()).isTrue());
    }

    @Test
    void aCallOnANonBlockingThreadStartsNothingAndSaysWhy() {
        SandboxToolbox toolbox = SandboxToolbox.of(tools);
        session(); // created here, so that only the command could create the marker

        Throwable error = Mono.fromCallable(() -> toolbox.runCommand("touch marker"))
                .subscribeOn(Schedulers.parallel())
                .map(answer -> (Throwable) null)
                .onErrorResume(e -> Mono.just(e))
                .block(WAIT);

        assertThat(error)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("run_command")
                .hasMessageContaining("must not be called on the non-blocking thread 'parallel-");
        assertThat(tools.runCommand("test -e marker").block(WAIT)).startsWith("exit code: 1");
    }

    @Test
    void anAiServiceCalledOnAnEventLoopGetsTheRefusalAsItsToolAnswer() {
        session();
        ScriptedChatModel model = ScriptedChatModel.calling(call("run_command", "command", "touch marker"));
        Assistant assistant = assistant(model);

        String reply = Mono.fromCallable(() -> assistant.chat("touch it"))
                .subscribeOn(Schedulers.parallel())
                .block(WAIT);

        assertThat(reply).contains("[run_command] the sandbox tool run_command blocks until the sandbox answers");
        assertThat(tools.runCommand("test -e marker").block(WAIT)).startsWith("exit code: 1");
    }

    @Test
    void aToolboxNeedsItsTools() {
        assertThatThrownBy(() -> SandboxToolbox.of(null))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("tools"));
    }
}
