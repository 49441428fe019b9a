package dev.sandbox.spring.ai;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import dev.sandbox.docker.RequiresDocker;
import dev.sandbox.spring.ai.ScriptedChatModel.Call;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;

/**
 * The tools on a Docker sandbox (the busybox test image, which has no Python): the model's first call creates the
 * container within the call's wait, the answers are the same as on the local provider, a missing interpreter is an
 * answer, and closing the tools removes the container.
 */
@RequiresDocker
class DockerToolsTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String LABEL = "spring-ai-tools-test";

    private static DockerSandboxProvider docker;
    private final String run = UUID.randomUUID().toString();

    @BeforeAll
    static void docker() {
        docker = DockerSandboxProvider.create(
                DockerSettings.of("sandbox-test:busybox").withPullPolicy(DockerSettings.PullPolicy.NEVER));
    }

    @AfterAll
    static void closeDocker() {
        docker.close();
    }

    private List<String> sessionsOfThisRun() {
        return docker.list(Map.of(LABEL, run))
                .map(SessionInfo::id)
                .collectList()
                .block(WAIT);
    }

    @Test
    void aModelWorksInAContainerItsFirstCallCreatesAndClosingTheToolsRemovesIt() {
        ScriptedChatModel model = ScriptedChatModel.calling(
                new Call(SandboxToolCallbacks.RUN_COMMAND, "{\"command\": \"uname -s; id -un\"}"),
                new Call(SandboxToolCallbacks.WRITE_FILE, "{\"path\": \"/tmp/out/n.txt\", \"content\": \"42\"}"),
                new Call(SandboxToolCallbacks.RUN_CODE, "{\"language\": \"shell\", \"code\": \"cat /tmp/out/n.txt\"}"),
                new Call(SandboxToolCallbacks.RUN_CODE, "{\"language\": \"python\", \"code\": \"print(1)\"}"));
        SandboxTools tools = SandboxTools.lazy(
                docker,
                SessionOptions.defaults().withLabel(LABEL, run),
                ToolLimits.defaults().withTimeout(Duration.ofSeconds(20)));
        try {
            assertThat(sessionsOfThisRun())
                    .as("no container before the first tool call")
                    .isEmpty();

            ChatClient.create(model)
                    .prompt("use the sandbox")
                    .tools(SandboxToolCallbacks.of(tools))
                    .call()
                    .content();

            List<String> answers = model.toolAnswers();
            assertThat(answers).hasSize(4);
            assertThat(answers.get(0)).startsWith("exit code: 0\nstdout:\nLinux\n");
            assertThat(answers.get(1)).isEqualTo("wrote 2 bytes to /tmp/out/n.txt");
            assertThat(answers.get(2)).startsWith("exit code: 0\nstdout:\n42");
            assertThat(answers.get(3)).startsWith("python3 could not be started in this sandbox");
            assertThat(sessionsOfThisRun()).hasSize(1);
        } finally {
            tools.close();
        }
        assertThat(sessionsOfThisRun())
                .as("the container is removed when the tools close")
                .isEmpty();
    }
}
