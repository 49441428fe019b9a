package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.SessionStatus;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The public API is {@code @NullMarked}: {@link SessionStatus#lastActivity()} is never {@code null}. A server whose
 * status answer lacks it (another implementation, a broken proxy) gets the caller a {@link BackendException} naming the
 * field, not a status whose non-null field is {@code null}. The server here is a plain reactor-netty server on
 * loopback answering as such a server would.
 */
class RemoteMissingFieldsTest {
    private static final char[] TOKEN = "missing-fields-token-0123".toCharArray();
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static final String SESSION = "{\"id\":\"s-1\",\"provider\":\"local\",\"labels\":{}}";
    private static final String STATUS_WITHOUT_LAST_ACTIVITY = "{\"sessionId\":\"s-1\",\"status\":\"running\","
            + "\"version\":\"0.1.0\",\"uptimeMs\":5,\"lastActivity\":null,\"execsRunning\":0,\"ptysRunning\":0,"
            + "\"ptysAttached\":0,\"provider\":\"local\",\"processLauncher\":\"jdk\"}";
    private static final String STATUS =
            STATUS_WITHOUT_LAST_ACTIVITY.replace("\"lastActivity\":null", "\"lastActivity\":\"2026-01-02T03:04:05Z\"");

    @Test
    void aStatusWithoutLastActivityFailsNamingTheFieldInsteadOfReturningNull() {
        AtomicReference<String> status = new AtomicReference<>(STATUS_WITHOUT_LAST_ACTIVITY);
        DisposableServer server = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle((req, res) -> {
                    String body =
                            req.method().name().equals("POST") && req.uri().equals("/v1/sessions")
                                    ? SESSION
                                    : req.uri().equals("/v1/sessions/s-1/status") ? status.get() : "{}";
                    return req.receive()
                            .then()
                            .then(res.header("Content-Type", "application/json")
                                    .sendString(Mono.just(body))
                                    .then());
                })
                .bindNow();
        try (RemoteSandboxProvider remote = RemoteSandboxProvider.builder()
                .baseUrl("http://127.0.0.1:" + server.port())
                .token(TOKEN)
                .connectTimeout(Duration.ofSeconds(2))
                .reconnect(1, Duration.ofMillis(20))
                .build()) {
            SandboxSession session = remote.create(SessionOptions.defaults()).block(WAIT);
            assertThat(session).isNotNull();

            assertThatThrownBy(() -> session.ping().block(WAIT))
                    .isInstanceOf(BackendException.class)
                    .hasMessage("the sandbox server sent a SessionStatusBody without lastActivity");

            // the same answer with the field reads as it did before
            status.set(STATUS);
            SessionStatus read = session.ping().block(WAIT);
            assertThat(read).isNotNull();
            assertThat(read.lastActivity()).hasToString("2026-01-02T03:04:05Z");
        } finally {
            server.disposeNow();
        }
    }
}
