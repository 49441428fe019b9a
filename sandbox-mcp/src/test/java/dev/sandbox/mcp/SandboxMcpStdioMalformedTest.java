package dev.sandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.local.LocalSandboxProvider;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link SandboxMcpServer#serveStdio} fed raw lines: JSON-RPC errors for what is not a message, serving on, and a
 * return at the input's end whatever came before.
 */
class SandboxMcpStdioMalformedTest {
    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
            + "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}";

    /** The server's next line, waited for at most 30 s. */
    private static String next(BlockingQueue<String> lines) throws InterruptedException {
        String line = lines.poll(30, TimeUnit.SECONDS);
        assertThat(line).as("an answer within 30 s").isNotNull();
        return line;
    }

    @Test
    void answers_bad_lines_with_json_rpc_errors_and_returns_when_the_input_ends() throws Exception {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create();
                SandboxMcpServer mcp = SandboxMcpServer.builder(provider).build()) {
            PipedOutputStream client = new PipedOutputStream();
            PipedInputStream in = new PipedInputStream(client, 65536);
            PipedInputStream answers = new PipedInputStream(65536);
            PipedOutputStream out = new PipedOutputStream(answers);
            BufferedReader reader = new BufferedReader(new InputStreamReader(answers, StandardCharsets.UTF_8));
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread collector = new Thread(() -> {
                try {
                    for (String line; (line = reader.readLine()) != null; ) {
                        lines.add(line);
                    }
                } catch (java.io.IOException e) {
                    // the server's side of the pipe ended
                }
            });
            collector.setDaemon(true);
            collector.start();
            CompletableFuture<Void> served = CompletableFuture.runAsync(() -> {
                try {
                    mcp.serveStdio(in, out);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            client.write(("{oops\n\n{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":7}\n"
                            + INITIALIZE
                            + "\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                            + "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n")
                    .getBytes(StandardCharsets.UTF_8));
            client.flush();
            assertThat(next(lines))
                    .startsWith(
                            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error");
            assertThat(next(lines))
                    .isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32600,\"message\":"
                            + "\"Invalid Request: \\\"method\\\" must be a string\"}}");
            assertThat(next(lines))
                    .contains("\"id\":1")
                    .contains("\"serverInfo\"")
                    .contains("NO isolation");
            assertThat(next(lines)).contains("\"id\":4").contains("\"result\"");

            client.write("{\"jsonrpc\": [".getBytes(StandardCharsets.UTF_8)); // the input ends mid-message
            client.close();
            served.get(30, TimeUnit.SECONDS);
            assertThat(next(lines)).contains("\"code\":-32700");
        }
    }
}
