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
        return open(method, path, body, accept, lastEventId, false);
    }

    private InputStream open(
            String method, String path, String body, String accept, String lastEventId, boolean lineFrames)
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
        if (lineFrames) {
            b.header("Sandbox-Batch", "lines");
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
        // stdout and stderr are two pipes: each stream keeps its order, but the two may come in either order
        assertThat(rest)
                .extracting(Sse::event)
                .containsExactlyInAnyOrder("stderr", "stdout", "stdout", "stdout", "exit");
        assertThat(rest.get(4).event()).isEqualTo("exit");
        List<Sse> stderr = rest.stream().filter(e -> e.event().equals("stderr")).toList();
        assertThat(stderr.get(0).data().path("text").asText()).isEqualTo("oops");
        assertThat(stderr.get(0).id()).as("stderr line at stderr offset 0").endsWith(":0");
        assertThat(rest.stream().filter(e -> e.event().equals("stdout")))
                .extracting(e -> e.data().path("text").asText())
                .containsExactly("4", "5", "6");
        assertThat(rest.get(4).data().path("code").asInt()).isZero();
        assertThat(send("DELETE", "/v1/sessions/" + session + "/execs/sse-resume-1", null, null)
                        .statusCode())
                .isEqualTo(204);
    }

    /** The lines of {@code lines} frames (and single line events) read until the exit, with their offsets. */
    private static List<long[]> readLines(BufferedReader in, int max, List<String> texts, String[] last)
            throws IOException {
        List<long[]> out = new ArrayList<>();
        String line;
        while (out.size() < max && (line = in.readLine()) != null) {
            JsonNode n = JSON.readTree(line);
            String type = n.path("type").asText();
            last[0] = type;
            if (type.equals("lines")) {
                assertThat(n.path("stream").asText()).isEqualTo("stdout");
                long at = n.path("offset").asLong();
                String text = n.path("text").asText();
                assertThat(text).endsWith("\n");
                for (String t : text.substring(0, text.length() - 1).split("\n", -1)) {
                    long next = at + t.getBytes(StandardCharsets.UTF_8).length + 1;
                    out.add(new long[] {at, next});
                    texts.add(t);
                    at = next;
                }
                assertThat(at).isEqualTo(n.path("next").asLong());
            } else if (type.equals("stdout")) {
                out.add(new long[] {n.path("offset").asLong(), n.path("next").asLong()});
                texts.add(n.path("text").asText());
            } else if (type.equals("exit")) {
                break;
            }
        }
        return out;
    }

    @Test
    void linesFramesCarryRunsOfLinesAndResumeFromAnyLineInThem() throws Exception {
        String exec = "/v1/sessions/" + session + "/exec";
        String body = "{\"id\":\"lines-resume-1\",\"argv\":[\"seq\",\"1\",\"20000\"]}";
        List<String> firstTexts = new ArrayList<>();
        String[] last = {null};
        long resumeAfter;
        int framesRead;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                open("POST", exec, body, "application/x-ndjson", null, true), StandardCharsets.UTF_8))) {
            // the first frame holds many lines (seq writes them at once)
            String line = in.readLine();
            JsonNode frame = JSON.readTree(line);
            assertThat(frame.path("type").asText()).isEqualTo("lines");
            assertThat(frame.path("offset").asLong()).isZero();
            String text = frame.path("text").asText();
            String[] lines = text.substring(0, text.length() - 1).split("\n", -1);
            assertThat(lines.length).isGreaterThan(10);
            framesRead = lines.length;
            // the client delivered half of them when the connection dropped
            int delivered = lines.length / 2;
            long at = 0;
            for (int i = 0; i < delivered - 1; i++) {
                at += lines[i].length() + 1;
            }
            resumeAfter = at; // the offset of the last line delivered, in the middle of the frame
            for (int i = 0; i < delivered; i++) {
                firstTexts.add(lines[i]);
            }
        }
        assertThat(framesRead).isGreaterThan(firstTexts.size());
        List<String> rest = new ArrayList<>();
        List<long[]> offsets;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                open(
                        "GET",
                        "/v1/sessions/" + session + "/execs/lines-resume-1/events?afterStdout=" + resumeAfter
                                + "&afterStderr=-1",
                        null,
                        "application/x-ndjson",
                        null,
                        true),
                StandardCharsets.UTF_8))) {
            offsets = readLines(in, 100_000, rest, last);
        }
        assertThat(last[0]).isEqualTo("exit");
        assertThat(offsets.getFirst()[0]).isGreaterThan(resumeAfter);
        for (int i = 1; i < offsets.size(); i++) {
            assertThat(offsets.get(i)[0]).isEqualTo(offsets.get(i - 1)[1]);
        }
        List<String> all = new ArrayList<>(firstTexts);
        all.addAll(rest);
        assertThat(all).hasSize(20_000);
        for (int i = 0; i < all.size(); i++) {
            assertThat(all.get(i)).isEqualTo(Integer.toString(i + 1));
        }
        assertThat(send("DELETE", "/v1/sessions/" + session + "/execs/lines-resume-1", null, null)
                        .statusCode())
                .isEqualTo(204);
    }

    @Test
    void withoutTheHeaderEveryLineIsItsOwnEvent() throws Exception {
        String body = "{\"argv\":[\"seq\",\"1\",\"3000\"]}";
        List<String> texts = new ArrayList<>();
        String[] last = {null};
        List<String> types = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(
                open("POST", "/v1/sessions/" + session + "/exec", body, "application/x-ndjson", null),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                JsonNode n = JSON.readTree(line);
                types.add(n.path("type").asText());
                if (n.path("type").asText().equals("stdout")) {
                    texts.add(n.path("text").asText());
                    assertThat(n.path("next").asLong())
                            .isEqualTo(n.path("offset").asLong()
                                    + n.path("text").asText().length()
                                    + 1);
                }
                if (n.path("type").asText().equals("exit")) {
                    break;
                }
            }
        }
        assertThat(types).doesNotContain("lines");
        assertThat(texts).hasSize(3000);
        assertThat(texts.getLast()).isEqualTo("3000");
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
