package dev.sandbox.mcp;

import static dev.sandbox.mcp.McpClients.call;
import static dev.sandbox.mcp.McpClients.callWithProgress;
import static dev.sandbox.mcp.McpClients.sessionId;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.server.SandboxServer;
import dev.sandbox.tools.ToolLimits;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The MCP server over the streamable HTTP transport, mounted on a real {@link SandboxServer} on loopback under {@code
 * /mcp}, driven by the MCP SDK's own client ({@link HttpClientStreamableHttpTransport}) with the local provider.
 */
class SandboxMcpHttpTest {
    private static final String TOKEN = "mcp-test-token-0123456789";
    private static final String OTHER_TOKEN = "mcp-other-token-9876543210";

    static LocalSandboxProvider provider;
    static SandboxMcpServer mcp;
    static SandboxServer server;
    final List<McpAsyncClient> clients = new ArrayList<>();
    final McpClients.Progress progress = new McpClients.Progress();

    @BeforeAll
    static void start() {
        provider = LocalSandboxProvider.create();
        mcp = SandboxMcpServer.builder(provider)
                .limits(ToolLimits.defaults()
                        .withTimeout(Duration.ofSeconds(20))
                        .withMaxOutputBytes(4096))
                .build();
        server = SandboxServer.builder(provider)
                .port(0)
                .token(TOKEN.toCharArray())
                .token("other", OTHER_TOKEN.toCharArray())
                .endpoint("/mcp", mcp.httpEndpoint())
                .start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.stop(Duration.ofSeconds(5));
        }
        if (mcp != null) {
            mcp.close();
        }
        if (provider != null) {
            provider.close();
        }
    }

    @AfterEach
    void closeClients() {
        clients.forEach(c -> c.closeGracefully().block(McpClients.WAIT));
    }

    McpAsyncClient client(String token) {
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport.builder(server.baseUrl())
                .endpoint("/mcp")
                .httpRequestCustomizer(
                        (builder, method, uri, body, context) -> builder.header("Authorization", "Bearer " + token))
                .build();
        McpAsyncClient client = McpClient.async(transport)
                .requestTimeout(McpClients.WAIT)
                .progressConsumer(progress::record)
                .build();
        clients.add(client);
        client.initialize().block(McpClients.WAIT);
        return client;
    }

    @Test
    void lists_the_tools_with_their_schemas() {
        McpSchema.ListToolsResult tools = client(TOKEN).listTools().block(McpClients.WAIT);

        Map<String, McpSchema.Tool> byName =
                tools.tools().stream().collect(Collectors.toMap(McpSchema.Tool::name, t -> t));
        assertThat(byName.keySet()).containsExactlyInAnyOrderElementsOf(SandboxMcpServer.toolNames());
        assertThat(byName.keySet())
                .contains(
                        "create_session",
                        "list_sessions",
                        "destroy_session",
                        "run_command",
                        "run_code",
                        "read_file",
                        "write_file",
                        "list_files");
        McpSchema.Tool run = byName.get("run_command");
        assertThat(run.description()).contains("sh -c").contains("4096 bytes");
        assertThat(run.inputSchema()).containsEntry("type", "object");
        assertThat(run.inputSchema().get("required")).isEqualTo(List.of("session_id", "command"));
        @SuppressWarnings("unchecked")
        Map<String, Object> props = (Map<String, Object>) run.inputSchema().get("properties");
        assertThat(props).containsKeys("session_id", "command", "timeout_seconds");
        @SuppressWarnings("unchecked")
        Map<String, Object> language = (Map<String, Object>)
                ((Map<String, Object>) byName.get("run_code").inputSchema().get("properties")).get("language");
        assertThat(language.get("enum")).isEqualTo(List.of("python", "javascript", "shell"));
    }

    @Test
    void runs_a_command_streaming_its_lines_as_progress_before_the_result() {
        McpAsyncClient client = client(TOKEN);
        String id = sessionId(call(client, "create_session", Map.of("labels", Map.of("purpose", "http-test"))));

        McpClients.Answer answer = callWithProgress(
                client,
                progress,
                "run-1",
                "run_command",
                Map.of("session_id", id, "command", "echo one; echo two; echo three >&2; exit 3"));

        assertThat(answer.isError()).as(answer.text()).isFalse();
        assertThat(answer.text())
                .startsWith("exit code: 3")
                .contains("stdout:\none\ntwo")
                .contains("stderr:\nthree");
        List<String> lines = progress.messages("run-1");
        assertThat(lines).containsExactlyInAnyOrder("stdout: one", "stdout: two", "stderr: three");
        assertThat(lines.indexOf("stdout: one")).isLessThan(lines.indexOf("stdout: two"));
        assertThat(answer.progressBefore())
                .as("notifications received before the result")
                .isEqualTo(3);
        List<Double> counts = progress.received.stream()
                .filter(n -> "run-1".equals(n.progressToken()))
                .map(McpSchema.ProgressNotification::progress)
                .toList();
        assertThat(counts).containsExactly(1.0, 2.0, 3.0);
    }

    @Test
    void runs_code_writes_reads_and_lists_files_then_destroys_the_session() throws Exception {
        McpAsyncClient client = client(TOKEN);
        String id = sessionId(call(client, "create_session", Map.of("lifetime_seconds", 120)));
        assertThat(call(client, "list_sessions", Map.of()).text()).contains(id).contains("lifetime 2m");

        McpClients.Answer shell =
                call(client, "run_code", Map.of("session_id", id, "language", "shell", "code", "x=6; echo $((x * 7))"));
        assertThat(shell.text()).startsWith("exit code: 0").contains("stdout:\n42");

        McpClients.Answer wrote =
                call(client, "write_file", Map.of("session_id", id, "path", "notes/a.txt", "content", "hello mcp\n"));
        assertThat(wrote.isError()).as(wrote.text()).isFalse();
        assertThat(wrote.text()).contains("10 bytes").contains("notes/a.txt");
        assertThat(call(client, "read_file", Map.of("session_id", id, "path", "notes/a.txt"))
                        .text())
                .contains("hello mcp");
        assertThat(call(client, "list_files", Map.of("session_id", id, "path", "notes"))
                        .text())
                .contains("a.txt");
        assertThat(call(client, "run_command", Map.of("session_id", id, "command", "cat notes/a.txt"))
                        .text())
                .contains("hello mcp");

        McpClients.Answer destroyed = call(client, "destroy_session", Map.of("session_id", id));
        assertThat(destroyed.text()).isEqualTo("destroyed session " + id);
        McpClients.Answer after = call(client, "run_command", Map.of("session_id", id, "command", "true"));
        assertThat(after.isError()).isTrue();
        assertThat(after.text()).contains("no session '" + id + "'");
        assertThat(call(client, "list_sessions", Map.of()).text()).doesNotContain(id);
    }

    @Test
    void runs_python_when_the_host_has_it() {
        boolean ci = "true".equals(System.getenv("CI"));
        boolean python = Files.isExecutable(Path.of("/usr/bin/python3"))
                || System.getenv("PATH") != null
                        && java.util.Arrays.stream(System.getenv("PATH").split(":"))
                                .anyMatch(d -> Files.isExecutable(Path.of(d, "python3")));
        assumeTrue(ci || python, "python3 is not on this host (never skipped under CI=true)");
        McpAsyncClient client = client(TOKEN);
        String id = sessionId(call(client, "create_session", Map.of()));

        McpClients.Answer answer = call(
                client, "run_code", Map.of("session_id", id, "language", "python", "code", "print(sum(range(10)))"));

        assertThat(answer.text()).startsWith("exit code: 0").contains("stdout:\n45");
    }

    @Test
    void a_long_output_is_cut_and_so_is_its_stream_and_both_say_so() {
        McpAsyncClient client = client(TOKEN);
        String id = sessionId(call(client, "create_session", Map.of()));

        McpClients.Answer answer = callWithProgress(
                client, progress, "long", "run_command", Map.of("session_id", id, "command", "seq 1 20000"));

        assertThat(answer.text()).contains("exit code: 0").contains("truncated").contains("4096");
        assertThat(answer.text().length()).isLessThan(6000);
        List<String> streamed = progress.messages("long");
        assertThat(streamed)
                .as("lines streamed, at most 4096 characters' worth")
                .hasSizeLessThan(700);
        assertThat(streamed.get(0)).isEqualTo("stdout: 1");
        assertThat(streamed.get(streamed.size() - 1)).startsWith("[no more output is streamed");
        assertThat(answer.progressBefore()).isEqualTo(streamed.size());
    }

    @Test
    void a_call_may_shorten_the_timeout_and_the_answer_says_the_command_was_killed() {
        McpAsyncClient client = client(TOKEN);
        String id = sessionId(call(client, "create_session", Map.of()));

        McpClients.Answer answer = call(
                client,
                "run_command",
                Map.of("session_id", id, "command", "echo started; sleep 30", "timeout_seconds", 1));

        assertThat(answer.isError()).isFalse();
        assertThat(answer.text()).contains("timed out after 1").contains("started");
        McpClients.Answer tooLong =
                call(client, "run_command", Map.of("session_id", id, "command", "true", "timeout_seconds", 21));
        assertThat(tooLong.isError()).isTrue();
        assertThat(tooLong.text()).contains("timeout_seconds");
    }

    @Test
    void bad_arguments_are_tool_errors_naming_the_argument() {
        McpAsyncClient client = client(TOKEN);
        String id = sessionId(call(client, "create_session", Map.of()));

        McpClients.Answer noCommand = call(client, "run_command", Map.of("session_id", id));
        assertThat(noCommand.isError()).isTrue();
        assertThat(noCommand.text()).contains("command");

        McpClients.Answer zeroTimeout =
                call(client, "run_command", Map.of("session_id", id, "command", "true", "timeout_seconds", 0));
        assertThat(zeroTimeout.isError()).isTrue();
        assertThat(zeroTimeout.text()).contains("timeout_seconds");

        McpClients.Answer badLanguage =
                call(client, "run_code", Map.of("session_id", id, "language", "cobol", "code", "x"));
        assertThat(badLanguage.isError()).isTrue();
        assertThat(badLanguage.text()).contains("language");

        McpClients.Answer unknown = call(client, "read_file", Map.of("session_id", "no-such-session", "path", "a"));
        assertThat(unknown.isError()).isTrue();
        assertThat(unknown.text()).contains("no session 'no-such-session'").contains("create_session");
    }

    @Test
    void another_token_does_not_see_the_sessions() {
        McpAsyncClient mine = client(TOKEN);
        McpAsyncClient theirs = client(OTHER_TOKEN);
        String id = sessionId(call(mine, "create_session", Map.of()));

        assertThat(call(theirs, "list_sessions", Map.of()).text()).doesNotContain(id);
        McpClients.Answer used = call(theirs, "run_command", Map.of("session_id", id, "command", "true"));
        assertThat(used.isError()).isTrue();
        assertThat(used.text()).contains("no session '" + id + "'");
        assertThat(call(theirs, "destroy_session", Map.of("session_id", id)).isError())
                .isTrue();
        assertThat(call(mine, "run_command", Map.of("session_id", id, "command", "echo still here"))
                        .text())
                .contains("still here");
    }

    @Test
    void requests_without_the_token_or_with_a_wrong_one_are_refused() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String initialize = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
        HttpRequest.Builder post = HttpRequest.newBuilder(URI.create(server.baseUrl() + "/mcp"))
                .timeout(McpClients.WAIT)
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(initialize));

        HttpResponse<String> none = http.send(post.build(), HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> wrong = http.send(
                post.copy()
                        .header("Authorization", "Bearer not-the-token-at-all")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> right = http.send(
                post.copy().header("Authorization", "Bearer " + TOKEN).build(), HttpResponse.BodyHandlers.ofString());

        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(right.statusCode()).isEqualTo(200);
        String session = right.headers().firstValue("mcp-session-id").orElseThrow();
        assertThat(right.body()).contains("\"serverInfo\"").contains("\"sandbox\"");

        HttpResponse<String> otherTokensSession = http.send(
                HttpRequest.newBuilder(URI.create(server.baseUrl() + "/mcp"))
                        .timeout(McpClients.WAIT)
                        .header("Authorization", "Bearer " + OTHER_TOKEN)
                        .header("Mcp-Session-Id", session)
                        .DELETE()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(otherTokensSession.statusCode()).isEqualTo(404);
        HttpResponse<String> deleted = http.send(
                HttpRequest.newBuilder(URI.create(server.baseUrl() + "/mcp"))
                        .timeout(McpClients.WAIT)
                        .header("Authorization", "Bearer " + TOKEN)
                        .header("Mcp-Session-Id", session)
                        .DELETE()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(deleted.statusCode()).isEqualTo(200);
    }
}
