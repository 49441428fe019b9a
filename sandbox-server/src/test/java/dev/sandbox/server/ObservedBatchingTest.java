package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.SandboxProvider;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.micrometer.SandboxObservationNames;
import dev.sandbox.micrometer.SandboxObservations;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.io.BufferedReader;
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
import org.junit.jupiter.api.Test;

/**
 * A provider decorated by Micrometer's observations ({@link SandboxObservations}) behind the server keeps the
 * server's line batching: the frames of a command's output carry runs of many lines, as with the plain provider.
 */
class ObservedBatchingTest {
    private static final String TOKEN = "observed-batching-token-0123456789";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int LINES = 20_000;

    /** The lines of each {@code lines} frame of one exec, and how many lines came as events of their own. */
    private record Frames(List<Integer> linesPerFrame, int singleLines, List<String> texts) {}

    /** Creates a session through a server over the provider, streams {@code seq} and, when asked, runs a command. */
    private static Frames execThrough(SandboxProvider provider, boolean runToo) throws Exception {
        try (SandboxServer server = SandboxServer.builder(provider)
                        .port(0)
                        .token(TOKEN.toCharArray())
                        .start();
                HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build()) {
            HttpResponse<byte[]> created = http.send(
                    request(server, "/v1/sessions")
                            .POST(HttpRequest.BodyPublishers.ofString("{}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(created.statusCode()).isEqualTo(201);
            String session = JSON.readTree(created.body()).path("id").asText();
            HttpResponse<InputStream> stream = http.send(
                    request(server, "/v1/sessions/" + session + "/exec")
                            .header("Accept", "application/x-ndjson")
                            .header("Sandbox-Batch", "lines")
                            .POST(HttpRequest.BodyPublishers.ofString("{\"argv\":[\"seq\",\"1\",\"" + LINES + "\"]}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertThat(stream.statusCode()).isEqualTo(200);
            List<Integer> perFrame = new ArrayList<>();
            List<String> texts = new ArrayList<>();
            int single = 0;
            try (BufferedReader in = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    JsonNode n = JSON.readTree(line);
                    String type = n.path("type").asText();
                    if (type.equals("lines")) {
                        String text = n.path("text").asText();
                        String[] lines = text.substring(0, text.length() - 1).split("\n", -1);
                        perFrame.add(lines.length);
                        texts.addAll(List.of(lines));
                    } else if (type.equals("stdout")) {
                        single++;
                        texts.add(n.path("text").asText());
                    } else if (type.equals("exit")) {
                        assertThat(n.path("code").asInt()).isZero();
                        break;
                    }
                }
            }
            if (runToo) {
                HttpResponse<byte[]> ran = http.send(
                        request(server, "/v1/sessions/" + session + "/run")
                                .POST(HttpRequest.BodyPublishers.ofString("{\"argv\":[\"echo\",\"ran\"]}"))
                                .build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                assertThat(ran.statusCode()).isEqualTo(200);
            }
            return new Frames(perFrame, single, texts);
        }
    }

    private static HttpRequest.Builder request(SandboxServer server, String path) {
        return HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
                .timeout(WAIT)
                .header("Authorization", "Bearer " + TOKEN);
    }

    /** Every frame but the last holds a run of many lines: the lines of a read of the pipe, not one line each. */
    private static void assertBatched(Frames frames, String provider) {
        assertThat(frames.texts())
                .as("the lines through the %s provider", provider)
                .hasSize(LINES);
        for (int i = 0; i < LINES; i++) {
            assertThat(frames.texts().get(i)).isEqualTo(Integer.toString(i + 1));
        }
        assertThat(frames.singleLines())
                .as("lines sent alone through the %s provider", provider)
                .isZero();
        List<Integer> perFrame = frames.linesPerFrame();
        // seq writes its output in blocks of 4 KiB (some 800 lines here) that arrive whole in one read
        assertThat(perFrame.subList(0, perFrame.size() - 1))
                .as("the lines of each frame through the %s provider", provider)
                .allMatch(n -> n >= 50);
    }

    @Test
    void anObservedProviderBehindTheServerKeepsItsLineBatching() throws Exception {
        try (LocalSandboxProvider local = LocalSandboxProvider.create()) {
            assertBatched(execThrough(local, false), "plain");
        }
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        try (LocalSandboxProvider local = LocalSandboxProvider.create()) {
            SandboxProvider provider = SandboxObservations.observe(local, observations, meters);
            assertThat(SandboxObservations.isObserved(provider)).isTrue();
            assertBatched(execThrough(provider, true), "observed");
        }
        // the decorator is in the path: the session's creation and a run through the server are observed
        assertThat(meters.get(SandboxObservationNames.CREATE).timer().count()).isEqualTo(1);
        assertThat(meters.get(SandboxObservationNames.RUN).timer().count()).isEqualTo(1);
    }
}
