package dev.sandbox.spring.ai.autoconfigure;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.spring.ai.SandboxToolCallbacks;
import dev.sandbox.tools.SandboxTools;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Offers the sandbox tools to a Spring AI application that has a {@link SandboxProvider} bean (from the sandbox
 * Spring Boot starter, or its own) and asks for them with {@code sandbox.ai.tools.enabled=true}: a {@link SandboxTools}
 * bean over one session of that provider, created on the
 * first tool call and destroyed when the context closes, and a {@link ToolCallbackProvider} bean named {@value
 * #TOOL_CALLBACK_PROVIDER} with the callbacks of {@link SandboxToolCallbacks}. Settings: {@link
 * SandboxAiToolsProperties} ({@code sandbox.ai.tools.*}); a bean of the same type ({@link SandboxTools}) or name ({@value #TOOL_CALLBACK_PROVIDER}) replaces the one here.
 *
 * <p>The tools share one sandbox between every conversation of the application. Give each conversation (or user) its
 * own with {@code SandboxToolCallbacks.of(SandboxTools.lazy(provider, options, limits))}, closed when it ends.
 *
 * <p>It is opt-in because the tools run code: Spring AI's MCP server starter publishes every {@link
 * ToolCallbackProvider} bean as MCP tools, so in an application that has it this bean offers the sandbox to every MCP
 * client of the application too, and with the local provider the sandbox is this machine. Adding the dependency alone
 * must not do that.
 *
 * <pre>{@code
 * @Bean
 * ChatClient chatClient(ChatClient.Builder builder, ToolCallbackProvider sandboxToolCallbackProvider) {
 *     return builder.defaultTools(sandboxToolCallbackProvider).build();
 * }
 * }</pre>
 */
@AutoConfiguration(afterName = "dev.sandbox.spring.boot.autoconfigure.SandboxAutoConfiguration")
@ConditionalOnClass({ToolCallback.class, SandboxTools.class})
@ConditionalOnBooleanProperty(name = SandboxAiToolsProperties.PREFIX + ".enabled")
@ConditionalOnBean(SandboxProvider.class)
@EnableConfigurationProperties(SandboxAiToolsProperties.class)
public class SandboxAiToolsAutoConfiguration {

    /** The name of the {@link ToolCallbackProvider} bean. */
    public static final String TOOL_CALLBACK_PROVIDER = "sandboxToolCallbackProvider";

    /** Creates the auto-configuration; Spring Boot does. */
    public SandboxAiToolsAutoConfiguration() {}

    /**
     * The tools over one session of the provider, created on the first call; closing the context destroys it.
     *
     * @param provider the application's sandbox provider
     * @param properties the settings
     * @return the tools
     * @throws InvalidArgumentException naming the property when a setting is out of range
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public SandboxTools sandboxTools(SandboxProvider provider, SandboxAiToolsProperties properties) {
        return SandboxTools.lazy(provider, properties.sessionOptions(), properties.limits());
    }

    /**
     * The sandbox tools as Spring AI callbacks, for {@code ChatClient.Builder.defaultTools(...)}.
     *
     * @param tools the tools
     * @param properties the settings, for the name prefix
     * @return the provider of the five callbacks
     * @throws InvalidArgumentException naming {@code sandbox.ai.tools.name-prefix} when it has characters a tool name
     *     may not have
     */
    @Bean(TOOL_CALLBACK_PROVIDER)
    @ConditionalOnMissingBean(name = TOOL_CALLBACK_PROVIDER)
    public ToolCallbackProvider sandboxToolCallbackProvider(SandboxTools tools, SandboxAiToolsProperties properties) {
        try {
            return ToolCallbackProvider.from(SandboxToolCallbacks.of(tools, properties.namePrefix()));
        } catch (InvalidArgumentException e) {
            String property = SandboxAiToolsProperties.PREFIX + ".name-prefix";
            throw new InvalidArgumentException(property, property + ": " + e.getMessage());
        }
    }
}
