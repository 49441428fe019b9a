package dev.sandbox.samples.cli;

import static dev.sandbox.samples.cli.McpCliTest.WAIT;
import static dev.sandbox.samples.cli.McpCliTest.call;
import static dev.sandbox.samples.cli.McpCliTest.cli;
import static dev.sandbox.samples.cli.McpCliTest.created;
import static dev.sandbox.samples.cli.McpCliTest.text;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.kubernetes.RequiresKubernetes;
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

/**
 * {@code sandbox mcp --provider kubernetes}: the tools in pods of the real cluster of {@code KUBECONFIG}, with the test
 * image, over stdio (the MCP client launches the CLI as a process, inheriting the environment).
 */
@RequiresKubernetes
class McpKubernetesCliTest {
    @Test
    void sandbox_mcp_works_in_kubernetes_sessions() {
        List<String> command = cli(
                "mcp",
                "--provider",
                "kubernetes",
                "--image",
                "sandbox-test:busybox",
                "--pull-policy",
                "never",
                "--timeout",
                "30s");
        McpAsyncClient client = McpClient.async(new StdioClientTransport(
                        ServerParameters.builder(command.get(0))
                                .args(command.subList(1, command.size()))
                                .addEnvVar("KUBECONFIG", System.getenv("KUBECONFIG"))
                                .build(),
                        McpJsonDefaults.getMapper()))
                .requestTimeout(Duration.ofSeconds(90))
                .initializationTimeout(WAIT)
                .build();
        try {
            client.initialize().block(WAIT);
            McpSchema.CallToolResult made = client.callTool(McpSchema.CallToolRequest.builder("create_session")
                            .arguments(Map.of())
                            .build())
                    .block(Duration.ofSeconds(90));
            assertThat(text(made)).contains("(kubernetes,");
            String id = created(made);
            assertThat(id).matches("kube-[0-9a-f]{16}");
            assertThat(text(call(
                            client,
                            "write_file",
                            Map.of("session_id", id, "path", "/tmp/mcp/in.txt", "content", "in a pod\n"))))
                    .contains("/tmp/mcp/in.txt");
            assertThat(text(call(
                            client,
                            "run_command",
                            Map.of("session_id", id, "command", "cat /tmp/mcp/in.txt; hostname"))))
                    .startsWith("exit code: 0")
                    .contains("in a pod", id);
        } finally {
            client.closeGracefully().block(WAIT);
        }
    }
}
