package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code sandbox mcp} as a real process fed raw lines: malformed input is answered with JSON-RPC errors, the server
 * keeps serving, and it exits when stdin ends whatever came before.
 */
class McpMalformedInputTest {
    static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
            + "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
            + "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}";

    /** A running {@code sandbox mcp} with its stdin to write to and its stdout read line by line. */
    record Mcp(Process process, OutputStream in, BufferedReader out, CompletableFuture<String> err) {
        static Mcp start(String... args) throws Exception {
            return start(McpCliTest.cli(args));
        }

        static Mcp start(List<String> command) throws Exception {
            Process p = new ProcessBuilder(command).start();
            return new Mcp(
                    p,
                    p.getOutputStream(),
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)),
                    JarCli.drain(p.getErrorStream()));
        }

        void send(String line) throws Exception {
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        }

        String answer() throws Exception {
            CompletableFuture<String> line = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    line.complete(out.readLine());
                } catch (Exception e) {
                    line.completeExceptionally(e);
                }
            });
            t.setDaemon(true);
            t.start();
            return line.get(30, TimeUnit.SECONDS);
        }

        /** Closes stdin and returns the exit code, failing when the process has not exited within 30 s. */
        int endInput() throws Exception {
            in.close();
            boolean exited = process.waitFor(30, TimeUnit.SECONDS);
            if (!exited) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            assertThat(exited)
                    .as("sandbox mcp exited within 30 s of its stdin's end")
                    .isTrue();
            return process.exitValue();
        }
    }

    @Test
    void malformed_lines_get_json_rpc_errors_and_the_server_keeps_serving_until_stdin_ends() throws Exception {
        Mcp mcp = Mcp.start("mcp", "--provider", "local");
        try {
            mcp.send("hello");
            assertThat(mcp.answer())
                    .startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,")
                    .contains("Parse error");
            mcp.send("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":"); // cut short
            assertThat(mcp.answer()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,");
            mcp.send("[1,2]");
            assertThat(mcp.answer())
                    .startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,")
                    .contains("batches");
            mcp.send("42");
            assertThat(mcp.answer()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,");
            mcp.send("{\"jsonrpc\":\"2.0\",\"id\":7}");
            assertThat(mcp.answer())
                    .startsWith("{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32600,")
                    .contains("neither");
            mcp.send("{\"jsonrpc\":\"1.0\",\"id\":\"x\",\"method\":\"ping\"}");
            assertThat(mcp.answer()).startsWith("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32600,");

            // still serving: the MCP handshake and a request answer as usual
            mcp.send(INITIALIZE);
            assertThat(mcp.answer()).contains("\"id\":1").contains("\"serverInfo\"");
            mcp.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
            mcp.send("not json either");
            assertThat(mcp.answer()).contains("\"code\":-32700");
            mcp.send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
            assertThat(mcp.answer()).contains("\"id\":2").contains("run_command");

            assertThat(mcp.endInput()).isZero();
            assertThat(mcp.err().get(30, TimeUnit.SECONDS))
                    .as("stderr")
                    .doesNotContain("Exception")
                    .doesNotContain("\tat ");
        } finally {
            mcp.process().destroyForcibly();
        }
    }

    @Test
    void stdin_ending_right_after_a_malformed_line_ends_the_server() throws Exception {
        for (String last : List.of("hello", "{\"unterminated\": ", "{\"jsonrpc\":\"2.0\"}")) {
            Mcp mcp = Mcp.start("mcp", "--provider", "local");
            try {
                mcp.in().write(last.getBytes(StandardCharsets.UTF_8)); // no newline: the input ends mid-line
                assertThat(mcp.endInput()).as("exit code after " + last).isZero();
                assertThat(mcp.answer()).as("the answer to " + last).contains("\"error\"");
            } finally {
                mcp.process().destroyForcibly();
            }
        }
    }
}
