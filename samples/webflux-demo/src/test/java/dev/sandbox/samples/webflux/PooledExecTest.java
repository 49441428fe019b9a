package dev.sandbox.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.pool.PoolStats;
import dev.sandbox.pool.SandboxPool;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The demo with the starter's warm pool ({@code sandbox.pool.enabled=true}), over a real Netty server on loopback
 * with real processes: each {@code POST /api/exec} runs in a session taken warm from the pool, and when its stream
 * ends the session is given back and a fresh one takes its place.
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"sandbox.pool.enabled=true", "sandbox.pool.warm=2"})
class PooledExecTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final ParameterizedTypeReference<ServerSentEvent<String>> SSE =
            new ParameterizedTypeReference<>() {};

    @LocalServerPort
    int port;

    @Autowired
    SandboxPool pool;

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

    private List<ServerSentEvent<String>> exec(String shellCommand) {
        return WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(WAIT)
                .build()
                .post()
                .uri("/api/exec")
                .contentType(MediaType.APPLICATION_JSON)
                .accept(MediaType.TEXT_EVENT_STREAM)
                .bodyValue(Map.of("command", List.of("sh", "-c", shellCommand)))
                .exchange()
                .expectStatus()
                .isOk()
                .returnResult(SSE)
                .getResponseBody()
                .collectList()
                .block(WAIT);
    }

    @Test
    void eachCommandRunsInAWarmSessionThatIsReplacedAfterwards() throws Exception {
        await("the pool is warm", s -> s.warm() == 2);
        long before = pool.stats().acquired();

        for (int i = 1; i <= 3; i++) {
            await("warm before the request", p -> p.warm() == 2);
            List<ServerSentEvent<String>> events = exec("echo run-" + System.nanoTime());
            assertThat(events).extracting(ServerSentEvent::event).containsExactly("stdout", "exit");
            assertThat(events.get(1).data()).contains("\"code\":0");
            long taken = i;
            PoolStats s =
                    await("the session given back and replaced", p -> p.acquired() == before + taken && p.inUse() == 0);
            assertThat(s.coldAcquires()).as("each came warm").isZero();
        }
        await("warm again", s -> s.warm() == 2 && s.alive() == 2);
    }
}
