package dev.sandbox.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A chat model without an LLM: it answers the user's message with the first scripted tool call, each tool result with
 * the next one, and when the script is done, with a text that quotes every tool result it read from the conversation
 * ("[tool_name] result"), so a test sees exactly what the framework handed back to the model.
 */
final class ScriptedChatModel implements ChatModel {
    private final List<ToolExecutionRequest> script;
    private final boolean atOnce;
    private final List<ChatRequest> requests = new CopyOnWriteArrayList<>();

    private ScriptedChatModel(List<ToolExecutionRequest> script, boolean atOnce) {
        this.script = script;
        this.atOnce = atOnce;
    }

    /** A model that makes these calls, one per turn, then answers with what they returned. */
    static ScriptedChatModel calling(Call... calls) {
        return new ScriptedChatModel(requests(calls), false);
    }

    /** A model that makes all these calls in its first answer, then answers with what they returned. */
    static ScriptedChatModel callingAtOnce(Call... calls) {
        return new ScriptedChatModel(requests(calls), true);
    }

    private static List<ToolExecutionRequest> requests(Call... calls) {
        List<ToolExecutionRequest> script = new ArrayList<>();
        for (int i = 0; i < calls.length; i++) {
            script.add(ToolExecutionRequest.builder()
                    .id("call-" + i)
                    .name(calls[i].tool())
                    .arguments(calls[i].arguments())
                    .build());
        }
        return List.copyOf(script);
    }

    /** One tool call: the tool's name and its arguments as a JSON object. */
    record Call(String tool, String arguments) {}

    /** A call with string arguments given as name, value, name, value... */
    static Call call(String tool, String... namesAndValues) {
        StringBuilder json = new StringBuilder("{");
        for (int i = 0; i + 1 < namesAndValues.length; i += 2) {
            if (i > 0) {
                json.append(',');
            }
            json.append(quote(namesAndValues[i])).append(':').append(quote(namesAndValues[i + 1]));
        }
        return new Call(tool, json.append('}').toString());
    }

    @Override
    public ChatResponse doChat(ChatRequest request) {
        requests.add(request);
        List<ToolExecutionResultMessage> results = request.messages().stream()
                .filter(ToolExecutionResultMessage.class::isInstance)
                .map(ToolExecutionResultMessage.class::cast)
                .toList();
        if (atOnce && results.isEmpty() && !script.isEmpty()) {
            return ChatResponse.builder().aiMessage(AiMessage.from(script)).build();
        }
        if (!atOnce && results.size() < script.size()) {
            return ChatResponse.builder()
                    .aiMessage(AiMessage.from(script.get(results.size())))
                    .build();
        }
        StringBuilder text = new StringBuilder("the tools answered:");
        for (ToolExecutionResultMessage result : results) {
            text.append("\n[").append(result.toolName()).append("] ").append(result.text());
        }
        return ChatResponse.builder().aiMessage(AiMessage.from(text.toString())).build();
    }

    /** Every request the framework sent, in order. */
    List<ChatRequest> requests() {
        return requests;
    }

    /** The tool results the model read in its last request. */
    List<ToolExecutionResultMessage> lastResults() {
        List<ChatMessage> messages = requests.get(requests.size() - 1).messages();
        return messages.stream()
                .filter(ToolExecutionResultMessage.class::isInstance)
                .map(ToolExecutionResultMessage.class::cast)
                .toList();
    }

    private static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
