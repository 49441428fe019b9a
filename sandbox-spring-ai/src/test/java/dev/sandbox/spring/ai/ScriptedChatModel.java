package dev.sandbox.spring.ai;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.DefaultToolCallingChatOptions;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.tool.ToolCallback;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * A chat model without a language model: it answers the first requests with the scripted tool calls, one per request,
 * and then with text made of every tool answer it read from the conversation, as a real model would quote them. What
 * it saw (the tools offered, the tool answers) is kept for the test to check.
 */
final class ScriptedChatModel implements ChatModel {

    /** One tool call the model makes: the tool's name and its arguments as JSON text. */
    record Call(String tool, String arguments) {}

    private final List<Call> script;
    private final List<String> toolAnswers = Collections.synchronizedList(new ArrayList<>());
    private final List<List<String>> offeredTools = Collections.synchronizedList(new ArrayList<>());
    private final List<String> streamThreads = Collections.synchronizedList(new ArrayList<>());
    private int turn;

    private ScriptedChatModel(List<Call> script) {
        this.script = List.copyOf(script);
    }

    static ScriptedChatModel calling(Call... calls) {
        return new ScriptedChatModel(List.of(calls));
    }

    static ScriptedChatModel calling(String tool, String arguments) {
        return calling(new Call(tool, arguments));
    }

    /** The final text: each tool answer the model read, in order, under a header. */
    static String finalText(List<String> answers) {
        StringBuilder text = new StringBuilder("The tools answered:");
        for (String answer : answers) {
            text.append("\n---\n").append(answer);
        }
        return text.toString();
    }

    @Override
    public ChatOptions getOptions() {
        return DefaultToolCallingChatOptions.builder().build();
    }

    @Override
    public synchronized ChatResponse call(Prompt prompt) {
        if (prompt.getOptions() instanceof ToolCallingChatOptions options && options.getToolCallbacks() != null) {
            offeredTools.add(options.getToolCallbacks().stream()
                    .map(callback -> callback.getToolDefinition().name())
                    .toList());
        }
        List<Message> conversation = prompt.getInstructions();
        Message last = conversation.get(conversation.size() - 1);
        if (last instanceof ToolResponseMessage responses) {
            responses.getResponses().forEach(response -> toolAnswers.add(response.responseData()));
        }
        if (turn < script.size()) {
            Call call = script.get(turn++);
            AssistantMessage message = AssistantMessage.builder()
                    .content("")
                    .toolCalls(List.of(new AssistantMessage.ToolCall(
                            "call-" + UUID.randomUUID(), "function", call.tool(), call.arguments())))
                    .build();
            return new ChatResponse(List.of(new Generation(message)));
        }
        return new ChatResponse(List.of(new Generation(new AssistantMessage(finalText(toolAnswers)))));
    }

    /**
     * Answers as {@link #call(Prompt)} does, in one chunk emitted on a Reactor non-blocking thread, as a streaming model
     * client's event loop (Netty, for one on WebClient) would emit it.
     */
    @Override
    public Flux<ChatResponse> stream(Prompt prompt) {
        return Flux.defer(() -> {
                    streamThreads.add(Thread.currentThread().getName());
                    return Flux.just(call(prompt));
                })
                .subscribeOn(Schedulers.parallel());
    }

    /** The threads {@link #stream(Prompt)} emitted on. */
    List<String> streamThreads() {
        return List.copyOf(streamThreads);
    }

    /** The tool answers the model read, in order. */
    List<String> toolAnswers() {
        return List.copyOf(toolAnswers);
    }

    /** The names of the tools offered on each request. */
    List<List<String>> offeredTools() {
        return List.copyOf(offeredTools);
    }

    /** The names of the tool callbacks, for comparing with {@link #offeredTools()}. */
    static List<String> names(List<ToolCallback> callbacks) {
        return callbacks.stream().map(c -> c.getToolDefinition().name()).toList();
    }
}
