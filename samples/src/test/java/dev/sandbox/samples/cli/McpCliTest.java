package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;

/**
 * {@code sandbox mcp} (stdio) and {@code sandbox serve}'s {@code /mcp} (streamable HTTP) as real processes of the CLI
 * (its main class on this test's class path), driven by the MCP SDK's own client.
 */
class McpCliTest {
    static final Duration WAIT = Duration.ofSeconds(30);
    private static final String TOKEN = "cli-mcp-token-0123456789";

    static List<String> cli(String... args) {
        List<String> command = new java.util.ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                SandboxCli.class.getName()));
        command.addAll(List.of(args));
        return command;
    }

    static McpSchema.CallToolResult call(McpAsyncClient client, String tool, Map<String, Object> args) {
        return client.callTool(
                        McpSchema.CallToolRequest.builder(tool).arguments(args).build())
                .block(WAIT);
    }

    static String text(McpSchema.CallToolResult r) {
        return r.content().stream().map(c -> ((McpSchema.TextContent) c).text()).reduce("", String::concat);
    }

    static String created(McpSchema.CallToolResult r) {
        Matcher m = Pattern.compile("created session (\\S+) ").matcher(text(r));
        assertThat(m.find()).as(text(r)).isTrue();
        return m.group(1);
    }

    @Test
    void sandbox_mcp_serves_the_tools_on_stdio() {
        List<String> command = cli("mcp", "--max-sessions", "1", "--timeout", "20s", "--max-output", "2k");
        ServerParameters params = ServerParameters.builder(command.get(0))
                .args(command.subList(1, command.size()))
                .build();
        List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
        McpAsyncClient client = McpClient.async(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
                .requestTimeout(WAIT)
                .initializationTimeout(WAIT)
                .progressConsumer(n -> Mono.fromRunnable(() -> progress.add(n)))
                .build();
        try {
            client.initialize().block(WAIT);
            assertThat(client.listTools().block(WAIT).tools())
                    .extracting(McpSchema.Tool::name)
                    .contains("create_session", "run_command", "run_code", "read_file", "write_file", "list_files");

            String id = created(call(client, "create_session", Map.of()));
            McpSchema.CallToolResult full = call(client, "create_session", Map.of());
            assertThat(full.isError()).isTrue();
            assertThat(text(full)).contains("already has 1 sessions");

            McpSchema.CallToolResult run = client.callTool(McpSchema.CallToolRequest.builder("run_command")
                            .arguments(Map.of("session_id", id, "command", "echo from-cli"))
                            .progressToken("p")
                            .build())
                    .block(WAIT);
            assertThat(text(run)).startsWith("exit code: 0").contains("from-cli");
            assertThat(progress)
                    .extracting(McpSchema.ProgressNotification::message)
                    .contains("stdout: from-cli");

            McpSchema.CallToolResult big =
                    call(client, "run_command", Map.of("session_id", id, "command", "seq 1 5000"));
            assertThat(text(big)).contains("truncated").contains("2048");
        } finally {
            client.closeGracefully().block(WAIT);
        }
    }

    @Test
    void sandbox_serve_answers_mcp_under_slash_mcp_with_its_token(@TempDir Path dir) throws Exception {
        Path tokenFile = JarCli.tokenFile(dir.resolve("token"), TOKEN);
        Process serve = new ProcessBuilder(cli("serve", "--port", "0", "--token-file", tokenFile.toString()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        McpAsyncClient client = null;
        try {
            String url = servingUrl(serve);

            client = McpClient.async(HttpClientStreamableHttpTransport.builder(url)
                            .endpoint("/mcp")
                            .httpRequestCustomizer(
                                    (b, method, uri, body, ctx) -> b.header("Authorization", "Bearer " + TOKEN))
                            .build())
                    .requestTimeout(WAIT)
                    .build();
            client.initialize().block(WAIT);
            String id = created(call(client, "create_session", Map.of("labels", Map.of("via", "serve"))));
            assertThat(text(call(client, "list_sessions", Map.of())))
                    .contains(id)
                    .contains("via=serve");
            assertThat(text(call(
                            client,
                            "run_code",
                            Map.of("session_id", id, "language", "shell", "code", "echo served-over-http"))))
                    .contains("served-over-http");

            java.net.http.HttpResponse<String> refused = java.net.http.HttpClient.newHttpClient()
                    .send(
                            java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/mcp"))
                                    .header("Accept", "application/json, text/event-stream")
                                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}"))
                                    .timeout(WAIT)
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(refused.statusCode()).isEqualTo(401);
        } finally {
            if (client != null) {
                client.closeGracefully().block(WAIT);
            }
            serve.destroy();
            assertThat(serve.waitFor(30, TimeUnit.SECONDS))
                    .as("serve stopped on SIGTERM")
                    .isTrue();
        }
    }

    @Test
    void sandbox_serve_with_no_mcp_sessions_serves_no_mcp(@TempDir Path dir) throws Exception {
        Path tokenFile = JarCli.tokenFile(dir.resolve("token"), TOKEN);
        Process serve = new ProcessBuilder(
                        cli("serve", "--port", "0", "--mcp-max-sessions", "0", "--token-file", tokenFile.toString()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            String url = servingUrl(serve);
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            java.net.http.HttpResponse<String> mcp = http.send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/mcp"))
                            .header("Authorization", "Bearer " + TOKEN)
                            .header("Accept", "application/json, text/event-stream")
                            .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}"))
                            .timeout(WAIT)
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(mcp.statusCode()).as("POST /mcp with a good token").isEqualTo(404);
            java.net.http.HttpResponse<String> rest = http.send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/v1/sessions"))
                            .header("Authorization", "Bearer " + TOKEN)
                            .timeout(WAIT)
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(rest.statusCode()).as("the REST API still serves").isEqualTo(200);
        } finally {
            serve.destroy();
            assertThat(serve.waitFor(30, TimeUnit.SECONDS))
                    .as("serve stopped on SIGTERM")
                    .isTrue();
        }
    }

    @Test
    void sandbox_mcp_on_the_remote_provider_runs_its_sessions_on_a_server_and_ends_them_when_the_client_leaves(
            @TempDir Path dir) throws Exception {
        Path tokenFile = JarCli.tokenFile(dir.resolve("token"), TOKEN);
        Process serve = new ProcessBuilder(cli("serve", "--port", "0", "--token-file", tokenFile.toString()))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            String url = servingUrl(serve);
            List<String> command = cli(
                    "mcp",
                    "--provider",
                    "remote",
                    "--url",
                    url,
                    "--token-file",
                    tokenFile.toString(),
                    "--timeout",
                    "20s");
            McpAsyncClient client = McpClient.async(new StdioClientTransport(
                            ServerParameters.builder(command.get(0))
                                    .args(command.subList(1, command.size()))
                                    .build(),
                            McpJsonDefaults.getMapper()))
                    .requestTimeout(WAIT)
                    .initializationTimeout(WAIT)
                    .build();
            String id;
            try {
                client.initialize().block(WAIT);
                id = created(call(client, "create_session", Map.of("labels", Map.of("via", "remote"))));
                assertThat(text(call(client, "run_command", Map.of("session_id", id, "command", "echo remote-ran"))))
                        .startsWith("exit code: 0")
                        .contains("remote-ran");
                assertThat(text(call(
                                client,
                                "write_file",
                                Map.of("session_id", id, "path", "note.txt", "content", "kept on the server"))))
                        .contains("note.txt");
                // the session lives on the server: its REST API lists it and reads the file
                assertThat(sessionsOnServer(url)).contains(id);
                assertThat(text(call(client, "read_file", Map.of("session_id", id, "path", "note.txt"))))
                        .contains("kept on the server");
                // a tree of files makes the session's destroy take a while, long enough for the client's SIGTERM
                // (a moment after it closes stdin) to arrive while the MCP process is destroying the session
                assertThat(text(call(
                                client,
                                "run_command",
                                Map.of(
                                        "session_id",
                                        id,
                                        "command",
                                        "mkdir -p t && cd t && seq 1 20000 | xargs touch && ls | wc -l"))))
                        .startsWith("exit code: 0")
                        .contains("20000");
            } finally {
                // closes the process's stdin, SIGTERMs it 100 ms later and waits for it to exit
                client.closeGracefully().block(WAIT);
            }
            // the MCP process destroyed its sessions on the server before it exited, whichever of stdin's end and the
            // signal came first
            assertThat(sessionsOnServer(url))
                    .as("sessions on the server once the MCP process has exited")
                    .doesNotContain(id);
        } finally {
            serve.destroy();
            assertThat(serve.waitFor(30, TimeUnit.SECONDS))
                    .as("serve stopped on SIGTERM")
                    .isTrue();
        }
    }

    /** The body of the server's {@code GET /v1/sessions}. */
    private static String sessionsOnServer(String url) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/v1/sessions"))
                                .header("Authorization", "Bearer " + TOKEN)
                                .timeout(WAIT)
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("GET /v1/sessions").isEqualTo(200);
        return r.body();
    }

    /** The URL {@code sandbox serve} prints on its first line, waited for at most {@link #WAIT}. */
    private static String servingUrl(Process serve) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(serve.getInputStream(), StandardCharsets.UTF_8));
        String line = CompletableFuture.supplyAsync(() -> {
                    try {
                        return out.readLine();
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                })
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(line).as("serve's first line").contains("serving local sessions on http://");
        return line.substring(line.indexOf("http://")).trim();
    }
}
