package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.local.LocalSandboxProvider;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The port WebSocket ({@code /v1/sessions/{id}/ports/{port}/connect}) as a client other than the SDK sees it (the
 * JDK's WebSocket client): the token is checked before the upgrade, binary frames carry the connection both ways, an
 * {@code eof} message half-closes it, the sandbox side's end closes the socket with 1000, a refused port is an error
 * message then 1011, and a bad port or a plain GET is a 400 naming it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PortWebSocketTest {
    private static final String TOKEN = "port-socket-token-0123456789abcdef";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    private LocalSandboxProvider local;
    private SandboxServer server;
    private HttpClient http;
    private String session;
    private int port;

    @BeforeAll
    void start() throws Exception {
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local).port(0).token(TOKEN.toCharArray()).start();
        http = HttpClient.newBuilder().connectTimeout(WAIT).build();
        session = JSON.readTree(send("POST", "/v1/sessions", "{}").body())
                .path("id")
                .asText();
        // below the ephemeral range (32768-60999): an outgoing connection of anything on the host cannot hold it
        port = ThreadLocalRandom.current().nextInt(14_000, 17_000);
        String start = "{\"argv\":[\"busybox\",\"nc\",\"-ll\",\"-p\",\"" + port + "\",\"-e\",\"cat\"]}";
        assertThat(send("POST", "/v1/sessions/" + session + "/processes", start).statusCode())
                .isEqualTo(201);
    }

    @AfterAll
    void stop() {
        http.close();
        server.close();
        local.close();
    }

    private HttpResponse<String> send(String method, String path, String body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
                .timeout(WAIT)
                .header("Authorization", "Bearer " + TOKEN)
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private URI socketUri(String path) {
        return URI.create(server.baseUrl().replaceFirst("^http", "ws") + path);
    }

    /** What one socket received: the bytes, the text messages, and how it closed. */
    static final class Received implements WebSocket.Listener {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final StringBuilder text = new StringBuilder();
        final CompletableFuture<Integer> closed = new CompletableFuture<>();

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
            byte[] b = new byte[data.remaining()];
            data.get(b);
            synchronized (bytes) {
                bytes.writeBytes(b);
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            text.append(data);
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
            closed.complete(statusCode);
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            closed.completeExceptionally(error);
        }
    }

    private WebSocket open(String path, Received r, boolean withToken) throws Exception {
        WebSocket.Builder b = http.newWebSocketBuilder().connectTimeout(WAIT);
        if (withToken) {
            b.header("Authorization", "Bearer " + TOKEN);
        }
        return b.buildAsync(socketUri(path), r).get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void bytesGoBothWaysAndTheEofMessageHalfClosesTheConnection() throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        for (; ; ) {
            Received r = new Received();
            WebSocket ws = open("/v1/sessions/" + session + "/ports/" + port + "/connect", r, true);
            ws.sendBinary(ByteBuffer.wrap("first ".getBytes(StandardCharsets.US_ASCII)), true)
                    .get(WAIT.toSeconds(), TimeUnit.SECONDS);
            ws.sendBinary(ByteBuffer.wrap("second\n".getBytes(StandardCharsets.US_ASCII)), true)
                    .get(WAIT.toSeconds(), TimeUnit.SECONDS);
            ws.sendText("{\"type\":\"eof\"}", true).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            int code = r.closed.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            if (code == 1011) { // nc between two clients, or not listening yet: said as an error message
                assertThat(JSON.readTree(r.text.toString()).path("type").asText())
                        .isEqualTo("error");
                assertThat(System.nanoTime()).as("the echo answers in time").isLessThan(deadline);
                Thread.sleep(100);
                continue;
            }
            assertThat(code).isEqualTo(1000);
            assertThat(r.bytes.toString(StandardCharsets.US_ASCII)).isEqualTo("first second\n");
            return;
        }
    }

    @Test
    void aRefusedPortIsAnErrorMessageNamingThePortThen1011() throws Exception {
        int nobody = port + 1;
        Received r = new Received();
        open("/v1/sessions/" + session + "/ports/" + nobody + "/connect", r, true);
        assertThat(r.closed.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1011);
        JsonNode error = JSON.readTree(r.text.toString());
        assertThat(error.path("type").asText()).isEqualTo("error");
        assertThat(error.path("error").path("type").asText()).isEqualTo("PortConnectionException");
        assertThat(error.path("error").path("port").asInt()).isEqualTo(nobody);
        assertThat(error.path("error").path("message").asText()).contains(Integer.toString(nobody));
    }

    @Test
    void theTokenIsCheckedBeforeTheUpgradeAndBadPortsAreRefusedNamingThem() throws Exception {
        String path = "/v1/sessions/" + session + "/ports/" + port + "/connect";
        assertThatThrownBy(() -> open(path, new Received(), false))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(WebSocketHandshakeException.class)
                .satisfies(e -> assertThat(
                                ((WebSocketHandshakeException) e).getResponse().statusCode())
                        .isEqualTo(401));
        for (String bad : new String[] {"0", "65536", "http"}) {
            assertThatThrownBy(
                            () -> open("/v1/sessions/" + session + "/ports/" + bad + "/connect", new Received(), true))
                    .cause()
                    .isInstanceOf(WebSocketHandshakeException.class)
                    .satisfies(e -> assertThat(((WebSocketHandshakeException) e)
                                    .getResponse()
                                    .statusCode())
                            .isEqualTo(400));
            HttpResponse<String> plain = send("GET", "/v1/sessions/" + session + "/ports/" + bad + "/connect", null);
            assertThat(plain.statusCode()).isEqualTo(400);
        }
        HttpResponse<String> notASocket = send("GET", path, null);
        assertThat(notASocket.statusCode()).isEqualTo(400);
        assertThat(notASocket.body()).contains("WebSocket");
        HttpResponse<String> badPort = send("GET", "/v1/sessions/" + session + "/ports/70000/connect", null);
        assertThat(badPort.statusCode()).isEqualTo(400);
        // the plain GET checks the upgrade first; over a socket the port is checked and named
        assertThatThrownBy(() -> open("/v1/sessions/nosuchsession/ports/" + port + "/connect", new Received(), true))
                .cause()
                .isInstanceOf(WebSocketHandshakeException.class)
                .satisfies(e -> assertThat(
                                ((WebSocketHandshakeException) e).getResponse().statusCode())
                        .isEqualTo(404));
    }
}
