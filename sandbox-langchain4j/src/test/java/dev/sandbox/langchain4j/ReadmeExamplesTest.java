package dev.sandbox.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's examples run and do what the README says. */
class ReadmeExamplesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theEngineExamplePrintsTheAnswerItShows() {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            ReadmeExamples.engine();
        } finally {
            System.setOut(original);
        }
        assertThat(captured.toString(StandardCharsets.UTF_8))
                .isEqualTo("exit code: 0\nstdout:\n42\nLinux\nstderr: (empty)" + System.lineSeparator());
    }

    /**
     * The AI service example, unchanged, in a JVM of its own against an OpenAI-compatible server on loopback whose
     * scripted model asks for {@code run_command} and then answers with what the tool returned: LangChain4j's OpenAI
     * client, the toolbox and a local session, all real.
     */
    @Test
    void theAiServiceExampleRunsTheModelsCommandInTheSandbox(@TempDir Path dir) throws Exception {
        List<JsonNode> requests = new CopyOnWriteArrayList<>();
        List<String> authorizations = new CopyOnWriteArrayList<>();
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/v1/chat/completions", exchange -> {
            try (exchange) {
                JsonNode request = JSON.readTree(readBounded(exchange.getRequestBody(), 1 << 20));
                requests.add(request);
                authorizations.add(exchange.getRequestHeaders().getFirst("Authorization"));
                respond(exchange, completion(request));
            }
        });
        server.start();
        Process example = null;
        try {
            Path stderr = dir.resolve("stderr.txt");
            ProcessBuilder builder = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-cp",
                            System.getProperty("java.class.path"),
                            ReadmeExamples.class.getName())
                    .redirectError(stderr.toFile());
            builder.environment()
                    .put(
                            "OPENAI_BASE_URL",
                            "http://127.0.0.1:" + server.getAddress().getPort() + "/v1");
            builder.environment().put("OPENAI_API_KEY", "test-key");
            example = builder.start();
            example.getOutputStream().close();
            // its output is a few lines, well within a pipe's buffer: it is read once the example has ended
            assertThat(example.waitFor(60, TimeUnit.SECONDS)).isTrue();
            String out = new String(readBounded(example.getInputStream(), 64 * 1024), StandardCharsets.UTF_8);
            assertThat(example.exitValue())
                    .as("the example's exit status; its stderr:%n%s", Files.readString(stderr))
                    .isZero();

            assertThat(requests).hasSize(2);
            assertThat(authorizations).containsOnly("Bearer test-key");
            List<String> offered = new ArrayList<>();
            requests.get(0)
                    .path("tools")
                    .forEach(t -> offered.add(t.path("function").path("name").asText()));
            assertThat(offered)
                    .containsExactlyInAnyOrder("run_command", "run_code", "read_file", "write_file", "list_files");
            JsonNode toolMessage = lastMessage(requests.get(1));
            assertThat(toolMessage.path("role").asText()).isEqualTo("tool");
            assertThat(toolMessage.path("tool_call_id").asText()).isEqualTo("call-1");
            String toolAnswer = toolMessage.path("content").asText();
            // the host may lack python3: then the shell's "not found" is the answer, with its exit code 127
            assertThat(toolAnswer).matches("(?s)exit code: (0\nstdout:\nPython 3\\.\\S+\n.*|127\n.*not found.*)");
            assertThat(out).isEqualTo("The sandbox answered: " + toolAnswer + System.lineSeparator());
        } finally {
            if (example != null) {
                example.destroyForcibly();
            }
            server.stop(0);
        }
    }

    /** The scripted model: first a call of run_command, then a text quoting the tool's answer. */
    private static ObjectNode completion(JsonNode request) {
        JsonNode last = lastMessage(request);
        ObjectNode message = JSON.createObjectNode().put("role", "assistant");
        String finish;
        if ("tool".equals(last.path("role").asText())) {
            message.put(
                    "content", "The sandbox answered: " + last.path("content").asText());
            finish = "stop";
        } else {
            message.putNull("content");
            ArrayNode calls = message.putArray("tool_calls");
            ObjectNode call = calls.addObject().put("id", "call-1").put("type", "function");
            call.putObject("function")
                    .put("name", "run_command")
                    .put("arguments", "{\"command\": \"python3 --version\"}");
            finish = "tool_calls";
        }
        ObjectNode completion = JSON.createObjectNode()
                .put("id", "chatcmpl-" + request.path("messages").size())
                .put("object", "chat.completion")
                .put("created", 0)
                .put("model", request.path("model").asText());
        completion
                .putArray("choices")
                .addObject()
                .put("index", 0)
                .put("finish_reason", finish)
                .set("message", message);
        completion
                .putObject("usage")
                .put("prompt_tokens", 1)
                .put("completion_tokens", 1)
                .put("total_tokens", 2);
        return completion;
    }

    private static JsonNode lastMessage(JsonNode request) {
        JsonNode messages = request.path("messages");
        return messages.get(messages.size() - 1);
    }

    private static void respond(HttpExchange exchange, JsonNode body) throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(body);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, bytes.length);
        exchange.getResponseBody().write(bytes);
    }

    private static byte[] readBounded(InputStream in, int max) throws IOException {
        byte[] bytes = in.readNBytes(max + 1);
        assertThat(bytes.length).as("bytes read").isLessThanOrEqualTo(max);
        return bytes;
    }
}
