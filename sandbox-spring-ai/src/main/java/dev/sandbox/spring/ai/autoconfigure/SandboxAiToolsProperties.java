package dev.sandbox.spring.ai.autoconfigure;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SessionOptions;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The settings of the sandbox tools the auto-configuration offers a Spring AI application, under {@code
 * sandbox.ai.tools}.
 *
 * <pre>{@code
 * sandbox.ai.tools.timeout=20s
 * sandbox.ai.tools.max-output-bytes=8192
 * sandbox.ai.tools.session-lifetime=2h
 * }</pre>
 *
 * @param enabled Whether to register the sandbox tools when a SandboxProvider bean exists (off unless set: the tools
 *     run code, and Spring AI's MCP server starter would publish them to the application's MCP clients).
 * @param timeout How long one command or snippet may run before it is killed.
 * @param maxOutputBytes How many bytes of each output stream (stdout, stderr) an answer shows.
 * @param maxReadBytes How many bytes of a file the read_file tool shows.
 * @param maxListEntries How many entries the list_files tool shows.
 * @param sessionLifetime How long the tools' sandbox lives from its first use. Unlimited when not set: it is destroyed
 *     when the application context closes (and a provider whose sessions can outlive the JVM ends it about a lease
 *     after the application died).
 * @param namePrefix Put before every tool name (letters, digits, '_' and '-'), such as 'sandbox_'.
 */
@ConfigurationProperties("sandbox.ai.tools")
public record SandboxAiToolsProperties(
        @DefaultValue("false") boolean enabled,
        @DefaultValue("60s") Duration timeout,
        @DefaultValue("16384") int maxOutputBytes,
        @DefaultValue("65536") int maxReadBytes,
        @DefaultValue("500") int maxListEntries,
        Duration sessionLifetime,
        @DefaultValue("") String namePrefix) {

    /** The prefix of these properties. */
    public static final String PREFIX = "sandbox.ai.tools";

    /**
     * The tool limits these properties describe.
     *
     * @return the limits
     * @throws InvalidArgumentException naming the property ({@code sandbox.ai.tools.timeout} and so on) and its value
     *     when one is out of range
     */
    public ToolLimits limits() {
        try {
            return new ToolLimits(timeout, maxOutputBytes, maxReadBytes, maxListEntries);
        } catch (InvalidArgumentException e) {
            String property = PREFIX + "." + kebab(e.field());
            throw new InvalidArgumentException(property, property + ": " + e.getMessage());
        }
    }

    /**
     * The options of the session the tools create on their first call.
     *
     * @return the session options
     * @throws InvalidArgumentException naming {@code sandbox.ai.tools.session-lifetime} when it is not positive
     */
    public SessionOptions sessionOptions() {
        if (sessionLifetime == null) {
            return SessionOptions.defaults().withUnlimitedLifetime();
        }
        if (sessionLifetime.isZero() || sessionLifetime.isNegative()) {
            throw new InvalidArgumentException(
                    PREFIX + ".session-lifetime",
                    PREFIX + ".session-lifetime must be positive, got " + sessionLifetime);
        }
        return SessionOptions.defaults().withLifetime(sessionLifetime);
    }

    private static String kebab(String camel) {
        StringBuilder out = new StringBuilder();
        for (char c : camel.toCharArray()) {
            if (Character.isUpperCase(c)) {
                out.append('-').append(Character.toLowerCase(c));
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
