package dev.sandbox.samples.cli;

import static dev.sandbox.samples.cli.McpCliTest.call;
import static dev.sandbox.samples.cli.McpCliTest.created;
import static dev.sandbox.samples.cli.McpCliTest.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sandbox mcp --provider local --pool 1} on stdio, a real process with a temporary directory of its own where
 * the local provider makes each session's workdir: the warm session is made before any call, {@code create_session}
 * hands it out (its workdir is the warm one's) and a fresh one takes its place, {@code destroy_session} removes it,
 * and the end of stdin leaves no workdir behind.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class McpPoolCliTest {
    private static final Duration WAIT = McpCliTest.WAIT;

    @TempDir
    Path dir;

    private static List<String> workdirs(Path tmp) throws IOException {
        try (Stream<Path> list = Files.list(tmp)) {
            return list.map(p -> p.getFileName().toString())
                    .filter(name -> name.startsWith("sandbox-"))
                    .sorted()
                    .toList();
        }
    }

    /** Waits, bounded, until the session workdirs are as expected. */
    private static List<String> await(Path tmp, String what, Predicate<List<String>> expected) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        List<String> now = workdirs(tmp);
        while (!expected.test(now)) {
            assertThat(System.nanoTime()).as(what + "; workdirs " + now).isLessThan(deadline);
            Thread.sleep(50); // polling the pool's refill, bounded by the deadline
            now = workdirs(tmp);
        }
        return now;
    }

    @Test
    void createSessionTakesTheWarmSessionAndTheEndOfStdinLeavesNothing() throws Exception {
        Path tmp = Files.createDirectory(dir.resolve("tmp"));
        List<String> command = McpCliTest.cli("mcp", "--provider", "local", "--pool", "1", "--timeout", "20s");
        command.add(1, "-Djava.io.tmpdir=" + tmp);
        McpAsyncClient client = McpClient.async(new StdioClientTransport(
                        ServerParameters.builder(command.get(0))
                                .args(command.subList(1, command.size()))
                                .build(),
                        McpJsonDefaults.getMapper()))
                .requestTimeout(WAIT)
                .initializationTimeout(WAIT)
                .build();
        try {
            client.initialize().block(WAIT);
            List<String> warm = await(tmp, "one warm session", w -> w.size() == 1);

            String id = created(call(client, "create_session", Map.of()));
            String pwd = text(call(client, "run_command", Map.of("session_id", id, "command", "pwd")));
            assertThat(pwd)
                    .as("the session is the warm one")
                    .contains(tmp.resolve(warm.get(0)).toString());
            List<String> refilled = await(tmp, "a fresh warm session beside it", w -> w.size() == 2);
            assertThat(refilled).contains(warm.get(0));

            assertThat(text(call(client, "destroy_session", Map.of("session_id", id))))
                    .isEqualTo("destroyed session " + id);
            assertThat(workdirs(tmp)).doesNotContain(warm.get(0));
            await(tmp, "the destroyed session replaced", w -> w.size() == 1);
        } finally {
            client.closeGracefully().block(WAIT); // stdin ends: the server destroys its sessions, closes the pool
        }
        await(tmp, "nothing left after stdin's end", List::isEmpty);
    }
}
