package dev.sandbox.mcp;

import static dev.sandbox.mcp.McpClients.call;
import static dev.sandbox.mcp.McpClients.callWithProgress;
import static dev.sandbox.mcp.McpClients.sessionId;
import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The MCP server on stdio as a real process ({@link StdioMcpMain} on this test's class path), driven by the MCP SDK's
 * own client ({@link StdioClientTransport}): the tools, a command streamed as progress, and the sessions destroyed
 * when the client closes the server.
 */
class SandboxMcpStdioTest {

    @Test
    void serves_the_tools_on_stdio_and_destroys_its_sessions_when_closed() {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ServerParameters params = ServerParameters.builder(java)
                .args(
                        "--enable-native-access=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        StdioMcpMain.class.getName())
                .build();
        McpClients.Progress progress = new McpClients.Progress();
        McpAsyncClient client = McpClient.async(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
                .requestTimeout(McpClients.WAIT)
                .initializationTimeout(McpClients.WAIT)
                .progressConsumer(progress::record)
                .build();
        Path workdir;
        try {
            McpSchema.InitializeResult init = client.initialize().block(McpClients.WAIT);
            assertThat(init.serverInfo().name()).isEqualTo("sandbox");
            assertThat(client.listTools().block(McpClients.WAIT).tools())
                    .extracting(McpSchema.Tool::name)
                    .containsExactlyElementsOf(SandboxMcpServer.toolNames());

            String id = sessionId(call(client, "create_session", Map.of()));
            McpClients.Answer answer = callWithProgress(
                    client, progress, 7, "run_command", Map.of("session_id", id, "command", "printf 'a\\nb\\n'; pwd"));

            assertThat(answer.text()).startsWith("exit code: 0").contains("stdout:\na\nb\n");
            List<String> lines = progress.messages(7);
            assertThat(lines).hasSize(3).startsWith("stdout: a", "stdout: b");
            assertThat(answer.progressBefore()).isEqualTo(3);
            workdir = Path.of(lines.get(2).substring("stdout: ".length()));
            assertThat(workdir).isDirectory();

            // calls at once: their progress and results share stdout, written by several threads
            List<McpClients.Answer> answers = reactor.core.publisher.Flux.range(0, 12)
                    .flatMap(
                            i -> client.callTool(McpSchema.CallToolRequest.builder("run_command")
                                            .arguments(Map.of("session_id", id, "command", "seq 1 40; echo done-" + i))
                                            .progressToken("c" + i)
                                            .build())
                                    .map(r -> new McpClients.Answer(
                                            r, progress.messages("c" + i).size())),
                            12)
                    .collectList()
                    .block(McpClients.WAIT);
            assertThat(answers).hasSize(12).allSatisfy(a -> assertThat(a.text()).startsWith("exit code: 0"));
            for (int i = 0; i < 12; i++) {
                assertThat(progress.messages("c" + i))
                        .as("progress of call " + i)
                        .hasSize(41)
                        .endsWith("stdout: done-" + i);
            }
        } finally {
            client.closeGracefully().block(McpClients.WAIT);
        }
        assertThat(Files.exists(workdir))
                .as("the session's workdir after the server stopped")
                .isFalse();
    }
}
