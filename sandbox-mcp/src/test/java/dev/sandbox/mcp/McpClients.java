package dev.sandbox.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import reactor.core.publisher.Mono;

/** What the MCP tests do with the SDK's own client: call a tool, read its text, see its progress. */
final class McpClients {
    static final Duration WAIT = Duration.ofSeconds(30);

    private McpClients() {}

    /** Progress notifications as the client received them, recorded on the client's receiving thread. */
    static final class Progress {
        final List<McpSchema.ProgressNotification> received = new CopyOnWriteArrayList<>();

        Mono<Void> record(McpSchema.ProgressNotification n) {
            return Mono.fromRunnable(() -> received.add(n));
        }

        List<String> messages(Object token) {
            return received.stream()
                    .filter(n -> token.equals(n.progressToken()))
                    .map(McpSchema.ProgressNotification::message)
                    .toList();
        }
    }

    /** A tool's answer and how many progress notifications of its token had arrived when it did. */
    record Answer(CallToolResult result, int progressBefore) {
        String text() {
            return McpClients.text(result);
        }

        boolean isError() {
            return Boolean.TRUE.equals(result.isError());
        }
    }

    static Answer call(McpAsyncClient client, String tool, Map<String, Object> args) {
        CallToolResult result = client.callTool(
                        CallToolRequest.builder(tool).arguments(args).build())
                .block(WAIT);
        assertThat(result).isNotNull();
        return new Answer(result, 0);
    }

    static Answer callWithProgress(
            McpAsyncClient client, Progress progress, Object token, String tool, Map<String, Object> args) {
        Answer answer = client.callTool(CallToolRequest.builder(tool)
                        .arguments(args)
                        .progressToken(token)
                        .build())
                .map(r -> new Answer(r, progress.messages(token).size()))
                .block(WAIT);
        assertThat(answer).isNotNull();
        return answer;
    }

    static String text(CallToolResult result) {
        StringBuilder out = new StringBuilder();
        for (McpSchema.Content c : result.content()) {
            if (c instanceof McpSchema.TextContent t) {
                out.append(t.text());
            }
        }
        return out.toString();
    }

    /** The session id a create_session answer names. */
    static String sessionId(Answer created) {
        assertThat(created.isError()).as(created.text()).isFalse();
        Matcher m = Pattern.compile("created session (\\S+) ").matcher(created.text());
        assertThat(m.find()).as(created.text()).isTrue();
        return m.group(1);
    }
}
