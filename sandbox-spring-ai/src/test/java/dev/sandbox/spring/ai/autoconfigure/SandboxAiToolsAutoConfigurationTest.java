package dev.sandbox.spring.ai.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.tools.SandboxTools;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.DefaultToolCallingChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

class SandboxAiToolsAutoConfigurationTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static LocalSandboxProvider provider;

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SandboxAiToolsAutoConfiguration.class));

    @BeforeAll
    static void provider() {
        provider = LocalSandboxProvider.create();
    }

    @AfterAll
    static void closeProvider() {
        provider.close();
    }

    /** The shared provider as the application's bean, which the context does not close (the test class does). */
    private ApplicationContextRunner withProvider() {
        return runner.withPropertyValues("sandbox.ai.tools.enabled=true")
                .withBean(SandboxProvider.class, () -> provider, definition -> definition.setDestroyMethodName(""));
    }

    private static List<String> names(ToolCallbackProvider callbacks) {
        return Arrays.stream(callbacks.getToolCallbacks())
                .map(callback -> callback.getToolDefinition().name())
                .toList();
    }

    private static List<String> sessionIds() {
        return provider.list(Map.of()).map(SessionInfo::id).collectList().block(WAIT);
    }

    @Test
    void aProviderBeanGetsTheToolsWithTheBoundSettingsAndClosingTheContextDestroysTheirSandbox() {
        AtomicReference<String> sessionId = new AtomicReference<>();
        withProvider()
                .withPropertyValues(
                        "sandbox.ai.tools.timeout=7s",
                        "sandbox.ai.tools.max-output-bytes=100",
                        "sandbox.ai.tools.name-prefix=sb_")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(SandboxTools.class);
                    SandboxTools tools = context.getBean(SandboxTools.class);
                    assertThat(tools.limits().timeout()).isEqualTo(Duration.ofSeconds(7));
                    assertThat(tools.limits().maxOutputBytes()).isEqualTo(100);
                    ToolCallbackProvider callbacks = context.getBean(
                            SandboxAiToolsAutoConfiguration.TOOL_CALLBACK_PROVIDER, ToolCallbackProvider.class);
                    assertThat(names(callbacks))
                            .containsExactly(
                                    "sb_run_command", "sb_run_code", "sb_read_file", "sb_write_file", "sb_list_files");

                    OneToolCall model = new OneToolCall(
                            "sb_run_command", "{\"command\": \"head -c 500 /dev/zero | tr '\\\\0' y\"}");
                    String reply = ChatClient.builder(model)
                            .defaultTools(callbacks)
                            .build()
                            .prompt("print 500 letters")
                            .call()
                            .content();

                    assertThat(reply)
                            .contains("exit code: 0")
                            .contains("yyyy")
                            .contains("100")
                            .contains("500");
                    assertThat(reply).doesNotContain("y".repeat(101));
                    sessionId.set(tools.session().block(WAIT).id());
                    assertThat(sessionIds()).contains(sessionId.get());
                });
        assertThat(sessionIds()).doesNotContain(sessionId.get());
    }

    @Test
    void noProviderBeanNoTools() {
        runner.run(context -> assertThat(context)
                .hasNotFailed()
                .doesNotHaveBean(SandboxTools.class)
                .doesNotHaveBean(ToolCallbackProvider.class));
    }

    @Test
    void offUnlessAskedFor() {
        runner.withBean(SandboxProvider.class, () -> provider, definition -> definition.setDestroyMethodName(""))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(SandboxTools.class)
                        .doesNotHaveBean(ToolCallbackProvider.class));
    }

    @Test
    void disabledByProperty() {
        withProvider()
                .withPropertyValues("sandbox.ai.tools.enabled=false")
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(SandboxTools.class)
                        .doesNotHaveBean(ToolCallbackProvider.class));
    }

    @Test
    void withoutSpringAiOnTheClassPathNothingIsRegistered() {
        withProvider()
                .withClassLoader(new FilteredClassLoader(ToolCallback.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(SandboxTools.class));
    }

    @Test
    void aBadSettingIsRefusedAtStartupNamingTheProperty() {
        withProvider()
                .withPropertyValues("sandbox.ai.tools.timeout=0s")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .isInstanceOf(InvalidArgumentException.class)
                        .hasMessageContaining("sandbox.ai.tools.timeout"));
        withProvider()
                .withPropertyValues("sandbox.ai.tools.max-list-entries=0")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("sandbox.ai.tools.max-list-entries"));
        withProvider()
                .withPropertyValues("sandbox.ai.tools.name-prefix=two words")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("sandbox.ai.tools.name-prefix")
                        .hasMessageContaining("'two words'"));
        withProvider()
                .withPropertyValues("sandbox.ai.tools.session-lifetime=-5s")
                .run(context -> assertThat(context.getStartupFailure())
                        .rootCause()
                        .hasMessageContaining("sandbox.ai.tools.session-lifetime"));
    }

    @Test
    void theApplicationsOwnBeansWin() {
        SandboxSession session = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            SandboxTools own = SandboxTools.of(session, ToolLimits.defaults().withMaxListEntries(3));
            withProvider().withBean(SandboxTools.class, () -> own).run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(SandboxTools.class)).isSameAs(own);
                assertThat(context.getBean(ToolCallbackProvider.class)
                                .getToolCallbacks()[4]
                                .getToolDefinition()
                                .description())
                        .contains("at most 3 entries");
            });
            ToolCallbackProvider ownCallbacks = ToolCallbackProvider.from(List.of());
            withProvider()
                    .withBean(
                            SandboxAiToolsAutoConfiguration.TOOL_CALLBACK_PROVIDER,
                            ToolCallbackProvider.class,
                            () -> ownCallbacks)
                    .run(context -> assertThat(context.getBean(ToolCallbackProvider.class))
                            .isSameAs(ownCallbacks));
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void theAutoConfigurationIsListedForSpringBoot() {
        List<String> candidates = ImportCandidates.load(
                        AutoConfiguration.class, getClass().getClassLoader())
                .getCandidates();
        assertThat(candidates).contains(SandboxAiToolsAutoConfiguration.class.getName());
    }

    /** A model that calls one tool, then answers the tool's answer as its text. */
    private static final class OneToolCall implements ChatModel {
        private final String tool;
        private final String arguments;

        OneToolCall(String tool, String arguments) {
            this.tool = tool;
            this.arguments = arguments;
        }

        @Override
        public ChatOptions getOptions() {
            return DefaultToolCallingChatOptions.builder().build();
        }

        @Override
        public ChatResponse call(Prompt prompt) {
            List<Message> conversation = prompt.getInstructions();
            if (conversation.get(conversation.size() - 1) instanceof ToolResponseMessage response) {
                return new ChatResponse(List.of(new Generation(
                        new AssistantMessage(response.getResponses().get(0).responseData()))));
            }
            return new ChatResponse(List.of(new Generation(AssistantMessage.builder()
                    .content("")
                    .toolCalls(List.of(new AssistantMessage.ToolCall("call-1", "function", tool, arguments)))
                    .build())));
        }
    }
}
