package dev.sandbox.implementation.docker;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The event subscription against a real HTTP server on loopback standing in for the daemon: a stream that ends is
 * reconnected, asking for the events since the last one seen, and the events of both connections reach the handler.
 */
class DockerEventsReconnectTest {
    private static final String EVENT = "{\"Type\":\"container\",\"Action\":\"%s\",\"Actor\":{\"ID\":\"%s\","
            + "\"Attributes\":{\"exitCode\":\"137\"}},\"timeNano\":%d}\n";

    @Test
    void aStreamThatEndsIsReconnectedFromTheLastEventSeen() throws Exception {
        long now = System.currentTimeMillis() / 1000;
        List<String> queries = new CopyOnWriteArrayList<>();
        AtomicInteger connections = new AtomicInteger();
        DisposableServer server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .route(routes -> routes.get("/events", (req, resp) -> {
                    queries.add(req.uri());
                    if (connections.incrementAndGet() == 1) {
                        // one event, then the daemon goes away (a restart)
                        return resp.sendString(
                                Mono.just(EVENT.formatted("oom", "c1", now * 1_000_000_000L + 123_456_789L)),
                                StandardCharsets.UTF_8);
                    }
                    // the event it missed meanwhile, split across two writes; then the stream stays open
                    String die = EVENT.formatted("die", "c1", (now + 1) * 1_000_000_000L);
                    return resp.sendString(
                            Flux.just(die.substring(0, 20), die.substring(20)).concatWith(Flux.never()),
                            StandardCharsets.UTF_8);
                }))
                .bindNow();
        BlockingQueue<DockerEvents.Event> seen = new LinkedBlockingQueue<>();
        DockerDataPlane data = new DockerDataPlane(URI.create("tcp://127.0.0.1:" + server.port()), 1);
        DockerEvents events = new DockerEvents(data, seen::add);
        try {
            events.watch();
            events.watch(); // idempotent: one subscription
            DockerEvents.Event first = seen.poll(10, TimeUnit.SECONDS);
            DockerEvents.Event second = seen.poll(10, TimeUnit.SECONDS);
            assertThat(first).isNotNull();
            assertThat(first.action()).isEqualTo("oom");
            assertThat(second).isNotNull();
            assertThat(second.action()).isEqualTo("die");
            assertThat(second.containerId()).isEqualTo("c1");
            assertThat(second.attributes()).containsEntry("exitCode", "137");
            assertThat(connections.get()).isEqualTo(2);
            assertThat(queries.get(0)).contains("filters=").contains("dev.sandbox.session");
            assertThat(queries.get(1)).contains("since=" + now + ".123456789");
        } finally {
            events.close();
            data.closeAsync().block(Duration.ofSeconds(5));
            server.disposeNow();
        }
    }
}
