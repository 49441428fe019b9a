package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.implementation.wire.ChannelFrames;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The command channel ({@code GET /v1/channel}): the remote provider sends its commands over one WebSocket, many at
 * once; a stream whose reader stops stops only its command; a malformed frame ends its own connection only; and a
 * client of another tenant cannot reach this tenant's sessions or streams through it.
 */
class CommandChannelTest {
    private static final String ALICE = "alice-channel-token-0123456789";
    private static final String BOB = "bob-channel-token-0123456789ab";
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    private LocalSandboxProvider local;
    private SandboxServer server;
    private RemoteSandboxProvider alice;
    private HttpClient http;

    @BeforeEach
    void start() {
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local)
                .port(0)
                .maxExecs(2048)
                .token("alice", ALICE.toCharArray())
                .token("bob", BOB.toCharArray())
                .start();
        alice = RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(ALICE.toCharArray())
                .build();
        http = HttpClient.newBuilder().connectTimeout(WAIT).build();
    }

    @AfterEach
    void stop() {
        http.close();
        alice.close();
        server.close();
        local.close();
    }

    private JsonNode ping() throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/ping"))
                        .header("Authorization", "Bearer " + ALICE)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(r.body());
    }

    private static byte[] body(String json) {
        return json.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aThousandCommandsAtOnceGoOverOneConnectionAndAllAnswerRight() throws Exception {
        SandboxSession s = alice.create(SessionOptions.defaults()).block(WAIT);
        long before = ping().path("channelCommands").asLong();
        List<String> outputs = Flux.range(0, 1000)
                .flatMap(
                        i -> i % 2 == 0
                                ? s.run(ExecOptions.of("echo", "run-" + i)).map(r -> {
                                    assertThat(r.exitCode()).isZero();
                                    return r.stdout().trim();
                                })
                                : s.exec(ExecOptions.of("echo", "exec-" + i))
                                        .reduce(new StringBuilder(), (b, e) -> {
                                            if (e instanceof ExecEvent.Stdout l) {
                                                b.append(l.text());
                                            } else if (e instanceof ExecEvent.Exit x) {
                                                assertThat(x.code()).isZero();
                                                b.append("|exit");
                                            }
                                            return b;
                                        })
                                        .map(StringBuilder::toString),
                        1000)
                .collectList()
                .block(Duration.ofMinutes(3));
        assertThat(outputs).hasSize(1000);
        for (int i = 0; i < 1000; i++) {
            assertThat(outputs).contains(i % 2 == 0 ? "run-" + i : "exec-" + i + "|exit");
        }
        JsonNode status = ping();
        assertThat(status.path("channelsOpen").asInt())
                .as("one socket carried them all")
                .isEqualTo(1);
        assertThat(status.path("channelCommands").asLong() - before).isEqualTo(1000);
    }

    @Test
    void aReaderThatStopsStopsItsOwnCommandOnly() throws Exception {
        SandboxSession s = alice.create(SessionOptions.defaults()).block(WAIT);
        AtomicInteger seen = new AtomicInteger();
        BaseSubscriber<ExecEvent> stalled = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription subscription) {
                request(1); // one event, then nothing more
            }

            @Override
            protected void hookOnNext(ExecEvent value) {
                seen.incrementAndGet();
            }
        };
        s.exec(ExecOptions.of("sh", "-c", "seq 1 5000000; echo done > marker")).subscribe(stalled);
        await(() -> seen.get() == 1);
        // the other commands on the same socket go through while that one is stalled
        List<ExecResult> others = Flux.range(0, 50)
                .flatMap(i -> s.run(ExecOptions.of("echo", "other-" + i)), 16)
                .collectList()
                .block(WAIT);
        assertThat(others).hasSize(50).allSatisfy(r -> assertThat(r.exitCode()).isZero());
        Thread.sleep(1000);
        // its command waits on a full pipe: it has not finished its output
        assertThat(s.run(ExecOptions.of("sh", "-c", "test -e marker && echo yes || echo no"))
                        .block(WAIT)
                        .stdout()
                        .trim())
                .isEqualTo("no");
        assertThat(seen.get()).isEqualTo(1);
        assertThat(ping().path("channelsOpen").asInt()).isEqualTo(1);
        // cancelling it kills the command
        stalled.dispose();
        await(() -> execsRunning() == 0);
        assertThat(s.run(ExecOptions.of("sh", "-c", "test -e marker && echo yes || echo no"))
                        .block(WAIT)
                        .stdout()
                        .trim())
                .isEqualTo("no");
    }

    private int execsRunning() {
        try {
            return ping().path("execsRunning").asInt();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aMalformedFrameEndsItsOwnConnectionOnly() throws Exception {
        SandboxSession s = alice.create(SessionOptions.defaults()).block(WAIT);
        // a command in flight on the provider's own channel while the hostile connections come and go
        Mono<List<ExecEvent>> longOne = s.exec(
                        ExecOptions.of("sh", "-c", "for i in 1 2 3 4 5; do echo $i; sleep 0.2; done"))
                .collectList()
                .cache();
        longOne.subscribe();
        byte[] ack = ChannelFrames.ack(1, 0, 0);
        byte[] truncated = java.util.Arrays.copyOf(ack, ack.length - 3);
        byte[] unknownType = ChannelFrames.header((byte) 99, 1, 0);
        byte[] streamZero = ChannelFrames.cancel(1);
        streamZero[4] = 0;
        byte[] lying = ChannelFrames.header(ChannelFrames.OPEN_RUN, 1, 1 << 30);
        byte[] twiceOpen = ChannelFrames.open(ChannelFrames.OPEN_RUN, 1, s.id(), body("{\"argv\":[\"sleep\",\"5\"]}"));
        for (byte[] bad : List.of(truncated, unknownType, streamZero, lying)) {
            try (RawChannel raw = new RawChannel(server.baseUrl(), ALICE)) {
                raw.send(bad);
                assertThat(raw.closeStatus(WAIT)).isEqualTo(WebSocketCloseStatus.PROTOCOL_ERROR);
            }
        }
        try (RawChannel raw = new RawChannel(server.baseUrl(), ALICE)) {
            raw.send(twiceOpen);
            raw.send(twiceOpen); // the same stream opened again
            assertThat(raw.closeStatus(WAIT)).isEqualTo(WebSocketCloseStatus.PROTOCOL_ERROR);
        }
        try (RawChannel raw = new RawChannel(server.baseUrl(), ALICE)) {
            raw.send(new TextWebSocketFrame("{\"hello\":1}"));
            assertThat(raw.closeStatus(WAIT)).isEqualTo(WebSocketCloseStatus.PROTOCOL_ERROR);
        }
        try (RawChannel raw = new RawChannel(server.baseUrl(), ALICE)) {
            raw.send(new byte[2 * 1024 * 1024]); // past the server's largest message
            raw.closeStatus(WAIT);
            assertThat(raw.ended()).isTrue();
        }
        List<ExecEvent> events = longOne.block(WAIT);
        assertThat(events.stream()
                        .filter(e -> e instanceof ExecEvent.Stdout)
                        .map(e -> ((ExecEvent.Stdout) e).text())
                        .toList())
                .containsExactly("1", "2", "3", "4", "5");
        assertThat(((ExecEvent.Exit) events.getLast()).code()).isZero();
        assertThat(s.run(ExecOptions.of("echo", "still")).block(WAIT).stdout()).isEqualTo("still\n");
        // the hostile connections' runs were killed with them: nothing is left running
        await(() -> execsRunning() == 0);
    }

    @Test
    void anotherTenantsSessionsAndStreamsAreRefusedAsIfTheyDidNotExist() throws Exception {
        SandboxSession s = alice.create(SessionOptions.defaults()).block(WAIT);
        Mono<List<ExecEvent>> alicesExec = s.exec(
                        ExecOptions.of("sh", "-c", "for i in 1 2 3 4 5 6; do echo $i; sleep 0.2; done"))
                .collectList()
                .cache();
        alicesExec.subscribe();
        try (RawChannel bob = new RawChannel(server.baseUrl(), BOB);
                RemoteSandboxProvider bobsProvider = RemoteSandboxProvider.builder()
                        .baseUrl(server.baseUrl())
                        .token(BOB.toCharArray())
                        .build()) {
            byte[] run = body("{\"argv\":[\"echo\",\"stolen\"]}");
            bob.send(ChannelFrames.open(ChannelFrames.OPEN_RUN, 1, s.id(), run));
            ChannelFrames.Frame refused = bob.next(WAIT);
            bob.send(ChannelFrames.open(ChannelFrames.OPEN_RUN, 2, "no-such-session", run));
            ChannelFrames.Frame missing = bob.next(WAIT);
            assertThat(refused.type()).isEqualTo(ChannelFrames.ERROR);
            assertThat(ChannelFrames.errorStatus(refused)).isEqualTo(404);
            JsonNode refusedBody = JSON.readTree(ChannelFrames.errorBody(refused));
            JsonNode missingBody = JSON.readTree(ChannelFrames.errorBody(missing));
            assertThat(ChannelFrames.errorStatus(missing)).isEqualTo(404);
            assertThat(refusedBody.path("error").path("type").asText()).isEqualTo("SessionNotFoundException");
            assertThat(refusedBody.path("error").path("message").asText())
                    .isEqualTo(
                            missingBody.path("error").path("message").asText().replace("no-such-session", s.id()));
            // the stream ids alice's channel uses are hers alone: bob's acks and cancels on the same numbers
            // reach nothing of hers
            for (int id = 1; id <= 64; id++) {
                bob.send(ChannelFrames.ack(id, 1_000_000, 1_000_000));
                bob.send(ChannelFrames.cancel(id));
            }
            // an open naming an exec id of another session is refused as not found too
            SandboxSession bobs = bobsProvider.create(SessionOptions.defaults()).block(WAIT);
            bob.send(ChannelFrames.open(
                    ChannelFrames.OPEN_EXEC, 100, bobs.id(), body("{\"argv\":[\"sleep\",\"1\"],\"id\":\"e-1\"}")));
            assertThat(bob.next(WAIT).type()).isEqualTo(ChannelFrames.OPENED);
            // the same exec id in alice's session: alice's lookups never see bob's exec
            SandboxSession other = alice.create(SessionOptions.defaults()).block(WAIT);
            try (RawChannel aliceRaw = new RawChannel(server.baseUrl(), ALICE)) {
                aliceRaw.send(ChannelFrames.open(
                        ChannelFrames.OPEN_EXEC, 1, other.id(), body("{\"argv\":[\"echo\",\"x\"],\"id\":\"e-1\"}")));
                ChannelFrames.Frame f = aliceRaw.next(WAIT);
                assertThat(f.type()).isEqualTo(ChannelFrames.ERROR);
                assertThat(ChannelFrames.errorStatus(f)).isEqualTo(404);
                // nor can either resume the other's exec: bob's exec through alice's session, alice's through bob's
                aliceRaw.send(ChannelFrames.resume(2, other.id(), "e-1", -1, -1));
                ChannelFrames.Frame resumed = aliceRaw.next(WAIT);
                assertThat(resumed.type()).isEqualTo(ChannelFrames.ERROR);
                assertThat(ChannelFrames.errorStatus(resumed)).isEqualTo(404);
                assertThat(JSON.readTree(ChannelFrames.errorBody(resumed))
                                .path("error")
                                .path("type")
                                .asText())
                        .isEqualTo("ExecNotFound");
                aliceRaw.send(ChannelFrames.open(
                        ChannelFrames.OPEN_EXEC,
                        3,
                        other.id(),
                        body("{\"argv\":[\"sleep\",\"1\"],\"id\":\"alices-exec\"}")));
                assertThat(aliceRaw.next(WAIT).type()).isEqualTo(ChannelFrames.OPENED);
                bob.send(ChannelFrames.resume(101, bobs.id(), "alices-exec", -1, -1));
                ChannelFrames.Frame stolen = bob.next(WAIT);
                assertThat(stolen.type()).isEqualTo(ChannelFrames.ERROR);
                assertThat(ChannelFrames.errorStatus(stolen)).isEqualTo(404);
                bob.send(ChannelFrames.resume(102, other.id(), "alices-exec", -1, -1));
                ChannelFrames.Frame foreign = bob.next(WAIT);
                assertThat(ChannelFrames.errorStatus(foreign)).isEqualTo(404);
                assertThat(JSON.readTree(ChannelFrames.errorBody(foreign))
                                .path("error")
                                .path("type")
                                .asText())
                        .isEqualTo("SessionNotFoundException");
            }
        }
        List<String> lines = alicesExec.block(WAIT).stream()
                .filter(e -> e instanceof ExecEvent.Stdout)
                .map(e -> ((ExecEvent.Stdout) e).text())
                .toList();
        assertThat(lines).containsExactly("1", "2", "3", "4", "5", "6");
    }

    @Test
    void commandsOverTheExecLimitWaitForASlotInsteadOfFailing() throws Exception {
        try (SandboxServer small = SandboxServer.builder(local)
                        .port(0)
                        .maxExecs(4)
                        .token("alice", ALICE.toCharArray())
                        .start();
                RemoteSandboxProvider remote = RemoteSandboxProvider.builder()
                        .baseUrl(small.baseUrl())
                        .token(ALICE.toCharArray())
                        .build()) {
            SandboxSession s = remote.create(SessionOptions.defaults()).block(WAIT);
            List<String> outputs = Flux.range(0, 200)
                    .flatMap(
                            i -> i % 4 == 0
                                    ? s.exec(ExecOptions.of("echo", "e" + i))
                                            .filter(e -> e instanceof ExecEvent.Stdout)
                                            .map(e -> ((ExecEvent.Stdout) e).text())
                                            .single()
                                    : s.run(ExecOptions.of("echo", "r" + i))
                                            .map(r -> r.stdout().trim()),
                            200)
                    .collectList()
                    .block(WAIT);
            assertThat(outputs).hasSize(200);
            for (int i = 0; i < 200; i++) {
                assertThat(outputs).contains((i % 4 == 0 ? "e" : "r") + i);
            }
        }
    }

    @Test
    void aCutChannelResumesItsExecOnTheNextOneAndFailsItsRunRetryably() throws Exception {
        try (DroppingProxy proxy = new DroppingProxy(server.port());
                RemoteSandboxProvider viaProxy = RemoteSandboxProvider.builder()
                        .baseUrl(proxy.baseUrl())
                        .token(ALICE.toCharArray())
                        .build()) {
            SandboxSession s = viaProxy.create(SessionOptions.defaults()).block(WAIT);
            long before = ping().path("channelCommands").asLong();
            AtomicInteger acceptedAtCut = new AtomicInteger();
            int n = 400_000;
            AtomicInteger dropped = new AtomicInteger();
            AtomicInteger seen = new AtomicInteger();
            reactor.core.publisher.Sinks.Empty<Void> cut = reactor.core.publisher.Sinks.empty();
            List<Long> offsets = new java.util.ArrayList<>();
            StringBuilder text = new StringBuilder();
            ExecEvent last = s.exec(ExecOptions.of("seq", "1", Integer.toString(n)))
                    // from the 50,000th line on, nothing more is taken until every connection was cut: the server
                    // holds the rest (more than its window) for the resume
                    .concatMap(
                            e -> {
                                if (!(e instanceof ExecEvent.Stdout)) {
                                    return Mono.just(e);
                                }
                                int i = seen.incrementAndGet();
                                if (i == 50_000) {
                                    reactor.core.scheduler.Schedulers.boundedElastic()
                                            .schedule(() -> {
                                                acceptedAtCut.set(proxy.accepted());
                                                dropped.addAndGet(proxy.dropAll());
                                                cut.tryEmitEmpty();
                                            });
                                }
                                return i >= 50_000 ? cut.asMono().thenReturn(e) : Mono.just(e);
                            },
                            1)
                    .doOnNext(e -> {
                        if (e instanceof ExecEvent.Stdout l) {
                            offsets.add(l.offset());
                            if (!l.partial()) {
                                text.append(l.text()).append('\n');
                            } else {
                                text.append(l.text());
                            }
                        }
                    })
                    .blockLast(WAIT);
            assertThat(ping().path("channelCommands").asLong() - before)
                    .as("the exec started on the channel")
                    .isEqualTo(1);
            // one new connection carried the resume and its acknowledgements (over REST it would take two or more)
            assertThat(dropped.get()).as("sockets closed").isPositive();
            assertThat(proxy.accepted() - acceptedAtCut.get())
                    .as("connections after the cut: the channel the exec resumed on")
                    .isEqualTo(1);
            assertThat(((ExecEvent.Exit) last).code()).isZero();
            StringBuilder expected = new StringBuilder();
            for (int i = 1; i <= n; i++) {
                expected.append(i).append('\n');
            }
            assertThat(text.toString()).as("every line once, in order").isEqualTo(expected.toString());

            // a run in flight when the channel is cut fails as a REST run cut with its connection does
            Mono<ExecResult> run = s.run(ExecOptions.of("sleep", "3"));
            java.util.concurrent.CompletableFuture<Throwable> failure = new java.util.concurrent.CompletableFuture<>();
            run.subscribe(r -> failure.complete(null), failure::complete);
            await(() -> execsRunning() == 1);
            assertThat(proxy.dropAll()).isPositive();
            Throwable t = failure.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            assertThat(t).isInstanceOf(dev.sandbox.BackendException.class);
            assertThat(((dev.sandbox.BackendException) t).isRetryable()).isTrue();
            // and the next command opens a new channel
            assertThat(s.run(ExecOptions.of("echo", "again")).block(WAIT).stdout())
                    .isEqualTo("again\n");
        }
    }

    @Test
    void theRestPathCanBeChosenAndNeverTouchesTheChannel() throws Exception {
        try (RemoteSandboxProvider rest = RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(ALICE.toCharArray())
                .commandChannel(false)
                .build()) {
            SandboxSession s = rest.create(SessionOptions.defaults()).block(WAIT);
            assertThat(s.run(ExecOptions.of("echo", "hi")).block(WAIT).stdout()).isEqualTo("hi\n");
            assertThat(s.exec(ExecOptions.of("echo", "there")).collectList().block(WAIT))
                    .last()
                    .isInstanceOfSatisfying(
                            ExecEvent.Exit.class, x -> assertThat(x.code()).isZero());
            JsonNode status = ping();
            assertThat(status.path("channelsOpen").asInt()).isZero();
            assertThat(status.path("channelCommands").asLong()).isZero();
        }
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + WAIT);
            }
            Thread.sleep(20);
        }
    }
}
