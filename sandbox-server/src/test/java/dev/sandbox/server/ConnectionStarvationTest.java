package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Connections that never present the token cannot starve the server: 2,000 idle or half-sent ones are open while a
 * client with the token is served, and the server closes every one of them itself. Streams of a client with the token
 * outlive those deadlines. Requests the HTTP codec refuses get the JSON error body.
 */
class ConnectionStarvationTest {
    private static final char[] TOKEN = "starvation-token-0123456789".toCharArray();
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int STRANGERS = 2000;
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void idleAndHalfSentConnectionsAreClosedWhileATokenHolderIsServed() throws Exception {
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server = SandboxServer.builder(local)
                        .port(0)
                        .token(TOKEN)
                        .maxConnections(128)
                        .requestHeadTimeout(Duration.ofSeconds(1))
                        .unauthenticatedTimeout(Duration.ofSeconds(2))
                        .start();
                RemoteSandboxProvider remote = RemoteSandboxProvider.builder()
                        .baseUrl(server.baseUrl())
                        .token(TOKEN)
                        .build()) {
            List<Socket> strangers = new ArrayList<>();
            try {
                byte[] halfHead =
                        "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Le".getBytes(StandardCharsets.US_ASCII);
                for (int i = 0; i < STRANGERS; i++) {
                    Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
                    strangers.add(s);
                    if (i % 2 == 1) {
                        s.getOutputStream().write(halfHead);
                        s.getOutputStream().flush();
                    }
                }

                // meanwhile a client with the token is served, including a stream longer than both deadlines
                SandboxSession session =
                        remote.create(SessionOptions.defaults()).block(WAIT);
                assertThat(session.run(ExecOptions.of("echo", "served"))
                                .block(WAIT)
                                .stdout())
                        .isEqualTo("served\n");
                List<ExecEvent> events = session.exec(ExecOptions.shell("echo early; sleep 3; echo late"))
                        .collectList()
                        .block(WAIT);
                assertThat(events)
                        .filteredOn(e -> e instanceof ExecEvent.Stdout)
                        .extracting(e -> ((ExecEvent.Stdout) e).text())
                        .containsExactly("early", "late");

                // and the server closed every stranger's connection (a read sees the end, or a reset)
                long deadline = System.nanoTime() + WAIT.toNanos();
                int closed = 0;
                for (Socket s : strangers) {
                    if (closedByServer(s, deadline)) {
                        closed++;
                    }
                }
                assertThat(closed).as("connections the server closed").isEqualTo(STRANGERS);
                assertThat(session.run(ExecOptions.of("echo", "still"))
                                .block(WAIT)
                                .stdout())
                        .isEqualTo("still\n");
                session.destroy().block(WAIT);
            } finally {
                for (Socket s : strangers) {
                    s.close();
                }
            }
        }
    }

    private static boolean closedByServer(Socket s, long deadlineNanos) throws IOException {
        InputStream in = s.getInputStream();
        while (true) {
            long left = Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000);
            if (System.nanoTime() >= deadlineNanos) {
                return false;
            }
            s.setSoTimeout((int) Math.min(left, Integer.MAX_VALUE));
            try {
                if (in.read() < 0) {
                    return true;
                }
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException e) {
                return true; // reset by the server
            }
        }
    }

    @Test
    void requestsTheCodecRefusesGetJsonErrors() throws Exception {
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server =
                        SandboxServer.builder(local).port(0).token(TOKEN).start()) {
            String token = new String(TOKEN);
            String bigHeader = "X-Big: " + "a".repeat(20 * 1024) + "\r\n";
            assertRefusal(
                    server,
                    "GET /v1/ping HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\n" + bigHeader + "\r\n",
                    431);
            assertRefusal(server, "GET /v1/ping?" + "q=1&".repeat(5000) + " HTTP/1.1\r\nHost: x\r\n\r\n", 414);
            assertRefusal(server, "GET /v1/ping HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n", 400);
        }
    }

    private static void assertRefusal(SandboxServer server, String request, int status) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
            s.setSoTimeout((int) WAIT.toMillis());
            OutputStream out = s.getOutputStream();
            out.write(request.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            s.getInputStream().transferTo(answer); // the server closes after the answer
            String text = answer.toString(StandardCharsets.UTF_8);
            assertThat(text).startsWith("HTTP/1.1 " + status);
            assertThat(text).containsIgnoringCase("content-type: application/json");
            String body = text.substring(text.indexOf("\r\n\r\n") + 4);
            JsonNode n = JSON.readTree(body);
            assertThat(n.path("error").path("type").asText()).isNotEmpty();
            assertThat(n.path("error").path("message").asText()).isNotEmpty();
        }
    }
}
