package dev.sandbox.spring.ai;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;

/**
 * The README's Spring AI example (the region tagged {@code spring-ai}, which the README copies) compiles and works:
 * a scripted model asks the assistant's sandbox to run a snippet and reads the answer back.
 */
class ReadmeSpringAiExampleTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static List<String> sessionIds(SandboxProvider provider) {
        return provider.list(Map.of()).map(SessionInfo::id).collectList().block(WAIT);
    }

    @Test
    void theAssistantRunsTheModelsSnippetInItsSandboxAndDestroysItOnClose() {
        ScriptedChatModel model = ScriptedChatModel.calling(
                SandboxToolCallbacks.RUN_CODE, "{\"language\": \"shell\", \"code\": \"echo $((6 * 7)) > answer.txt\"}");
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            String reply;
            String sessionId;
            // tag::spring-ai[]
            // one sandbox per assistant, created by the model's first tool call; close() destroys it
            class SandboxAssistant implements AutoCloseable {
                private final SandboxTools tools;
                private final ChatClient chat;

                SandboxAssistant(ChatClient.Builder chatClientBuilder, SandboxProvider provider) {
                    ToolLimits limits = ToolLimits.defaults().withTimeout(Duration.ofSeconds(30));
                    tools = SandboxTools.lazy(provider, SessionOptions.defaults(), limits);
                    chat = chatClientBuilder
                            .defaultTools(SandboxToolCallbacks.provider(tools))
                            .build();
                }

                // blocks while the tools run: call it where blocking is allowed, never on an event loop
                String ask(String question) {
                    return chat.prompt(question).call().content();
                }

                @Override
                public void close() {
                    tools.close();
                }
            }
            // end::spring-ai[]
            try (SandboxAssistant assistant = new SandboxAssistant(ChatClient.builder(model), provider)) {
                reply = assistant.ask("What is six times seven? Leave the answer in answer.txt.");
                SandboxSession session = assistant.tools.session().block(WAIT);
                sessionId = session.id();
                byte[] answer = session.files().readAllBytes("answer.txt", 64).block(WAIT);
                assertThat(new String(answer, StandardCharsets.UTF_8)).isEqualTo("42\n");
                assertThat(sessionIds(provider)).contains(sessionId);
            }
            assertThat(reply).contains("exit code: 0");
            assertThat(sessionIds(provider))
                    .as("closing the assistant destroys its sandbox")
                    .doesNotContain(sessionId);
        }
    }
}
