package dev.sandbox.langchain4j;

import static dev.sandbox.langchain4j.ScriptedChatModel.call;
import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.service.AiServices;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import dev.sandbox.docker.RequiresDocker;
import dev.sandbox.tools.CodeLanguage;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The tools where untrusted code belongs, in a container: the model's command runs inside it, its files stay there,
 * and an image without the snippet's interpreter is an answer the model can act on.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerToolboxTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String RUN_LABEL = "sandbox-langchain4j-test";

    interface Assistant {
        String chat(String message);
    }

    private final String run = UUID.randomUUID().toString();
    private DockerSandboxProvider docker;
    private SandboxTools tools;

    @BeforeAll
    void start() {
        docker = DockerSandboxProvider.create(
                DockerSettings.of("sandbox-test:busybox").withPullPolicy(DockerSettings.PullPolicy.NEVER));
        tools = SandboxTools.lazy(docker, SessionOptions.defaults().withLabel(RUN_LABEL, run), ToolLimits.defaults());
    }

    @AfterAll
    void stop() {
        try {
            tools.close();
            assertThat(docker.list(Map.of(RUN_LABEL, run)).collectList().block(WAIT))
                    .as("sessions of this run left on the daemon after the tools closed")
                    .isEmpty();
        } finally {
            docker.close();
        }
    }

    @Test
    void theModelsCallsRunInTheContainer() {
        ScriptedChatModel model = ScriptedChatModel.calling(
                call("run_command", "command", "test -e /.dockerenv && readlink /bin/sh"),
                call("write_file", "path", "/tmp/model/note.txt", "content", "kept in the container\n"),
                call("run_code", "language", "shell", "code", "cat /tmp/model/note.txt; ls /tmp/model"),
                call("run_code", "language", "python", "code", "print(42)"));
        Assistant assistant = AiServices.builder(Assistant.class)
                .chatModel(model)
                .tools(SandboxToolbox.of(tools))
                .build();

        assistant.chat("look around");

        List<String> answers = model.lastResults().stream()
                .map(ToolExecutionResultMessage::text)
                .toList();
        // inside a container (/.dockerenv) of the busybox image, not on the host (whose sh is not busybox)
        assertThat(answers.get(0)).isEqualTo("exit code: 0\nstdout:\n/bin/busybox\nstderr: (empty)");
        assertThat(answers.get(1)).isEqualTo("wrote 22 bytes to /tmp/model/note.txt");
        assertThat(answers.get(2)).isEqualTo("exit code: 0\nstdout:\nkept in the container\nnote.txt\nstderr: (empty)");
        // busybox has no python3: an answer the model can read, not a failed chat
        assertThat(answers.get(3)).startsWith("python3 could not be started in this sandbox");
    }

    @Test
    void theEngineRunsShellInTheContainer() {
        SandboxCodeExecutionEngine shell = SandboxCodeExecutionEngine.of(tools, CodeLanguage.SHELL);

        assertThat(shell.execute("echo $((6 * 7)) > /tmp/answer; cat /tmp/answer; exit 4"))
                .isEqualTo("exit code: 4\nstdout:\n42\nstderr: (empty)");
    }
}
