package dev.sandbox.samples.cli;

import static dev.sandbox.samples.cli.McpCliTest.WAIT;
import static dev.sandbox.samples.cli.McpCliTest.call;
import static dev.sandbox.samples.cli.McpCliTest.cli;
import static dev.sandbox.samples.cli.McpCliTest.created;
import static dev.sandbox.samples.cli.McpCliTest.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.docker.RequiresDocker;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code sandbox mcp --provider docker}: the tools in containers of the real daemon and test image, over stdio. */
@RequiresDocker
class McpDockerCliTest {
    @Test
    void without_a_provider_sandbox_mcp_serves_docker_sessions_and_says_so() {
        // no --provider: the daemon answers, so the default is Docker (with the test image: no test pulls)
        List<String> command = cli("mcp", "--image", DockerCliTest.TEST_IMAGE, "--pull", "never", "--timeout", "30s");
        McpAsyncClient client = McpClient.async(new StdioClientTransport(
                        ServerParameters.builder(command.get(0))
                                .args(command.subList(1, command.size()))
                                .build(),
                        McpJsonDefaults.getMapper()))
                .requestTimeout(Duration.ofSeconds(90))
                .initializationTimeout(WAIT)
                .build();
        try {
            McpSchema.InitializeResult init = client.initialize().block(WAIT);
            assertThat(init.instructions()).contains("Docker container").doesNotContain("NO isolation");
            assertThat(McpCliTest.description(client.listTools().block(WAIT).tools(), "create_session"))
                    .contains("a Docker container of its own")
                    .doesNotContain("host processes");
            McpSchema.CallToolResult made = client.callTool(McpSchema.CallToolRequest.builder("create_session")
                            .arguments(Map.of())
                            .build())
                    .block(Duration.ofSeconds(90));
            assertThat(text(made)).contains("(docker,");
            String id = created(made);
            assertThat(text(call(client, "run_command", Map.of("session_id", id, "command", "echo in-docker"))))
                    .startsWith("exit code: 0")
                    .contains("in-docker");
        } finally {
            client.closeGracefully().block(WAIT);
        }
    }

    @Test
    void sandbox_mcp_works_in_docker_sessions() {
        List<String> command = cli(
                "mcp",
                "--provider",
                "docker",
                "--image",
                DockerCliTest.TEST_IMAGE,
                "--pull",
                "never",
                "--timeout",
                "30s");
        ServerParameters params = ServerParameters.builder(command.get(0))
                .args(command.subList(1, command.size()))
                .build();
        McpAsyncClient client = McpClient.async(new StdioClientTransport(params, McpJsonDefaults.getMapper()))
                .requestTimeout(Duration.ofSeconds(90))
                .initializationTimeout(WAIT)
                .build();
        try {
            client.initialize().block(WAIT);
            McpSchema.CallToolResult made = client.callTool(McpSchema.CallToolRequest.builder("create_session")
                            .arguments(Map.of())
                            .build())
                    .block(Duration.ofSeconds(90));
            String id = created(made);
            assertThat(text(made)).contains("(docker,");
            assertThat(text(call(
                            client,
                            "write_file",
                            Map.of("session_id", id, "path", "/tmp/mcp/in.txt", "content", "in a container\n"))))
                    .contains("/tmp/mcp/in.txt");
            assertThat(text(call(client, "read_file", Map.of("session_id", id, "path", "/tmp/mcp/in.txt"))))
                    .contains("in a container");
            assertThat(text(call(client, "list_files", Map.of("session_id", id, "path", "/tmp/mcp"))))
                    .contains("in.txt");
            assertThat(text(call(
                            client,
                            "run_command",
                            Map.of("session_id", id, "command", "wc -c < /tmp/mcp/in.txt; hostname"))))
                    .startsWith("exit code: 0")
                    .contains("15");
        } finally {
            client.closeGracefully().block(WAIT);
        }
    }
}
