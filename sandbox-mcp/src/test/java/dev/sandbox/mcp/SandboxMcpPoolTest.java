package dev.sandbox.mcp;

import static dev.sandbox.mcp.McpClients.call;
import static dev.sandbox.mcp.McpClients.sessionId;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.SessionInfo;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.pool.PoolStats;
import dev.sandbox.pool.SandboxPool;
import dev.sandbox.server.SandboxServer;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The MCP tools with a warm pool ({@link SandboxMcpServer.Builder#pool}), over the streamable HTTP transport of a real
 * server on loopback: {@code create_session} takes a warm session (with the lifetime and labels the call asked for,
 * which the provider's list finds it by), {@code destroy_session} gives it back and a fresh one takes its place, and
 * closing the server and the pool leaves no session of the provider.
 */
class SandboxMcpPoolTest {
    private static final String TOKEN = "mcp-pool-token-0123456789";
    private static final Duration WAIT = McpClients.WAIT;

    private LocalSandboxProvider provider;
    private SandboxPool pool;
    private SandboxMcpServer mcp;
    private SandboxServer server;
    private McpAsyncClient client;

    @BeforeEach
    void start() throws InterruptedException {
        provider = LocalSandboxProvider.create();
        pool = SandboxPool.builder(provider).warm(2).build();
        mcp = SandboxMcpServer.builder(provider).pool(pool).build();
        server = SandboxServer.builder(provider)
                .port(0)
                .token(TOKEN.toCharArray())
                .endpoint("/mcp", mcp.httpEndpoint())
                .start();
        client = McpClient.async(HttpClientStreamableHttpTransport.builder(server.baseUrl())
                        .endpoint("/mcp")
                        .httpRequestCustomizer(
                                (b, method, uri, body, ctx) -> b.header("Authorization", "Bearer " + TOKEN))
                        .build())
                .requestTimeout(WAIT)
                .build();
        client.initialize().block(WAIT);
        await("the pool is warm", s -> s.warm() == 2);
    }

    @AfterEach
    void stop() {
        client.closeGracefully().block(WAIT);
        server.stop(Duration.ofSeconds(5));
        mcp.close();
        pool.close();
        provider.close();
    }

    private List<String> existing() {
        return provider.list(Map.of()).map(SessionInfo::id).collectList().block(WAIT);
    }

    private PoolStats await(String what, Predicate<PoolStats> expected) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        PoolStats s = pool.stats();
        while (!expected.test(s)) {
            assertThat(System.nanoTime()).as(what + "; last counts " + s).isLessThan(deadline);
            Thread.sleep(20); // polling the pool's refill, bounded by the deadline
            s = pool.stats();
        }
        return s;
    }

    @Test
    void createSessionTakesAWarmSessionAndDestroySessionReplacesIt() throws Exception {
        List<String> warm = existing();

        McpClients.Answer created = call(client, "create_session", Map.of("lifetime_seconds", 120));
        String id = sessionId(created);

        assertThat(created.text()).contains("lifetime 2m");
        assertThat(warm).as("one of the warm sessions").contains(id);
        assertThat(pool.stats().acquired()).isEqualTo(1);
        assertThat(call(client, "run_command", Map.of("session_id", id, "command", "echo from-the-pool"))
                        .text())
                .contains("from-the-pool");
        await("refilled", s -> s.warm() == 2 && s.inUse() == 1);

        assertThat(call(client, "destroy_session", Map.of("session_id", id)).text())
                .isEqualTo("destroyed session " + id);
        assertThat(existing()).doesNotContain(id);
        await("replaced", s -> s.warm() == 2 && s.inUse() == 0 && s.alive() == 2);
    }

    @Test
    void aCreateWithLabelsIsWarmAndLabelledAndClosingLeavesNothing() throws Exception {
        List<String> warm = existing();
        String labelled = sessionId(call(client, "create_session", Map.of("labels", Map.of("purpose", "pooled"))));
        await("refilled", s -> s.warm() == 2);
        List<String> warmAgain = existing();
        String pooled = sessionId(call(client, "create_session", Map.of()));

        assertThat(warm).contains(labelled);
        assertThat(warmAgain).contains(pooled);
        assertThat(pool.stats().acquired()).isEqualTo(2);
        assertThat(pool.stats().coldAcquires()).isZero();
        assertThat(provider.list(Map.of("purpose", "pooled"))
                        .map(SessionInfo::id)
                        .collectList()
                        .block(WAIT))
                .containsExactly(labelled);
        assertThat(call(client, "list_sessions", Map.of()).text())
                .contains(labelled)
                .contains(pooled)
                .contains("purpose=pooled");

        mcp.close();
        pool.close();
        assertThat(existing()).isEmpty();
    }
}
