package dev.sandbox.spring.ai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.spring.ai.ScriptedChatModel.Call;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import io.micrometer.observation.ObservationRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.ToolCallingAdvisor;
import org.springframework.ai.model.tool.ToolCallingManager;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.execution.DefaultToolExecutionExceptionProcessor;
import org.springframework.ai.tool.execution.ToolExecutionException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A scripted chat model makes Spring AI's {@link ChatClient} call the sandbox tools end to end, on the local provider:
 * what the tests check is the text the model read back from each tool.
 */
class SandboxToolCallbacksTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static LocalSandboxProvider provider;

    private SandboxSession session;

    @BeforeAll
    static void provider() {
        provider = LocalSandboxProvider.create();
    }

    @AfterAll
    static void closeProvider() {
        provider.close();
    }

    @BeforeEach
    void session() {
        session = provider.create(SessionOptions.defaults()).block(WAIT);
    }

    @AfterEach
    void destroy() {
        session.destroy().onErrorComplete().block(WAIT);
    }

    private SandboxTools tools() {
        return SandboxTools.of(session, ToolLimits.defaults().withTimeout(Duration.ofSeconds(20)));
    }

    /** Asks the model, which calls the scripted tools through ChatClient, and answers what the model said. */
    private static String chat(ScriptedChatModel model, SandboxTools tools) {
        return ChatClient.create(model)
                .prompt("use the sandbox")
                .tools(SandboxToolCallbacks.of(tools))
                .call()
                .content();
    }

    @Test
    void theModelRunsACommandAndReadsItsOutputAndExitCode() {
        ScriptedChatModel model = ScriptedChatModel.calling(
                SandboxToolCallbacks.RUN_COMMAND,
                "{\"command\": \"echo hello from $((6 * 7)); echo oops >&2; exit 3\"}");

        String reply = chat(model, tools());

        assertThat(model.toolAnswers()).hasSize(1);
        String answer = model.toolAnswers().get(0);
        assertThat(answer).contains("exit code: 3").contains("hello from 42").contains("oops");
        assertThat(answer.indexOf("hello from 42")).isLessThan(answer.indexOf("stderr:"));
        assertThat(reply).isEqualTo(ScriptedChatModel.finalText(List.of(answer)));
        assertThat(model.offeredTools().get(0))
                .containsExactly("run_command", "run_code", "read_file", "write_file", "list_files");
    }

    @Test
    void theModelRunsAShellSnippet() {
        ScriptedChatModel model = ScriptedChatModel.calling(
                SandboxToolCallbacks.RUN_CODE,
                "{\"language\": \"shell\", \"code\": \"for i in 1 2 3; do printf 'n%s ' $i; done\\necho done\"}");

        chat(model, tools());

        assertThat(model.toolAnswers().get(0)).contains("exit code: 0").contains("n1 n2 n3 done");
    }

    @Test
    void theModelRunsAPythonSnippetWhenTheSandboxHasPython() {
        assumeTrue(
                session.run(ExecOptions.shell("command -v python3")).block(WAIT).exitCode() == 0,
                "python3 is not on the sandbox's PATH");
        ScriptedChatModel model = ScriptedChatModel.calling(
                SandboxToolCallbacks.RUN_CODE,
                "{\"language\": \"python\", \"code\": \"import sys\\nprint(sum(range(10)), sys.version_info[0])\"}");

        chat(model, tools());

        assertThat(model.toolAnswers().get(0)).contains("exit code: 0").contains("45 3");
    }

    @Test
    void theModelWritesAFileThenReadsItBackThenListsItsDirectory() {
        ScriptedChatModel model = ScriptedChatModel.calling(
                new Call(
                        SandboxToolCallbacks.WRITE_FILE,
                        "{\"path\": \"notes/todo.txt\", \"content\": \"héllo\\nworld\\n\"}"),
                new Call(SandboxToolCallbacks.READ_FILE, "{\"path\": \"notes/todo.txt\"}"),
                new Call(SandboxToolCallbacks.LIST_FILES, "{\"path\": \"notes\"}"),
                new Call(SandboxToolCallbacks.LIST_FILES, "{}"));

        chat(model, tools());

        List<String> answers = model.toolAnswers();
        assertThat(answers).hasSize(4);
        assertThat(answers.get(0)).contains("wrote 13 bytes").contains("notes/todo.txt");
        assertThat(answers.get(1)).contains("héllo\nworld");
        assertThat(answers.get(2)).matches("-rw\\S* +13 todo\\.txt");
        assertThat(answers.get(3)).contains("notes/");
        byte[] written = session.files().readAllBytes("notes/todo.txt", 1024).block(WAIT);
        assertThat(new String(written, StandardCharsets.UTF_8)).isEqualTo("héllo\nworld\n");
    }

    @Test
    void anOutputCapHitIsSaidInTheAnswerTheModelReads() {
        SandboxTools tools = SandboxTools.of(session, ToolLimits.defaults().withMaxOutputBytes(1000));
        ScriptedChatModel model = ScriptedChatModel.calling(
                SandboxToolCallbacks.RUN_COMMAND, "{\"command\": \"head -c 50000 /dev/zero | tr '\\\\0' x\"}");

        chat(model, tools);

        String answer = model.toolAnswers().get(0);
        assertThat(answer)
                .startsWith("exit code: 0\nstdout:\n" + "x".repeat(1000) + "\n")
                .contains("[stdout truncated: the first 1000 of 50000 bytes are shown]")
                .doesNotContain("x".repeat(1001));
    }

    @Test
    void aTimeoutIsSaidInTheAnswerTheModelReads() {
        SandboxTools tools = SandboxTools.of(session, ToolLimits.defaults().withTimeout(Duration.ofMillis(700)));
        ScriptedChatModel model = ScriptedChatModel.calling(
                SandboxToolCallbacks.RUN_COMMAND, "{\"command\": \"echo started; sleep 30\"}");

        long start = System.nanoTime();
        chat(model, tools);

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        assertThat(model.toolAnswers().get(0))
                .contains("[timed out after 700 ms: the command was killed]")
                .contains("started");
    }

    @Test
    void badArgumentsAreAnsweredToTheModelNamingTheArgumentAndTheChatGoesOn() {
        ScriptedChatModel model = ScriptedChatModel.calling(
                new Call(SandboxToolCallbacks.RUN_COMMAND, "{\"cmd\": \"ls\"}"),
                new Call(SandboxToolCallbacks.RUN_COMMAND, "{\"command\": 42}"),
                new Call(SandboxToolCallbacks.RUN_COMMAND, "ls -l"),
                new Call(SandboxToolCallbacks.RUN_COMMAND, "[\"ls\"]"),
                new Call(SandboxToolCallbacks.RUN_CODE, "{\"language\": \"cobol\", \"code\": \"DISPLAY 1\"}"),
                new Call(SandboxToolCallbacks.WRITE_FILE, "{\"path\": \"a.txt\"}"),
                new Call(SandboxToolCallbacks.LIST_FILES, "{\"path\": [\"a\", \"b\"]}"),
                new Call(SandboxToolCallbacks.RUN_COMMAND, "{\"command\": \" \"}"));

        String reply = chat(model, tools());

        List<String> answers = model.toolAnswers();
        assertThat(answers).hasSize(8).allSatisfy(answer -> assertThat(answer).startsWith("error: "));
        assertThat(answers.get(0)).contains("missing argument 'command'");
        assertThat(answers.get(1)).contains("argument 'command' must be a string, got a number");
        assertThat(answers.get(2)).contains("not valid JSON");
        assertThat(answers.get(3)).contains("must be a JSON object").contains("an array");
        assertThat(answers.get(4)).contains("'language'").contains("cobol");
        assertThat(answers.get(5)).contains("missing argument 'content'");
        assertThat(answers.get(6)).contains("argument 'path' must be a string, got an array");
        assertThat(answers.get(7)).isEqualTo("error: invalid argument 'command': command must not be empty");
        assertThat(reply).startsWith("The tools answered:");
        assertThat(session.files().exists("a.txt").block(WAIT)).isFalse();
    }

    @Test
    void aSessionThatIsGoneIsReportedToTheModelBySpringAisDefaultProcessor() {
        SandboxTools tools = tools();
        session.destroy().block(WAIT);
        ScriptedChatModel model =
                ScriptedChatModel.calling(SandboxToolCallbacks.RUN_COMMAND, "{\"command\": \"echo never\"}");

        String reply = chat(model, tools);

        assertThat(model.toolAnswers()).hasSize(1);
        assertThat(model.toolAnswers().get(0)).doesNotContain("never").contains(session.id());
        assertThat(reply).contains(session.id());
    }

    @Test
    void anApplicationThatAlwaysThrowsGetsTheGoneSessionFromItsCallButBadInputStillGoesToTheModel() {
        SandboxTools tools = tools();
        ToolCallingAdvisor.Builder<?> alwaysThrow = ToolCallingAdvisor.builder()
                .toolCallingManager(ToolCallingManager.builder()
                        .toolExecutionExceptionProcessor(new DefaultToolExecutionExceptionProcessor(true))
                        .build());
        ScriptedChatModel badInput = ScriptedChatModel.calling(SandboxToolCallbacks.RUN_COMMAND, "{}");

        ChatClient.builder(badInput, ObservationRegistry.NOOP, null, null, alwaysThrow)
                .build()
                .prompt("use the sandbox")
                .tools(SandboxToolCallbacks.of(tools))
                .call()
                .content();

        assertThat(badInput.toolAnswers()).singleElement().asString().startsWith("error: missing argument 'command'");
        session.destroy().block(WAIT);
        ScriptedChatModel model =
                ScriptedChatModel.calling(SandboxToolCallbacks.RUN_COMMAND, "{\"command\": \"echo never\"}");
        ChatClient chat = ChatClient.builder(model, ObservationRegistry.NOOP, null, null, alwaysThrow)
                .build();

        assertThatThrownBy(() -> chat.prompt("use the sandbox")
                        .tools(SandboxToolCallbacks.of(tools))
                        .call()
                        .content())
                .isInstanceOf(ToolExecutionException.class)
                .hasMessageContaining(session.id())
                .satisfies(e -> assertThat(
                                ((ToolExecutionException) e).getToolDefinition().name())
                        .isEqualTo("run_command"));
        assertThat(model.toolAnswers()).isEmpty();
    }

    @Test
    void definitionsHaveNamesDescriptionsAndSchemasOfStringArguments() {
        SandboxTools tools = SandboxTools.of(
                session,
                ToolLimits.defaults().withTimeout(Duration.ofSeconds(45)).withMaxOutputBytes(2048));
        List<ToolCallback> callbacks = SandboxToolCallbacks.of(tools);
        JsonMapper json = JsonMapper.builder().build();

        assertThat(ScriptedChatModel.names(callbacks))
                .containsExactly("run_command", "run_code", "read_file", "write_file", "list_files");
        Map<String, List<String>> required = Map.of(
                "run_command", List.of("command"),
                "run_code", List.of("language", "code"),
                "read_file", List.of("path"),
                "write_file", List.of("path", "content"),
                "list_files", List.of());
        for (ToolCallback callback : callbacks) {
            String name = callback.getToolDefinition().name();
            JsonNode schema = json.readTree(callback.getToolDefinition().inputSchema());
            assertThat(schema.get("type").stringValue()).isEqualTo("object");
            assertThat(schema.get("additionalProperties").booleanValue()).isFalse();
            List<String> names = schema.get("required") == null
                    ? List.of()
                    : schema.get("required")
                            .valueStream()
                            .map(JsonNode::stringValue)
                            .toList();
            assertThat(names).as(name).isEqualTo(required.get(name));
            schema.get("properties").properties().forEach(property -> {
                assertThat(property.getValue().get("type").stringValue()).isEqualTo("string");
                assertThat(property.getValue().get("description").stringValue()).isNotBlank();
            });
            assertThat(callback.getToolDefinition().description()).hasSizeGreaterThan(40);
        }
        assertThat(callbacks.get(0).getToolDefinition().description())
                .contains("45 s")
                .contains("2048 bytes");
        assertThat(json.readTree(callbacks.get(1).getToolDefinition().inputSchema())
                        .at("/properties/language/enum")
                        .valueStream()
                        .map(JsonNode::stringValue)
                        .toList())
                .containsExactly("python", "javascript", "shell");
    }

    @Test
    void aPrefixNamesASecondSetOfTools() {
        assertThat(ScriptedChatModel.names(SandboxToolCallbacks.of(tools(), "build_")))
                .containsExactly(
                        "build_run_command",
                        "build_run_code",
                        "build_read_file",
                        "build_write_file",
                        "build_list_files");
        assertThatThrownBy(() -> SandboxToolCallbacks.of(tools(), "no spaces"))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("prefix")
                .hasMessageContaining("'no spaces'");
        assertThat(SandboxToolCallbacks.provider(tools()).getToolCallbacks()).hasSize(5);
    }
}
