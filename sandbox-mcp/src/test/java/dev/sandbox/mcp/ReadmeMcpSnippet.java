package dev.sandbox.mcp;

import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.server.SandboxServer;
import dev.sandbox.tools.ToolLimits;
import java.time.Duration;

/** The README's HTTP snippet, compiled so it cannot rot: the MCP endpoint mounted on a sandbox server. */
final class ReadmeMcpSnippet {
    private ReadmeMcpSnippet() {}

    // tag::mcp-http[]
    static void serveOverHttp(char[] token) {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create();
                SandboxMcpServer mcp = SandboxMcpServer.builder(provider)
                        .sessionOptions(SessionOptions.defaults().withLifetime(Duration.ofMinutes(30)))
                        .limits(ToolLimits.defaults().withTimeout(Duration.ofSeconds(30)))
                        .maxSessions(8)
                        .build();
                SandboxServer server = SandboxServer.builder(provider)
                        .port(7070)
                        .token(token)
                        .endpoint("/mcp", mcp.httpEndpoint()) // MCP clients use http://127.0.0.1:7070/mcp
                        .start()) {
            server.awaitStop();
        }
    }
    // end::mcp-http[]
}
