package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.io.IOException;
import java.net.URI;
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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What the server accepts at its edge and what its errors say: absurd numbers and oversized environments are 400s
 * naming the field (and nothing is applied), a workdir outside the server's root is refused, and error bodies are JSON
 * that name no host path and none of the server's {@code PATH}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EdgeValidationTest {
    private static final String TOKEN = "edge-token-0123456789abcdef";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String HUGE = "99999999999999999999999";
    private static final String MAX = Long.toString(Long.MAX_VALUE);

    private LocalSandboxProvider local;
    private SandboxServer server;
    private RemoteSandboxProvider remote;
    private HttpClient http;
    private Path root;
    private SandboxSession session;
    private String workdir;

    @BeforeAll
    void start() throws IOException {
        root = Files.createTempDirectory("edge-root-");
        Files.createDirectories(root.resolve("inside"));
        Files.createSymbolicLink(root.resolve("escape"), Path.of("/etc"));
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local)
                .port(0)
                .token(TOKEN.toCharArray())
                .maxJsonBytes(8 * 1024 * 1024)
                .workdirRoot(root)
                .start();
        remote = RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(TOKEN.toCharArray())
                .build();
        http = HttpClient.newBuilder().connectTimeout(WAIT).build();
        session = remote.create(SessionOptions.defaults()).block(WAIT);
        workdir = session.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim();
    }

    @AfterAll
    void stop() throws IOException {
        session.destroy().block(WAIT);
        http.close();
        remote.close();
        server.close();
        local.close();
        Files.delete(root.resolve("escape"));
        Files.delete(root.resolve("inside"));
        Files.delete(root);
    }

    private record Answer(int status, String body, JsonNode json) {}

    private Answer send(String method, String path, String body) {
        HttpRequest req = HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
                .timeout(WAIT)
                .header("Authorization", "Bearer " + TOKEN)
                .header("Content-Type", "application/json")
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build();
        try {
            HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
            JsonNode n = r.body().isEmpty() ? null : JSON.readTree(r.body()); // every error body is JSON
            return new Answer(r.statusCode(), r.body(), n);
        } catch (IOException e) {
            throw new AssertionError(method + " " + path + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private void assertRefused(String method, String path, String body, String field) {
        Answer a = send(method, path, body);
        assertThat(a.status).as(method + " " + path + " " + abbreviate(body)).isEqualTo(400);
        assertThat(a.json.path("error").path("field").asText())
                .as(method + " " + path + " " + abbreviate(body) + ": " + a.body)
                .isEqualTo(field);
    }

    private static String abbreviate(String s) {
        return s == null || s.length() < 200 ? s : s.substring(0, 200) + "...";
    }

    private String sessionPath(String rest) {
        return "/v1/sessions/" + session.id() + rest;
    }

    /** Every route that reads a JSON body, as method and path (ids that do not exist are checked after the body). */
    private List<String[]> bodyRoutes() {
        return List.of(
                new String[] {"POST", "/v1/sessions"},
                new String[] {"POST", "/v1/leases"},
                new String[] {"PUT", sessionPath("/lifetime")},
                new String[] {"PUT", sessionPath("/idle-timeout")},
                new String[] {"POST", sessionPath("/run")},
                new String[] {"POST", sessionPath("/exec")},
                new String[] {"POST", sessionPath("/execs/no-such-exec/ack")},
                new String[] {"POST", sessionPath("/processes")},
                new String[] {"POST", sessionPath("/processes/no-such-process/signal")},
                new String[] {"POST", sessionPath("/files/batch")},
                new String[] {"POST", sessionPath("/files/mkdir")},
                new String[] {"POST", sessionPath("/files/move")},
                new String[] {"POST", sessionPath("/ptys")},
                new String[] {"POST", sessionPath("/ptys/no-such-pty/resize")},
                new String[] {"POST", sessionPath("/ptys/no-such-pty/signal")});
    }

    /** The stats route refuses an interval out of range, or not a number, before streaming: 400 naming it. */
    @Test
    void aStatsIntervalOutOfRangeIs400NamingIt() {
        for (String bad : List.of("5", "0", "-100", "86400001", "soon")) {
            Answer a = send("GET", sessionPath("/stats?intervalMs=" + bad), null);
            assertThat(a.status).as(bad + ": " + a.body).isEqualTo(400);
            assertThat(a.body).as(bad).contains("interval").contains(bad);
        }
    }

    @Test
    void aBodyThatIsNoJsonObjectIs400NamingTheBody() {
        int before = local.list(Map.of()).collectList().block(WAIT).size();
        Map<String, String> bodies = Map.of(
                "null",
                "null",
                "array",
                "[{\"argv\":[\"true\"]}]",
                "number",
                "42",
                "string",
                "\"x\"",
                "boolean",
                "true");
        for (String[] route : bodyRoutes()) {
            for (Map.Entry<String, String> body : bodies.entrySet()) {
                Answer a = send(route[0], route[1], body.getValue());
                String what = route[0] + " " + route[1] + " " + body.getValue() + ": " + a.body;
                assertThat(a.status).as(what).isEqualTo(400);
                JsonNode error = a.json.path("error");
                assertThat(error.path("type").asText()).as(what).isEqualTo("InvalidArgumentException");
                assertThat(error.path("field").asText()).as(what).isEqualTo("body");
                assertThat(error.path("message").asText())
                        .as(what)
                        .isEqualTo("body must be a JSON object, got " + body.getKey());
            }
        }
        assertThat(local.list(Map.of()).collectList().block(WAIT)).hasSize(before); // nothing was made
        // the session still serves
        assertThat(session.run(ExecOptions.of("echo", "alive")).block(WAIT).stdout())
                .isEqualTo("alive\n");
    }

    @Test
    void absurdNumbersAre400NamingTheField() {
        assertRefused("POST", sessionPath("/run"), "{\"argv\":[\"true\"],\"timeoutMs\":" + HUGE + "}", "timeoutMs");
        assertRefused("POST", sessionPath("/run"), "{\"argv\":[\"true\"],\"timeoutMs\":" + MAX + "}", "timeoutMs");
        assertRefused("POST", sessionPath("/run"), "{\"argv\":[\"true\"],\"timeoutMs\":1e300}", "timeoutMs");
        assertRefused(
                "POST", sessionPath("/run"), "{\"argv\":[\"true\"],\"idleTimeoutMs\":" + MAX + "}", "idleTimeoutMs");
        assertRefused(
                "POST", sessionPath("/run"), "{\"argv\":[\"true\"],\"maxOutputBytes\":" + HUGE + "}", "maxOutputBytes");
        assertRefused(
                "POST", sessionPath("/processes"), "{\"argv\":[\"true\"],\"ringBytes\":" + HUGE + "}", "ringBytes");
        assertRefused("POST", sessionPath("/ptys"), "{\"argv\":[\"sh\"],\"cols\":" + HUGE + ",\"rows\":24}", "cols");
        assertRefused("PUT", sessionPath("/idle-timeout"), "{\"ms\":" + MAX + "}", "idleTimeout");
        assertRefused("POST", sessionPath("/processes/x/signal"), "{\"signal\":" + HUGE + "}", "signal");
        assertRefused("GET", sessionPath("/processes/x/exit?waitMs=" + HUGE), null, "waitMs");

        int before = local.list(Map.of()).collectList().block(WAIT).size();
        assertRefused("POST", "/v1/sessions", "{\"lifetimeMs\":" + MAX + "}", "lifetimeMs");
        assertRefused("POST", "/v1/sessions", "{\"lifetimeMs\":" + HUGE + "}", "lifetimeMs");
        assertRefused("POST", "/v1/sessions", "{\"lifetimeMs\":null,\"idleTimeoutMs\":" + MAX + "}", "idleTimeoutMs");
        assertThat(local.list(Map.of()).collectList().block(WAIT))
                .as("no session was made")
                .hasSize(before);

        Answer status = send("GET", sessionPath("/status"), null);
        assertRefused("PUT", sessionPath("/lifetime"), "{\"ms\":" + MAX + "}", "lifetime");
        Answer after = send("GET", sessionPath("/status"), null);
        assertThat(after.json.path("expiresAt"))
                .as("the lifetime was not applied")
                .isEqualTo(status.json.path("expiresAt"));
        assertThat(session.run(ExecOptions.of("echo", "ok")).block(WAIT).stdout())
                .isEqualTo("ok\n");
    }

    @Test
    void oversizedEnvironmentsAre400NamingTheField() {
        String big = "x".repeat(2 * 1024 * 1024);
        assertRefused("POST", sessionPath("/run"), "{\"argv\":[\"true\"],\"env\":{\"BIG\":\"" + big + "\"}}", "env");
        assertRefused("POST", sessionPath("/run"), "{\"argv\":[\"echo\",\"" + big + "\"]}", "argv");
        assertRefused("POST", sessionPath("/exec"), "{\"argv\":[\"true\"],\"env\":{\"BIG\":\"" + big + "\"}}", "env");
        assertRefused(
                "POST", sessionPath("/processes"), "{\"argv\":[\"true\"],\"env\":{\"BIG\":\"" + big + "\"}}", "env");
        assertRefused(
                "POST",
                sessionPath("/ptys"),
                "{\"argv\":[\"sh\"],\"env\":{\"BIG\":\"" + big + "\"},\"cols\":80,\"rows\":24}",
                "env");
        assertRefused("POST", "/v1/sessions", "{\"env\":{\"BIG\":\"" + big + "\"}}", "env");
    }

    @Test
    void aWorkdirOutsideTheServersRootIsRefused() throws IOException {
        for (String outside : List.of("/", "/etc", root + "/..", root + "/inside/../..", root + "/escape", "../")) {
            Answer a = send("POST", "/v1/sessions", "{\"workdir\":" + JSON.writeValueAsString(outside) + "}");
            assertThat(a.status).as(outside).isEqualTo(400);
            assertThat(a.json.path("error").path("field").asText()).isEqualTo("workdir");
            if (!outside.startsWith(root.toString())) {
                assertThat(a.json.path("error").path("message").asText()).contains(outside);
            }
        }
        SandboxSession inside = remote.create(SessionOptions.defaults()
                        .withWorkdir(root.resolve("inside").toString()))
                .block(WAIT);
        assertThat(inside.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim())
                .isEqualTo(root.resolve("inside").toRealPath().toString());
        inside.destroy().block(WAIT);
    }

    @Test
    void errorBodiesNameNoHostPath() {
        List<Answer> answers = new ArrayList<>();
        answers.add(send("POST", sessionPath("/run"), "{\"argv\":[\"no-such-command-4711\"]}"));
        answers.add(send("POST", sessionPath("/run"), "{\"argv\":[\"true\"],\"cwd\":\"no-such-dir\"}"));
        answers.add(send("POST", sessionPath("/processes"), "{\"argv\":[\"no-such-command-4711\"]}"));
        answers.add(send("GET", sessionPath("/files/content?path=missing.txt"), null));
        answers.add(send("GET", sessionPath("/files/content?path=."), null));
        answers.add(send("GET", sessionPath("/files/list?path=missing"), null));
        answers.add(send("GET", sessionPath("/files/stat?path=a/b/c"), null));
        answers.add(send("POST", sessionPath("/files/mkdir"), "{\"path\":\"missing/a/b\"}"));
        answers.add(send("POST", sessionPath("/files/move"), "{\"from\":\"missing\",\"to\":\"other\"}"));
        answers.add(send("DELETE", sessionPath("/files?path=missing"), null));
        answers.add(send("GET", sessionPath("/files/content?path=../../etc/shadow"), null));
        answers.add(send("GET", sessionPath("/files/content?path=/etc/shadow"), null));
        answers.add(send("GET", sessionPath("/files/watch?path=missing"), null));
        List<String> pathEntries = List.of(System.getenv("PATH").split(":"));
        String tmp = Path.of(System.getProperty("java.io.tmpdir")).toString();
        // not errors: mkdir makes parents (so "missing" is there for the move), and the removal of "missing" (moved
        // away) is done already: removal is idempotent
        assertThat(answers).filteredOn(a -> a.status >= 400).hasSize(answers.size() - 3);
        for (Answer a : answers) {
            if (a.status < 400) {
                continue;
            }
            assertThat(a.json).as("a JSON body: " + a.body).isNotNull();
            assertThat(a.json.path("error").path("message").asText()).isNotEmpty();
            assertThat(a.body).doesNotContain(workdir).doesNotContain(tmp + "/").doesNotContain(root.toString());
            for (String entry : pathEntries) {
                if (!entry.isEmpty()) {
                    assertThat(a.body).as("names the PATH entry " + entry).doesNotContain(entry + ":");
                    assertThat(a.body).as("names the PATH entry " + entry).doesNotContain(entry + "/");
                }
            }
        }
    }

    @Test
    void rangesDepthsAndBatchesAreCheckedAtTheEdge() {
        session.files()
                .write("edge.txt", "0123456789".getBytes(StandardCharsets.UTF_8))
                .block(WAIT);
        assertRefused("GET", sessionPath("/files/content?path=edge.txt&offset=-1"), null, "offset");
        assertRefused("GET", sessionPath("/files/content?path=edge.txt&offset=0&length=-2"), null, "length");
        assertRefused("GET", sessionPath("/files/list?path=.&depth=0"), null, "depth");
        assertRefused("GET", sessionPath("/files/list?path=.&depth=" + HUGE), null, "depth");
        assertRefused(
                "POST",
                sessionPath("/files/batch"),
                "{\"files\":[{\"path\":\"d.txt\",\"content\":\"\"},{\"path\":\"d.txt\",\"content\":\"\"}]}",
                "files");
        assertThat(send("GET", sessionPath("/files/content?path=edge.txt&offset=2&length=3"), null).body)
                .isEqualTo("234");

        // one request larger than the server's JSON limit for other routes: the batch route has its own
        java.util.Map<String, byte[]> batch = new java.util.LinkedHashMap<>();
        java.util.Random random = new java.util.Random(3);
        for (int i = 0; i < 3; i++) {
            byte[] content = new byte[3 * 1024 * 1024 + 512 * 1024];
            random.nextBytes(content);
            batch.put("batch/f" + i + ".bin", content);
        }
        assertThat(session.files().writeAll(batch).block(WAIT))
                .extracting(dev.sandbox.FileInfo::size)
                .containsOnly((long) (3 * 1024 * 1024 + 512 * 1024));
        assertThat(session.files().readAllBytes("batch/f2.bin", 1 << 22).block(WAIT))
                .isEqualTo(batch.get("batch/f2.bin"));
    }
}
