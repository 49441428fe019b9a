package dev.sandbox.spring.ai;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * An OpenAI-compatible chat completions endpoint on loopback, with a script instead of a model: to a conversation
 * that does not end with a tool's answer it answers with one call of the scripted tool; to one that does, it answers
 * with text quoting that tool answer. It speaks both the plain and the streamed (server-sent events) form, so a real
 * model client (Spring AI's {@code OpenAiChatModel}) drives Spring AI's tool calling over real HTTP. Every request
 * body is kept for the test.
 */
final class ScriptedOpenAiServer implements AutoCloseable {

    /** What the final answer starts with, before the tool's answer. */
    static final String PREFIX = "The sandbox answered: ";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final String tool;
    private final String arguments;
    private final List<JsonNode> requests = new CopyOnWriteArrayList<>();
    private final DisposableServer server;

    ScriptedOpenAiServer(String tool, String arguments) {
        this.tool = tool;
        this.arguments = arguments;
        this.server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .route(routes -> routes.post("/v1/chat/completions", this::complete))
                .bindNow(Duration.ofSeconds(10));
    }

    /** The base URL a client of this server is given. */
    String baseUrl() {
        return "http://127.0.0.1:" + server.port() + "/v1";
    }

    /** The request bodies received, in order. */
    List<JsonNode> requests() {
        return List.copyOf(requests);
    }

    private Mono<Void> complete(HttpServerRequest request, HttpServerResponse response) {
        return request.receive().aggregate().asString().flatMap(body -> {
            JsonNode json = JSON.readTree(body);
            requests.add(json);
            JsonNode messages = json.get("messages");
            JsonNode last = messages.get(messages.size() - 1);
            boolean toolAnswered = "tool".equals(last.get("role").stringValue());
            String text = toolAnswered ? PREFIX + last.get("content").stringValue() : null;
            if (json.path("stream").asBoolean(false)) {
                return response.header("Content-Type", "text/event-stream")
                        .sendString(Flux.fromIterable(chunks(text)).map(chunk -> "data: " + chunk + "\n\n"))
                        .then();
            }
            return response.header("Content-Type", "application/json")
                    .sendString(Mono.just(completion(text)))
                    .then();
        });
    }

    private static ObjectNode envelope(String object) {
        return JSON.createObjectNode()
                .put("id", "chatcmpl-scripted")
                .put("object", object)
                .put("created", 1_700_000_000L)
                .put("model", "scripted");
    }

    private ArrayNode toolCalls(boolean withIndex) {
        ArrayNode calls = JSON.createArrayNode();
        ObjectNode call = calls.addObject();
        if (withIndex) {
            call.put("index", 0);
        }
        call.put("id", "call_1").put("type", "function");
        call.putObject("function").put("name", tool).put("arguments", arguments);
        return calls;
    }

    /** A whole completion: the tool call, or the text when {@code text} is given. */
    private String completion(String text) {
        ObjectNode completion = envelope("chat.completion");
        ObjectNode choice = completion.putArray("choices").addObject();
        choice.put("index", 0).putNull("logprobs");
        ObjectNode message =
                choice.putObject("message").put("role", "assistant").putNull("refusal");
        if (text == null) {
            message.putNull("content");
            message.set("tool_calls", toolCalls(false));
            choice.put("finish_reason", "tool_calls");
        } else {
            message.put("content", text);
            choice.put("finish_reason", "stop");
        }
        completion
                .putObject("usage")
                .put("prompt_tokens", 1)
                .put("completion_tokens", 1)
                .put("total_tokens", 2);
        return JSON.writeValueAsString(completion);
    }

    /** The streamed form: a chunk with the tool call or the text, a chunk with the finish reason, then [DONE]. */
    private List<String> chunks(String text) {
        ObjectNode first = envelope("chat.completion.chunk");
        ObjectNode choice = first.putArray("choices").addObject();
        choice.put("index", 0).putNull("logprobs").putNull("finish_reason");
        ObjectNode delta = choice.putObject("delta").put("role", "assistant");
        if (text == null) {
            delta.set("tool_calls", toolCalls(true));
        } else {
            delta.put("content", text);
        }
        ObjectNode last = envelope("chat.completion.chunk");
        ObjectNode end = last.putArray("choices").addObject();
        end.put("index", 0).putNull("logprobs").put("finish_reason", text == null ? "tool_calls" : "stop");
        end.putObject("delta");
        return List.of(JSON.writeValueAsString(first), JSON.writeValueAsString(last), "[DONE]");
    }

    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(10));
    }
}
