package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.implementation.wire.StreamFrames;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A server older than the command channel answers {@code GET /v1/channel} 404 as any unknown route: the remote
 * provider sends that command, and every later one, as REST requests, and tries the upgrade only once. The server here
 * is a plain reactor-netty server on loopback answering as such a server would.
 */
class ChannelFallbackTest {
    private static final char[] TOKEN = "fallback-token-0123456789".toCharArray();
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String SESSION = "{\"id\":\"s-1\",\"provider\":\"local\",\"labels\":{}}";
    private static final String RESULT =
            "{\"exitCode\":0,\"stdout\":\"hi\\n\",\"stderr\":\"\",\"stdoutTruncated\":false,"
                    + "\"stderrTruncated\":false,\"stdoutBytes\":3,\"stderrBytes\":0,\"termination\":\"EXITED\","
                    + "\"durationNanos\":1000}";
    private static final String EVENTS = new String(
                    StreamFrames.event(new ExecEvent.Stdout("hi", 0, false, 3)), StandardCharsets.UTF_8)
            + "\n"
            + new String(
                    StreamFrames.event(new ExecEvent.Exit(0, ExecEvent.Termination.EXITED, Duration.ofNanos(1000))),
                    StandardCharsets.UTF_8)
            + "\n";

    @Test
    void aServerWithoutTheChannelGetsRestRequests() {
        AtomicInteger upgrades = new AtomicInteger();
        AtomicInteger restRuns = new AtomicInteger();
        AtomicInteger restExecs = new AtomicInteger();
        DisposableServer server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle((req, res) -> {
                    String uri = req.uri();
                    String post = req.method().name().equals("POST") ? uri : "";
                    int status = 200;
                    String type = "application/json";
                    String body;
                    if (uri.equals("/v1/channel")) {
                        upgrades.incrementAndGet();
                        status = 404;
                        body = "{\"error\":{\"type\":\"RouteNotFound\",\"message\":\"no route\"}}";
                    } else if (post.equals("/v1/sessions")) {
                        body = SESSION;
                    } else if (post.equals("/v1/sessions/s-1/run")) {
                        restRuns.incrementAndGet();
                        body = RESULT;
                    } else if (post.equals("/v1/sessions/s-1/exec")) {
                        restExecs.incrementAndGet();
                        type = "application/x-ndjson";
                        body = EVENTS;
                    } else {
                        body = "{}";
                    }
                    return req.receive()
                            .then()
                            .then(res.status(status)
                                    .header("Content-Type", type)
                                    .sendString(Mono.just(body))
                                    .then());
                })
                .bindNow();
        try (RemoteSandboxProvider remote = RemoteSandboxProvider.builder()
                .baseUrl("http://127.0.0.1:" + server.port())
                .token(TOKEN)
                .build()) {
            SandboxSession session = remote.create(SessionOptions.defaults()).block(WAIT);
            ExecResult first = session.run(ExecOptions.of("echo", "hi")).block(WAIT);
            ExecResult second = session.run(ExecOptions.of("echo", "hi")).block(WAIT);
            List<ExecEvent> events =
                    session.exec(ExecOptions.of("echo", "hi")).collectList().block(WAIT);

            assertThat(first.stdout()).isEqualTo("hi\n");
            assertThat(second.stdout()).isEqualTo("hi\n");
            assertThat(events.getFirst())
                    .isInstanceOfSatisfying(
                            ExecEvent.Stdout.class, l -> assertThat(l.text()).isEqualTo("hi"));
            assertThat(events.getLast()).isInstanceOf(ExecEvent.Exit.class);
            assertThat(upgrades.get()).as("the upgrade was tried once").isEqualTo(1);
            assertThat(restRuns.get()).isEqualTo(2);
            assertThat(restExecs.get()).isEqualTo(1);
        } finally {
            server.disposeNow();
        }
    }
}
