package dev.sandbox.mcp;

import static dev.sandbox.mcp.McpClients.call;
import static dev.sandbox.mcp.McpClients.sessionId;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.server.SandboxServer;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The HTTP transport's bounds and ends: MCP client sessions are bounded (a DELETE frees one), and stopping the server
 * ends the clients' open streams at once (it does not wait out its stop timeout) and destroys the sandbox sessions.
 */
class SandboxMcpHttpLifecycleTest {
    private static final String TOKEN = "mcp-lifecycle-token-01234";

    private static McpAsyncClient client(SandboxServer server) {
        return McpClient.async(HttpClientStreamableHttpTransport.builder(server.baseUrl())
                        .endpoint("/mcp")
                        .httpRequestCustomizer((builder, method, uri, body, context) ->
                                builder.header("Authorization", "Bearer " + TOKEN))
                        .build())
                .requestTimeout(McpClients.WAIT)
                .build();
    }

    private static HttpResponse<String> initialize(SandboxServer server) throws Exception {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
        return HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(server.baseUrl() + "/mcp"))
                                .timeout(McpClients.WAIT)
                                .header("Authorization", "Bearer " + TOKEN)
                                .header("Content-Type", "application/json")
                                .header("Accept", "application/json, text/event-stream")
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void client_sessions_are_bounded_and_stopping_ends_streams_and_destroys_sessions() throws Exception {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            SandboxMcpServer mcp =
                    SandboxMcpServer.builder(provider).maxClients(1).build();
            SandboxServer server = SandboxServer.builder(provider)
                    .port(0)
                    .token(TOKEN.toCharArray())
                    .endpoint("/mcp", mcp.httpEndpoint())
                    .start();
            try {
                // one client session at most: a second initialize is refused until the first one is deleted
                HttpResponse<String> first = initialize(server);
                assertThat(first.statusCode()).isEqualTo(200);
                HttpResponse<String> second = initialize(server);
                assertThat(second.statusCode()).isEqualTo(503);
                assertThat(second.body()).contains("1 MCP sessions");
                HttpResponse<String> deleted = HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(URI.create(server.baseUrl() + "/mcp"))
                                        .timeout(McpClients.WAIT)
                                        .header("Authorization", "Bearer " + TOKEN)
                                        .header(
                                                "Mcp-Session-Id",
                                                first.headers()
                                                        .firstValue("mcp-session-id")
                                                        .orElseThrow())
                                        .DELETE()
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                assertThat(deleted.statusCode()).isEqualTo(200);

                // the SDK's client opens a GET stream for server messages after initializing, and keeps it open
                McpAsyncClient client = client(server);
                client.initialize().block(McpClients.WAIT);
                String id = sessionId(call(client, "create_session", Map.of()));
                String pwd = call(client, "run_command", Map.of("session_id", id, "command", "pwd"))
                        .text();
                Path workdir = Path.of(pwd.substring(pwd.indexOf("stdout:\n") + 8, pwd.indexOf("\nstderr:"))
                        .strip());
                assertThat(workdir).isDirectory();

                long start = System.nanoTime();
                server.stop(Duration.ofSeconds(20));
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                assertThat(took).as("stopping with an MCP client's stream open").isLessThan(Duration.ofSeconds(10));
                mcp.close();
                assertThat(Files.exists(workdir))
                        .as("the session's workdir after the MCP server closed")
                        .isFalse();
                client.close();
            } finally {
                server.close();
                mcp.close();
            }
        }
    }

    @Test
    void a_session_whose_lifetime_ran_out_no_longer_counts_nor_shows() throws Exception {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            SandboxMcpServer mcp =
                    SandboxMcpServer.builder(provider).maxSessions(1).build();
            SandboxServer server = SandboxServer.builder(provider)
                    .port(0)
                    .token(TOKEN.toCharArray())
                    .endpoint("/mcp", mcp.httpEndpoint())
                    .start();
            McpAsyncClient client = client(server);
            try {
                client.initialize().block(McpClients.WAIT);
                String first = sessionId(call(client, "create_session", Map.of("lifetime_seconds", 1)));
                McpClients.Answer full = call(client, "create_session", Map.of());
                assertThat(full.isError()).as(full.text()).isTrue();
                assertThat(full.text()).contains("already has 1 sessions");

                // the provider ends the session at its lifetime; the server then frees its place
                long deadline = System.nanoTime() + McpClients.WAIT.toNanos();
                McpClients.Answer second = call(client, "create_session", Map.of());
                while (second.isError() && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                    second = call(client, "create_session", Map.of());
                }
                String id = sessionId(second);
                assertThat(call(client, "list_sessions", Map.of()).text())
                        .contains(id)
                        .doesNotContain(first);
            } finally {
                client.closeGracefully().block(McpClients.WAIT);
                server.close();
                mcp.close();
            }
        }
    }
}
