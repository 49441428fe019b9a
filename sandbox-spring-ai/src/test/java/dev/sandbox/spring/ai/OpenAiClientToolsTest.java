package dev.sandbox.spring.ai;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.JsonNode;

/**
 * Spring AI's real OpenAI model client, over real HTTP to a scripted OpenAI-compatible server on loopback, calls the
 * sandbox tools: the tool definitions reach the wire as OpenAI function tools with their JSON schemas, the model's
 * tool call runs in the sandbox, and its answer goes back to the model as a tool message, with {@code call()} and with
 * {@code stream()}.
 */
class OpenAiClientToolsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String SNIPPET =
            "{\"language\": \"shell\", \"code\": \"echo $((6 * 7)) from $(basename $PWD)\"}";

    private static LocalSandboxProvider provider;
    private SandboxSession session;
    private SandboxTools tools;
    private ScriptedOpenAiServer server;

    @BeforeAll
    static void provider() {
        provider = LocalSandboxProvider.create();
    }

    @AfterAll
    static void closeProvider() {
        provider.close();
    }

    @BeforeEach
    void start() {
        session = provider.create(SessionOptions.defaults()).block(WAIT);
        tools = SandboxTools.of(session, ToolLimits.defaults().withTimeout(Duration.ofSeconds(20)));
        server = new ScriptedOpenAiServer(SandboxToolCallbacks.RUN_CODE, SNIPPET);
    }

    @AfterEach
    void stop() {
        server.close();
        session.destroy().block(WAIT);
    }

    private ChatClient chatClient(List<ToolCallback> callbacks) {
        OpenAiChatModel model = OpenAiChatModel.builder()
                .options(OpenAiChatOptions.builder()
                        .baseUrl(server.baseUrl())
                        .apiKey("not-a-real-key")
                        .model("scripted")
                        .maxRetries(0)
                        .build())
                .build();
        return ChatClient.builder(model).defaultTools(callbacks).build();
    }

    @Test
    void callSendsTheToolsAsOpenAiFunctionsAndReturnsTheSandboxAnswerToTheModel() {
        String reply = chatClient(SandboxToolCallbacks.of(tools))
                .prompt("What is six times seven?")
                .call()
                .content();

        String workdir = session.run(ExecOptions.shell("basename $PWD"))
                .block(WAIT)
                .stdout()
                .strip();
        assertThat(reply)
                .startsWith(ScriptedOpenAiServer.PREFIX + "exit code: 0")
                .contains("42 from " + workdir);
        List<JsonNode> requests = server.requests();
        assertThat(requests).hasSize(2);
        JsonNode offered = requests.get(0).get("tools");
        assertThat(offered.valueStream()
                        .map(t -> t.at("/function/name").stringValue())
                        .toList())
                .containsExactly("run_command", "run_code", "read_file", "write_file", "list_files");
        JsonNode runCode = offered.get(1).get("function");
        assertThat(runCode.at("/parameters/required").valueStream().map(JsonNode::stringValue))
                .containsExactly("language", "code");
        assertThat(runCode.get("description").stringValue()).contains("Python");
        JsonNode toolMessage = requests.get(1)
                .get("messages")
                .get(requests.get(1).get("messages").size() - 1);
        assertThat(toolMessage.get("role").stringValue()).isEqualTo("tool");
        assertThat(toolMessage.get("tool_call_id").stringValue()).isEqualTo("call_1");
    }

    @Test
    void streamThroughTheOpenAiClientRunsTheToolOnBoundedElastic() {
        Queue<String> toolThreads = new ConcurrentLinkedQueue<>();
        List<ToolCallback> recording = SandboxToolCallbacks.of(tools).stream()
                .map(callback -> (ToolCallback) new ToolCallback() {
                    @Override
                    public ToolDefinition getToolDefinition() {
                        return callback.getToolDefinition();
                    }

                    @Override
                    public String call(String toolInput) {
                        toolThreads.add(Thread.currentThread().getName());
                        return callback.call(toolInput);
                    }
                })
                .toList();

        String reply = String.join(
                "",
                chatClient(recording).prompt("What is six times seven?").stream()
                        .content()
                        .subscribeOn(Schedulers.parallel())
                        .collectList()
                        .block(WAIT));

        assertThat(reply)
                .startsWith(ScriptedOpenAiServer.PREFIX + "exit code: 0")
                .contains("42 from ");
        assertThat(toolThreads).singleElement().asString().startsWith("boundedElastic-");
        assertThat(server.requests()).hasSize(2).allMatch(r -> r.get("stream").booleanValue());
    }
}
