package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.local.LocalSandboxProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The wire format as a client other than the SDK sees it: server-sent events with ids that a standard {@code
 * Last-Event-ID} reconnect resumes from, NDJSON with heartbeats, and the end marker of a snapshot.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WireProtocolTest {
    private static final String TOKEN = "protocol-token-0123456789abcdef";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    private LocalSandboxProvider local;
    private SandboxServer server;
    private HttpClient http;
    private String session;

    @BeforeAll
    void start() throws Exception {
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local)
                .port(0)
                .token(TOKEN.toCharArray())
                .heartbeat(Duration.ofMillis(200))
                .start();
        http = HttpClient.newBuilder().connectTimeout(WAIT).build();
        session = JSON.readTree(send("POST", "/v1/sessions", "{}", null).body())
                .path("id")
                .asText();
    }

    @AfterAll
    void stop() {
        http.close();
        server.close();
        local.close();
    }

    private HttpResponse<byte[]> send(String method, String path, String body, String accept) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
                .timeout(WAIT)
                .header("Authorization", "Bearer " + TOKEN)
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (accept != null) {
            b.header("Accept", accept);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private InputStream open(String method, String path, String body, String accept, String lastEventId)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
                .header("Authorization", "Bearer " + TOKEN)
                .header("Accept", accept)
                .method(
                        method,
                        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (lastEventId != null) {
            b.header("Last-Event-ID", lastEventId);
        }
        HttpResponse<InputStream> r = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    /** One server-sent event. */
    private record Sse(String id, String event, JsonNode data) {}

    /** Reads up to {@code max} events (skipping comments) from an SSE stream. */
    private static List<Sse> readSse(BufferedReader in, int max) throws IOException {
        List<Sse> out = new ArrayList<>();
        String id = null;
        String event = null;
        String data = null;
        String line;
        while (out.size() < max && (line = in.readLine()) != null) {
            if (line.isEmpty()) {
                if (event != null) {
                    out.add(new Sse(id, event, JSON.readTree(data)));
                }
                id = null;
                event = null;
                data = null;
            } else if (line.startsWith("id: ")) {
                id = line.substring(4);
            } else if (line.startsWith("event: ")) {
                event = line.substring(7);
            } else if (line.startsWith("data: ")) {
                data = line.substring(6);
            }
        }
        return out;
    }

    @Test
    void sseEventsCarryIdsThatLastEventIdResumesFrom() throws Exception {
        String exec = "/v1/sessions/" + session + "/exec";
        String body = "{\"id\":\"sse-resume-1\",\"argv\":[\"sh\",\"-c\",\"seq 1 3; echo oops >&2; seq 4 6\"]}";
        List<Sse> first;
        try (InputStream stream = open("POST", exec, body, "text/event-stream", null)) {
            first = readSse(new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8)), 3);
        } // the connection drops after three events
        assertThat(first).extracting(Sse::event).containsExactly("stdout", "stdout", "stdout");
        assertThat(first).extracting(e -> e.data().path("text").asText()).containsExactly("1", "2", "3");
        assertThat(first).extracting(Sse::id).containsExactly("0:-1", "2:-1", "4:-1");

        List<Sse> rest;
        try (InputStream stream = open(
                "GET",
                "/v1/sessions/" + session + "/execs/sse-resume-1/events",
                null,
                "text/event-stream",
                first.get(2).id())) {
            rest = readSse(new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8)), 10);
        }
        assertThat(rest).extracting(Sse::event).containsExactly("stderr", "stdout", "stdout", "stdout", "exit");
        assertThat(rest.get(0).data().path("text").asText()).isEqualTo("oops");
        assertThat(rest.get(0).id()).isEqualTo("4:0");
        assertThat(rest.subList(1, 4))
                .extracting(e -> e.data().path("text").asText())
                .containsExactly("4", "5", "6");
        assertThat(rest.get(4).data().path("code").asInt()).isZero();
        assertThat(send("DELETE", "/v1/sessions/" + session + "/execs/sse-resume-1", null, null)
                        .statusCode())
                .isEqualTo(204);
    }

    @Test
    void quietNdjsonStreamsSendHeartbeats() throws Exception {
        String body = "{\"id\":\"beats-1\",\"argv\":[\"sh\",\"-c\",\"sleep 1; echo done\"]}";
        List<JsonNode> lines = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                open("POST", "/v1/sessions/" + session + "/exec", body, "application/x-ndjson", null),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                lines.add(JSON.readTree(line));
            }
        }
        List<String> types = lines.stream().map(n -> n.path("type").asText()).toList();
        assertThat(types).contains("heartbeat");
        assertThat(types.indexOf("heartbeat")).isLessThan(types.indexOf("stdout"));
        assertThat(types.get(types.size() - 1)).isEqualTo("exit");
        assertThat(lines.get(types.indexOf("stdout")).path("offset").asLong()).isZero();
    }

    @Test
    void aSnapshotEndsWithAnEndMarkerAndOffsetsSkipWhatWasRead() throws Exception {
        JsonNode started = JSON.readTree(send(
                        "POST",
                        "/v1/sessions/" + session + "/processes",
                        "{\"argv\":[\"sh\",\"-c\",\"printf 'a\\\\nbb\\\\nccc\\\\n'; sleep 30\"]}",
                        null)
                .body());
        String output =
                "/v1/sessions/" + session + "/processes/" + started.path("id").asText() + "/output";
        List<JsonNode> lines = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (lines.size() < 4 && System.nanoTime() < deadline) {
            lines.clear();
            String text = new String(
                    send("GET", output + "?follow=false", null, "application/x-ndjson")
                            .body(),
                    StandardCharsets.UTF_8);
            for (String line : text.split("\n")) {
                lines.add(JSON.readTree(line));
            }
        }
        assertThat(lines).extracting(n -> n.path("type").asText()).containsExactly("stdout", "stdout", "stdout", "end");
        assertThat(lines).extracting(n -> n.path("offset").asLong()).startsWith(0L, 2L, 5L);
        // from the offset of the second line: the second and the third
        String from = new String(
                send("GET", output + "?follow=false&stdout=2", null, null).body(), StandardCharsets.UTF_8);
        assertThat(from.split("\n")).hasSize(3);
        assertThat(from.split("\n")[0]).contains("\"text\":\"bb\"");
        // after the second line: only the third
        String after = new String(
                send("GET", output + "?follow=false&afterStdout=2", null, null).body(), StandardCharsets.UTF_8);
        assertThat(after.split("\n")).hasSize(2);
        assertThat(after.split("\n")[0]).contains("\"text\":\"ccc\"");
        assertThat(send("POST", output.replace("/output", "/kill"), null, null).statusCode())
                .isEqualTo(204);
    }
}
