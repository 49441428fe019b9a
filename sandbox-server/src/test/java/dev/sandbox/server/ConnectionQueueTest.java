package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import dev.sandbox.remote.ServerBusyException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Past its connection limit the server cuts no request that carries the token: the request waits in a bounded queue
 * and is served when a slot frees, or is answered {@code 503 ServerBusy} with {@code Retry-After} (queue full, or
 * waited too long), which the remote provider retries within its bounds. Connections without the token are still
 * closed to make room.
 */
class ConnectionQueueTest {
    private static final char[] TOKEN = "queue-token-0123456789abcdef".toCharArray();
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static SandboxServer.Builder server(LocalSandboxProvider local, int slots, int queue, Duration timeout) {
        return SandboxServer.builder(local)
                .port(0)
                .token(TOKEN)
                .maxConnections(slots)
                .maxQueuedRequests(queue)
                .queueTimeout(timeout);
    }

    /** Connections holding every slot: each has answered one request with the token and stays open, idle. */
    private static List<RawHttp> fillSlots(SandboxServer server, int slots) throws Exception {
        List<RawHttp> held = new ArrayList<>();
        for (int i = 0; i < slots; i++) {
            RawHttp c = new RawHttp(server.port());
            held.add(c);
            assertThat(c.get("/v1/ping", TOKEN).read(WAIT).status()).isEqualTo(200);
        }
        return held;
    }

    private static void assertBusy(RawHttp.Answer a) throws Exception {
        assertThat(a.status()).isEqualTo(503);
        assertThat(a.headers()).containsEntry("retry-after", "1");
        assertThat(a.headers()).containsEntry("connection", "close");
        assertThat(a.headers().get("content-type")).startsWith("application/json");
        JsonNode error = JSON.readTree(a.body()).path("error");
        assertThat(error.path("type").asText()).isEqualTo("ServerBusy");
        assertThat(error.path("message").asText()).contains("connection limit");
        assertThat(error.path("retryable").asBoolean()).isTrue();
    }

    @Test
    void pastTheQueueARequestIsAnswered503WithRetryAfterAndAQueuedOneIsServedWhenASlotFrees() throws Exception {
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server =
                        server(local, 2, 1, Duration.ofSeconds(30)).start()) {
            List<RawHttp> slots = fillSlots(server, 2);
            try (RawHttp queued = new RawHttp(server.port())) {
                queued.get("/v1/ping", TOKEN);
                assertThat(queued.silentFor(Duration.ofMillis(500)))
                        .as("a request over the limit waits")
                        .isTrue();
                try (RawHttp refused = new RawHttp(server.port())) { // opened once the queue's one place is taken
                    assertBusy(refused.get("/v1/ping", TOKEN).read(WAIT));
                    assertThat(refused.closedWithin(WAIT))
                            .as("closed after the 503")
                            .isTrue();
                }

                slots.get(0).close();
                assertThat(queued.read(WAIT).status())
                        .as("the queued request, once a slot freed")
                        .isEqualTo(200);
            } finally {
                for (RawHttp c : slots) {
                    c.close();
                }
            }
        }
    }

    @Test
    void aQueuedRequestTimesOutWith503AndAFinishingResponseHandsItsSlotOn() throws Exception {
        Duration timeout = Duration.ofMillis(800);
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server = server(local, 2, 4, timeout).start()) {
            List<RawHttp> slots = fillSlots(server, 2);
            try (RawHttp late = new RawHttp(server.port());
                    RawHttp next = new RawHttp(server.port())) {
                long start = System.nanoTime();
                RawHttp.Answer a = late.get("/v1/ping", TOKEN).read(WAIT);
                long waitedMs = (System.nanoTime() - start) / 1_000_000;
                assertBusy(a);
                assertThat(waitedMs).as("ms the request waited").isBetween(700L, 5_000L);

                // while a request waits, a connection with a slot closes after its next answer, and the slot passes on
                next.get("/v1/ping", TOKEN);
                assertThat(next.silentFor(Duration.ofMillis(200))).isTrue();
                RawHttp.Answer handedOver = slots.get(0).get("/v1/ping", TOKEN).read(WAIT);
                assertThat(handedOver.status()).isEqualTo(200);
                assertThat(handedOver.headers()).containsEntry("connection", "close");
                assertThat(slots.get(0).closedWithin(WAIT)).isTrue();
                assertThat(next.read(WAIT).status()).isEqualTo(200);
            } finally {
                for (RawHttp c : slots) {
                    c.close();
                }
            }
        }
    }

    @Test
    void connectionsWithoutTheTokenAreClosedFirstToMakeRoom() throws Exception {
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server =
                        server(local, 3, 2, Duration.ofSeconds(30)).start()) {
            List<RawHttp> strangers = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    strangers.add(new RawHttp(server.port())); // take every slot, never send a byte
                }
                // accepted by the kernel is not yet counted by the server (each connection is set up on its event
                // loop): give the three a moment, well within their one-second grace, to hold their slots
                Thread.sleep(300);
                // within their grace the strangers keep their slots: the request with the token waits...
                try (RawHttp client = new RawHttp(server.port())) {
                    long start = System.nanoTime();
                    client.get("/v1/ping", TOKEN);
                    RawHttp.Answer a = client.read(WAIT);
                    long ms = (System.nanoTime() - start) / 1_000_000;
                    // ...and takes the oldest stranger's slot once the grace is over, long before any timeout
                    assertThat(a.status()).isEqualTo(200);
                    assertThat(ms).as("ms until served").isBetween(400L, 5_000L);
                    // one stranger (the one the server saw first) was closed for it, the others left alone
                    int closed = 0;
                    for (RawHttp stranger : strangers) {
                        if (stranger.closedWithin(Duration.ofSeconds(1))) {
                            closed++;
                        }
                    }
                    assertThat(closed).as("strangers closed to make room").isEqualTo(1);

                    // every slot taken again: a request without the token is answered 401 from the queue's side
                    try (RawHttp noToken = new RawHttp(server.port())) {
                        RawHttp.Answer refused = noToken.get("/v1/ping", null).read(WAIT);
                        assertThat(refused.status()).isEqualTo(401);
                        assertThat(refused.headers()).containsEntry("connection", "close");
                        assertThat(JSON.readTree(refused.body())
                                        .path("error")
                                        .path("type")
                                        .asText())
                                .isEqualTo("Unauthorized");
                    }
                }
            } finally {
                for (RawHttp c : strangers) {
                    c.close();
                }
            }
        }
    }

    @Test
    void theRemoteProviderRetriesABusyAnswerAndGivesUpWithATypedError() throws Exception {
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server =
                        server(local, 2, 1, Duration.ofSeconds(30)).start()) {
            List<RawHttp> slots = fillSlots(server, 2);
            RawHttp queued = new RawHttp(server.port());
            queued.get("/v1/ping", TOKEN); // holds the only place in the queue
            try (RemoteSandboxProvider givesUp = RemoteSandboxProvider.builder()
                            .baseUrl(server.baseUrl())
                            .token(TOKEN)
                            .busyRetry(3, Duration.ofSeconds(30))
                            .build();
                    RemoteSandboxProvider patient = RemoteSandboxProvider.builder()
                            .baseUrl(server.baseUrl())
                            .token(TOKEN)
                            .build()) {
                assertThat(queued.silentFor(Duration.ofMillis(300))).isTrue();
                long start = System.nanoTime();
                assertThatThrownBy(
                                () -> givesUp.create(SessionOptions.defaults()).block(WAIT.multipliedBy(2)))
                        .isInstanceOfSatisfying(ServerBusyException.class, e -> {
                            assertThat(e.attempts()).isEqualTo(3);
                            assertThat(e.isRetryable()).isTrue();
                            assertThat(e.retryAfter()).isEqualTo(Duration.ofSeconds(1));
                            assertThat(e.getMessage()).contains("3 attempts");
                        });
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertThat(ms).as("two waits of Retry-After (1 s) plus jitter").isBetween(2_000L, 8_000L);

                // a create turned away is sent again after Retry-After and succeeds once there is room
                start = System.nanoTime();
                CompletableFuture<SandboxSession> created =
                        patient.create(SessionOptions.defaults()).toFuture();
                Thread.sleep(300);
                for (RawHttp c : slots) {
                    c.close();
                }
                queued.close();
                SandboxSession session = created.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
                ms = (System.nanoTime() - start) / 1_000_000;
                assertThat(ms).as("served after at least one Retry-After").isGreaterThanOrEqualTo(1_000L);
                assertThat(session.run(ExecOptions.of("echo", "after-busy"))
                                .block(WAIT)
                                .stdout())
                        .isEqualTo("after-busy\n");
                // the given-up creates did nothing: only this session exists
                assertThat(patient.list(java.util.Map.of()).collectList().block(WAIT))
                        .hasSize(1);
                session.destroy().block(WAIT);
            } finally {
                for (RawHttp c : slots) {
                    c.close();
                }
                queued.close();
            }
        }
    }
}
