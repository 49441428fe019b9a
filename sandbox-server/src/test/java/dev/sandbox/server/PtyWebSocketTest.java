package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.local.LocalSandboxProvider;
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
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The PTY WebSocket as a client other than the SDK sees it (the JDK's WebSocket client): the token is checked before
 * the upgrade, binary frames carry the terminal both ways, text frames carry JSON control messages, closing the socket
 * detaches without killing, and attaching again replays what the terminal showed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PtyWebSocketTest {
    private static final String TOKEN = "pty-socket-token-0123456789abcdef";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    private LocalSandboxProvider local;
    private SandboxServer server;
    private HttpClient http;
    private String session;

    @BeforeAll
    void start() throws Exception {
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local).port(0).token(TOKEN.toCharArray()).start();
        http = HttpClient.newBuilder().connectTimeout(WAIT).build();
        session = JSON.readTree(send("POST", "/v1/sessions", "{}").body())
                .path("id")
                .asText();
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

    /** What one socket received: the terminal's bytes as text, and the control messages in order. */
    static final class Received implements WebSocket.Listener {
        final StringBuffer screen = new StringBuffer();
        final LinkedBlockingQueue<JsonNode> control = new LinkedBlockingQueue<>();
        final CompletableFuture<Integer> closed = new CompletableFuture<>();
        private final StringBuilder text = new StringBuilder();

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
            screen.append(StandardCharsets.UTF_8.decode(data));
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                try {
                    control.add(JSON.readTree(text.toString()));
                } catch (Exception e) {
                    throw new AssertionError("a control frame that is not JSON: " + text, e);
                }
                text.setLength(0);
            }
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

        JsonNode next() throws InterruptedException {
            JsonNode n = control.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(n).as("a control message within " + WAIT).isNotNull();
            return n;
        }

        void await(String text) throws InterruptedException {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (screen.indexOf(text) < 0) {
                assertThat(System.nanoTime())
                        .as("'" + text + "' on the terminal: " + screen)
                        .isLessThan(deadline);
                Thread.sleep(20);
            }
        }
    }

    private WebSocket open(String path, Received into, String token) {
        WebSocket.Builder b = http.newWebSocketBuilder().connectTimeout(WAIT);
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b.buildAsync(URI.create(server.baseUrl().replace("http:", "ws:") + path), into)
                .orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS)
                .join();
    }

    private static void type(WebSocket ws, String keys) {
        ws.sendBinary(ByteBuffer.wrap(keys.getBytes(StandardCharsets.UTF_8)), true)
                .orTimeout(30, TimeUnit.SECONDS)
                .join();
    }

    private JsonNode ping() throws Exception {
        return JSON.readTree(send("GET", "/v1/ping", null).body());
    }

    @Test
    void aSocketOutlivesTheRequestHeadDeadline() throws Exception {
        // frames are not request heads: a socket typed into must not be closed a head deadline later
        try (SandboxServer quick = SandboxServer.builder(local)
                .port(0)
                .token(TOKEN.toCharArray())
                .requestHeadTimeout(Duration.ofMillis(500))
                .start()) {
            HttpResponse<String> created = http.send(
                    HttpRequest.newBuilder(URI.create(quick.baseUrl() + "/v1/sessions"))
                            .timeout(WAIT)
                            .header("Authorization", "Bearer " + TOKEN)
                            .POST(HttpRequest.BodyPublishers.ofString("{}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            String id = JSON.readTree(created.body()).path("id").asText();
            Received got = new Received();
            WebSocket ws = http.newWebSocketBuilder()
                    .header("Authorization", "Bearer " + TOKEN)
                    .buildAsync(
                            URI.create(quick.baseUrl().replace("http:", "ws:") + "/v1/sessions/" + id
                                    + "/ptys?argv=/bin/sh"),
                            got)
                    .orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS)
                    .join();
            assertThat(got.next().path("type").asText()).isEqualTo("hello");
            type(ws, "echo first-$((1+1))\n");
            got.await("first-2");
            Thread.sleep(1_500); // three head deadlines
            type(ws, "echo second-$((2+2))\n");
            got.await("second-4");
            assertThat(got.closed).isNotDone();
            type(ws, "exit\n");
            got.closed.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void theTokenIsCheckedBeforeTheUpgrade() {
        String path = "/v1/sessions/" + session + "/ptys";
        assertThatThrownBy(() -> open(path, new Received(), null))
                .isInstanceOf(CompletionException.class)
                .cause()
                .isInstanceOf(WebSocketHandshakeException.class)
                .satisfies(e -> assertThat(
                                ((WebSocketHandshakeException) e).getResponse().statusCode())
                        .isEqualTo(401));
        assertThatThrownBy(() -> open(path, new Received(), "wrong-token-0123456789abcdef"))
                .cause()
                .isInstanceOf(WebSocketHandshakeException.class);
    }

    @Test
    void anUnknownPtyIsATypedNotFoundBeforeTheUpgrade() throws Exception {
        HttpResponse<String> info = send("GET", "/v1/sessions/" + session + "/ptys/pty-nope", null);
        assertThat(info.statusCode()).isEqualTo(404);
        assertThat(JSON.readTree(info.body()).path("error").path("type").asText())
                .isEqualTo("ProcessNotFoundException");
        assertThatThrownBy(() -> open("/v1/sessions/" + session + "/ptys/pty-nope", new Received(), TOKEN))
                .cause()
                .isInstanceOf(WebSocketHandshakeException.class)
                .satisfies(e -> assertThat(
                                ((WebSocketHandshakeException) e).getResponse().statusCode())
                        .isEqualTo(404));
    }

    @Test
    void aSocketTypesReadsResizesDetachesAndAttachesAgain() throws Exception {
        Received first = new Received();
        WebSocket ws = open("/v1/sessions/" + session + "/ptys?argv=/bin/sh&cols=90&rows=20", first, TOKEN);
        JsonNode hello = first.next();
        assertThat(hello.path("type").asText()).isEqualTo("hello");
        String ptyId = hello.path("id").asText();
        assertThat(ptyId).isNotEmpty();
        assertThat(hello.path("pid").asLong()).isPositive();

        type(ws, "stty size; echo typed-$((6*7))\n");
        first.await("20 90");
        first.await("typed-42");

        ws.sendText("{\"type\":\"resize\",\"cols\":132,\"rows\":43}", true).join();
        type(ws, "stty size\n");
        first.await("43 132");

        ws.sendText("{\"type\":\"resize\",\"cols\":0,\"rows\":43}", true).join();
        JsonNode error = first.next();
        assertThat(error.path("type").asText()).isEqualTo("error");
        assertThat(error.path("error").path("type").asText()).isEqualTo("InvalidArgumentException");
        assertThat(error.path("error").path("field").asText()).isEqualTo("cols");
        ws.sendText("not json", true).join();
        assertThat(first.next().path("error").path("type").asText()).isEqualTo("MalformedRequest");
        // JSON that is no object (WireDecodersFuzzTest's finding): a typed error naming the body, not an internal one
        ws.sendText("null", true).join();
        JsonNode noObject = first.next().path("error");
        assertThat(noObject.path("type").asText()).isEqualTo("InvalidArgumentException");
        assertThat(noObject.path("field").asText()).isEqualTo("body");

        assertThat(ping().path("ptysAttached").asInt()).isEqualTo(1);
        assertThat(ping().path("ptysRunning").asInt()).isEqualTo(1);
        type(ws, "echo still-$((1+1))-here\n");
        first.await("still-2-here");
        ws.sendClose(WebSocket.NORMAL_CLOSURE, "bye")
                .orTimeout(30, TimeUnit.SECONDS)
                .join();
        first.closed.get(30, TimeUnit.SECONDS);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (ping().path("ptysAttached").asInt() != 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(ping().path("ptysAttached").asInt()).isZero();
        assertThat(ping().path("ptysRunning").asInt())
                .as("closing the socket detaches only")
                .isEqualTo(1);

        Received second = new Received();
        WebSocket again = open("/v1/sessions/" + session + "/ptys/" + ptyId, second, TOKEN);
        assertThat(second.next().path("id").asText()).isEqualTo(ptyId);
        second.await("still-2-here"); // replayed
        type(again, "exit 7\n");
        JsonNode exit = second.next();
        assertThat(exit.path("type").asText()).isEqualTo("exit");
        assertThat(exit.path("code").asInt()).isEqualTo(7);
        assertThat(second.closed.get(30, TimeUnit.SECONDS)).isEqualTo(WebSocket.NORMAL_CLOSURE);

        HttpResponse<String> info = send("GET", "/v1/sessions/" + session + "/ptys/" + ptyId, null);
        assertThat(JSON.readTree(info.body()).path("running").asBoolean()).isFalse();
        assertThat(JSON.readTree(info.body()).path("exitCode").asInt()).isEqualTo(7);
        deadline = System.nanoTime() + WAIT.toNanos();
        while (ping().path("ptysRunning").asInt() != 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(ping().path("ptysRunning").asInt()).isZero();
    }

    @Test
    void badPtyOptionsAreRefusedNamingTheField() throws Exception {
        HttpResponse<String> r = send("POST", "/v1/sessions/" + session + "/ptys", "{\"argv\":[\"sh\"],\"cols\":5000}");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(r.body()).path("error").path("field").asText()).isEqualTo("cols");
        HttpResponse<String> notSocket = send("GET", "/v1/sessions/" + session + "/ptys?argv=sh", null);
        assertThat(notSocket.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(notSocket.body()).path("error").path("type").asText())
                .isEqualTo("WebSocketRequired");
    }
}
