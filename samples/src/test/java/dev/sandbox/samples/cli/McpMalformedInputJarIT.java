package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@code java -jar sandbox.jar mcp}, as a user's MCP client starts it, fed a malformed line and then a request. */
class McpMalformedInputJarIT {
    @Test
    void the_jar_answers_a_malformed_line_serves_on_and_exits_when_stdin_ends() throws Exception {
        McpMalformedInputTest.Mcp mcp = McpMalformedInputTest.Mcp.start(JarCli.command("mcp", "--provider", "local"));
        try {
            mcp.send("hello");
            assertThat(mcp.answer()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,");
            mcp.send(McpMalformedInputTest.INITIALIZE);
            assertThat(mcp.answer()).contains("\"id\":1").contains("\"serverInfo\"");
            mcp.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            mcp.send("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
            assertThat(mcp.answer()).contains("\"id\":9").contains("\"result\"");
            mcp.send("{\"jsonrpc\":\"2.0\",\"id\":10}");
            assertThat(mcp.answer()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":10,\"error\":{\"code\":-32600,");
            mcp.in().write("{\"jsonrpc\":".getBytes(java.nio.charset.StandardCharsets.UTF_8)); // ends mid-message
            assertThat(mcp.endInput()).isZero();
            assertThat(mcp.answer()).contains("\"code\":-32700");
            assertThat(mcp.err().get(30, TimeUnit.SECONDS)).doesNotContain("Exception");
        } finally {
            mcp.process().destroyForcibly();
        }
    }
}
