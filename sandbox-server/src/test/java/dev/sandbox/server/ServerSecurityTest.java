package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.BackendException;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The server's defences, each checked with plain HTTP requests as any client could send them: the token on every
 * route, paths confined to the session root, limits on bodies, sessions and commands, and JSON errors for bad
 * requests. After each case the server must still answer.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServerSecurityTest {
    private static final String TOKEN = "security-token-0123456789abcdef";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    private LocalSandboxProvider local;
    private SandboxServer server;
    private RemoteSandboxProvider remote;
    private HttpClient http;
    private final List<SandboxSession> sessions = new ArrayList<>();

    @BeforeAll
    void start() {
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local)
                .port(0)
                .token(TOKEN.toCharArray())
                .maxJsonBytes(4096)
                .maxSessions(3)
                .maxExecs(2)
                .maxUploadBytes(1024 * 1024)
                .start();
        remote = RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(TOKEN.toCharArray())
                .build();
        http = HttpClient.newBuilder().connectTimeout(WAIT).build();
    }

    @AfterAll
    void stop() {
        http.close();
        remote.close();
        server.close();
        local.close();
    }

    @AfterEach
    void cleanUp() {
        for (SandboxSession s : sessions) {
            s.destroy().onErrorComplete().block(WAIT);
        }
        sessions.clear();
        assertServing();
    }

    private SandboxSession session() {
        SandboxSession s = remote.create(SessionOptions.defaults()).block(WAIT);
        sessions.add(s);
        return s;
    }

    private record Answer(int status, JsonNode body, HttpResponse<byte[]> raw) {
        String type() {
            return body == null ? null : body.path("error").path("type").asText(null);
        }
    }

    private Answer send(String method, String path, String token, HttpRequest.BodyPublisher body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
                .timeout(WAIT)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : body);
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            JsonNode n = null;
            String type = r.headers().firstValue("Content-Type").orElse("");
            if (type.startsWith("application/json") && r.body().length > 0) {
                n = JSON.readTree(r.body());
            }
            return new Answer(r.statusCode(), n, r);
        } catch (IOException e) {
            throw new AssertionError(method + " " + path + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private Answer send(String method, String path, String json) {
        return send(
                method,
                path,
                TOKEN,
                json == null ? null : HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
    }

    private void assertServing() {
        Answer ping = send("GET", "/v1/ping", null);
        assertThat(ping.status()).isEqualTo(200);
        assertThat(ping.body().path("status").asText()).isEqualTo("ok");
    }

    private static String q(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Test
    void everyRouteNeedsTheToken() {
        String sessionId = session().id();
        List<String[]> routes = List.of(
                new String[] {"GET", "/v1/ping"},
                new String[] {"POST", "/v1/sessions"},
                new String[] {"GET", "/v1/sessions"},
                new String[] {"GET", "/v1/sessions/" + sessionId},
                new String[] {"DELETE", "/v1/sessions/" + sessionId},
                new String[] {"POST", "/v1/sessions/" + sessionId + "/run"},
                new String[] {"GET", "/v1/sessions/" + sessionId + "/files/content?path=x"},
                new String[] {"GET", "/v1/no-such-route"});
        String sameLength = "x".repeat(TOKEN.length());
        for (String[] route : routes) {
            for (String token : new String[] {null, sameLength, TOKEN + "x", "short", ""}) {
                Answer a = send(route[0], route[1], token, HttpRequest.BodyPublishers.ofString("{}"));
                assertThat(a.status())
                        .as("%s %s with token %s", route[0], route[1], token)
                        .isEqualTo(401);
                assertThat(a.type()).isEqualTo("Unauthorized");
                assertThat(a.raw().headers().firstValue("WWW-Authenticate")).contains("Bearer");
            }
        }
        // another scheme carrying the right secret is still refused
        HttpRequest basic = HttpRequest.newBuilder(URI.create(server.baseUrl() + "/v1/ping"))
                .header("Authorization", "Basic " + TOKEN)
                .build();
        assertThat(send(basic).statusCode()).isEqualTo(401);
        // the session is untouched by the refused DELETE
        assertThat(remote.attach(sessionId).block(WAIT).id()).isEqualTo(sessionId);
        assertThat(server.toString()).doesNotContain(TOKEN);
        assertThat(remote.toString()).doesNotContain(TOKEN);
    }

    private HttpResponse<byte[]> send(HttpRequest r) {
        try {
            return http.send(r, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    @Test
    void pathsOutsideTheSessionRootAreForbidden() throws IOException {
        SandboxSession s = session();
        String root = s.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim();
        s.run(ExecOptions.shell("ln -s /etc etc-link; ln -s /etc/hostname host-link; mkdir d; echo hi > d/ok.txt"))
                .block(WAIT);
        String files = "/v1/sessions/" + s.id() + "/files";
        List<String> outside = List.of(
                "../outside.txt", "d/../../outside.txt", "/etc/hostname", "/tmp", "etc-link/hostname", "host-link");
        for (String path : outside) {
            for (String[] op : new String[][] {
                {"GET", files + "/content?path=" + q(path)},
                {"GET", files + "/stat?path=" + q(path)},
                {"GET", files + "/list?path=" + q(path)},
                {"GET", files + "/watch?path=" + q(path)},
                {"DELETE", files + "?path=" + q(path)}
            }) {
                if ((op[1].contains("/stat") || op[0].equals("DELETE")) && path.equals("host-link")) {
                    continue; // these do not follow the last link: the link itself is inside, and allowed
                }
                Answer a = send(op[0], op[1], (String) null);
                assertThat(a.status()).as("%s %s", op[0], op[1]).isEqualTo(403);
                assertThat(a.type()).isEqualTo("InvalidArgumentException");
                assertThat(a.body().path("error").path("field").asText()).isEqualTo("path");
            }
            if (path.equals("host-link")) {
                continue; // "host-link-new" and the like are names inside the root
            }
            Answer put = send(
                    "PUT",
                    files + "/content?path=" + q(path + "-new"),
                    TOKEN,
                    HttpRequest.BodyPublishers.ofString("escaped"));
            assertThat(put.status()).as("PUT %s", path).isEqualTo(403);
            Answer mkdir = send("POST", files + "/mkdir", "{\"path\":" + JSON.writeValueAsString(path + "-dir") + "}");
            assertThat(mkdir.status()).as("mkdir %s", path).isEqualTo(403);
            Answer move = send(
                    "POST",
                    files + "/move",
                    "{\"from\":\"d/ok.txt\",\"to\":" + JSON.writeValueAsString(path + "-mv") + "}");
            assertThat(move.status()).as("move to %s", path).isEqualTo(403);
        }
        // removing a link that points out removes the link, never its target
        String hostname = Files.readString(Path.of("/etc/hostname"));
        assertThat(send("DELETE", files + "?path=host-link", (String) null).status())
                .isEqualTo(204);
        assertThat(Path.of("/etc/hostname")).hasContent(hostname);
        Path parent = Path.of(root).getParent();
        assertThat(parent.resolve("outside.txt-new")).doesNotExist();
        assertThat(parent.resolve("outside.txt-dir")).doesNotExist();
        assertThat(Path.of("/etc/hostname-new")).doesNotExist();
        assertThat(Path.of(root, "d", "ok.txt")).exists();
        // inside the root still works, and the remote provider reports the same typed error as the local one
        assertThat(send("GET", files + "/content?path=d%2Fok.txt", (String) null)
                        .status())
                .isEqualTo(200);
        assertThatThrownBy(() -> s.files().readAllBytes("../outside.txt", 100).block(WAIT))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("path"))
                .hasMessageContaining("outside the session root");
    }

    @Test
    void bodiesOverTheLimitAre413AndLeaveNothingBehind() throws IOException {
        SandboxSession s = session();
        String big = "{\"argv\":[\"echo\",\"" + "x".repeat(10_000) + "\"]}";
        Answer sized = send("POST", "/v1/sessions/" + s.id() + "/run", big);
        assertThat(sized.status()).isEqualTo(413);
        assertThat(sized.type()).isEqualTo("PayloadTooLarge");
        // the same without a Content-Length (chunked), read until past the limit
        Answer chunked = send(
                "POST",
                "/v1/sessions",
                TOKEN,
                HttpRequest.BodyPublishers.ofInputStream(
                        () -> new ByteArrayInputStream(big.getBytes(StandardCharsets.UTF_8))));
        assertThat(chunked.status()).isEqualTo(413);
        assertServing();
        // an upload over the upload limit leaves no file and no temporary file
        String root = s.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim();
        assertThatThrownBy(() ->
                        s.files().write("big.bin", new byte[2 * 1024 * 1024]).block(WAIT))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("PayloadTooLarge");
        try (var entries = Files.list(Path.of(root))) {
            assertThat(entries.map(p -> p.getFileName().toString())).doesNotContain("big.bin");
        }
        assertThat(s.run(ExecOptions.shell("ls -a | grep -c tmp || true"))
                        .block(WAIT)
                        .stdout()
                        .trim())
                .isEqualTo("0");
    }

    @Test
    void tooManySessionsOrCommandsAre429() {
        SandboxSession a = session();
        session();
        session();
        Answer fourth = send("POST", "/v1/sessions", "{}");
        assertThat(fourth.status()).isEqualTo(429);
        assertThat(fourth.type()).isEqualTo("TooManySessions");
        assertThatThrownBy(() -> session()).isInstanceOf(BackendException.class).hasMessageContaining("429");
        // destroying one frees its slot
        sessions.remove(a);
        a.destroy().block(WAIT);
        SandboxSession again = session();

        var first = again.start(ExecOptions.of("sleep", "30")).block(WAIT);
        var second = again.start(ExecOptions.of("sleep", "30")).block(WAIT);
        Answer third = send("POST", "/v1/sessions/" + again.id() + "/run", "{\"argv\":[\"true\"]}");
        assertThat(third.status()).isEqualTo(429);
        assertThat(third.type()).isEqualTo("TooManyExecs");
        assertThatThrownBy(() -> again.exec(ExecOptions.of("true")).blockLast(WAIT))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("TooManyExecs");
        // a command that ends frees its slot
        first.kill().block(WAIT);
        first.exit().block(WAIT);
        second.kill().block(WAIT);
        second.exit().block(WAIT);
        long deadline = System.nanoTime() + WAIT.toNanos();
        Integer code = null;
        while (code == null && System.nanoTime() < deadline) {
            try {
                code = again.run(ExecOptions.of("true")).block(WAIT).exitCode();
            } catch (BackendException e) {
                sleep(20); // the exit reached the client a moment before the slot was freed
            }
        }
        assertThat(code).isZero();
    }

    @Test
    void badRequestsGetJsonErrors() {
        SandboxSession s = session();
        String run = "/v1/sessions/" + s.id() + "/run";
        Map<String, String[]> cases = Map.of(
                "{not json", new String[] {"400", "MalformedRequest"},
                "", new String[] {"400", "MalformedRequest"},
                "[1,2]", new String[] {"400", "InvalidArgumentException"},
                "{\"argv\":\"ls\"}", new String[] {"400", "InvalidArgumentException"},
                "{\"argv\":[\"ls\"],\"timeoutMs\":\"soon\"}", new String[] {"400", "InvalidArgumentException"},
                "{\"argv\":[\"ls\"],\"env\":{\"A\":1}}", new String[] {"400", "InvalidArgumentException"},
                "{\"argv\":[]}", new String[] {"400", "InvalidArgumentException"});
        for (Map.Entry<String, String[]> c : cases.entrySet()) {
            Answer a = send("POST", run, c.getKey());
            assertThat(a.status()).as(c.getKey()).isEqualTo(Integer.parseInt(c.getValue()[0]));
            assertThat(a.type()).as(c.getKey()).isEqualTo(c.getValue()[1]);
            assertThat(a.body().path("error").path("message").asText()).isNotBlank();
        }
        assertThat(send("POST", run, "{\"argv\":[\"ls\"],\"timeoutMs\":\"soon\"}")
                        .body()
                        .path("error")
                        .path("field")
                        .asText())
                .isEqualTo("timeoutMs");

        Answer route = send("GET", "/v1/sessions/" + s.id() + "/no-such-thing", (String) null);
        assertThat(route.status()).isEqualTo(404);
        assertThat(route.type()).isEqualTo("RouteNotFound");
        assertThat(send("PATCH", "/v1/ping", "{}").status()).isEqualTo(404);

        Answer unknown = send("GET", "/v1/sessions/no-such-session/status", (String) null);
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(unknown.type()).isEqualTo("SessionNotFoundException");
        assertThat(unknown.body().path("error").path("sessionId").asText()).isEqualTo("no-such-session");
        assertThat(send("POST", "/v1/sessions/no-such-session/run", "{\"argv\":[\"true\"]}")
                        .status())
                .isEqualTo(404);
        assertThatThrownBy(() -> remote.attach("no-such-session").block(WAIT))
                .isInstanceOf(SessionNotFoundException.class)
                .hasMessageContaining("no-such-session");
        Answer process = send("GET", "/v1/sessions/" + s.id() + "/processes/p-999", (String) null);
        assertThat(process.status()).isEqualTo(404);
        assertThat(process.type()).isEqualTo("ProcessNotFoundException");
        assertServing();
    }

    @Test
    void garbageOnTheWireDoesNotStopTheServer() throws IOException {
        for (String garbage : new String[] {
            "NOT HTTP AT ALL\r\n\r\n", "GET /v1/ping HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", "\0\1\2\3"
        }) {
            try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
                socket.setSoTimeout(5000);
                OutputStream out = socket.getOutputStream();
                out.write(garbage.getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
                socket.shutdownOutput();
                InputStream in = socket.getInputStream();
                in.readAllBytes(); // whatever it answers, it closes
            }
            assertServing();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
