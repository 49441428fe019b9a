package dev.sandbox.mcp;

import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;

/**
 * An MCP server on stdio over the local provider, as a program (the README's stdio snippet): the stdio test launches
 * it as a real process. A SIGTERM (what MCP clients send when they close) destroys the sessions it created.
 */
public final class StdioMcpMain {
    private StdioMcpMain() {}

    /**
     * Serves until stdin ends or SIGTERM.
     *
     * @param args unused
     * @throws InterruptedException when interrupted
     */
    public static void main(String[] args) throws InterruptedException {
        LocalSandboxProvider provider = LocalSandboxProvider.create();
        SandboxMcpServer mcp = SandboxMcpServer.builder(provider)
                .limits(ToolLimits.defaults().withTimeout(Duration.ofSeconds(30)))
                .maxSessions(4)
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            mcp.close(); // destroys the sessions the client created
            provider.close();
        }));
        mcp.serveStdio(System.in, System.out); // stdout carries only MCP messages; logs go to stderr
    }
}
