package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A {@code sandbox serve --pool N} process for a test: started with its stderr in a file, its URL read from its first
 * line, and its {@code GET /pool} counts read and awaited.
 *
 * @param process the serve process
 * @param url its base URL
 * @param token the token it accepts
 * @param stderr the file its stderr goes to
 */
record ServedPool(Process process, String url, String token, Path stderr) {
    static final Duration WAIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** Starts the command (a serve) and waits, at most a minute, for the URL it serves on. */
    static ServedPool start(List<String> command, String token, Path stderr) throws Exception {
        Process serve = new ProcessBuilder(command)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectError(stderr.toFile())
                .start();
        BufferedReader out = new BufferedReader(new InputStreamReader(serve.getInputStream(), StandardCharsets.UTF_8));
        String first = CompletableFuture.supplyAsync(() -> {
                    try {
                        return out.readLine();
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                })
                .get(WAIT.toSeconds(), TimeUnit.SECONDS);
        ServedPool served = new ServedPool(serve, null, token, stderr);
        assertThat(first).as(served::err).contains(" sessions on http://");
        return new ServedPool(serve, first.substring(first.indexOf("http://")).trim(), token, stderr);
    }

    /** What the server wrote to stderr so far. */
    String err() {
        try {
            return Files.readString(stderr);
        } catch (IOException e) {
            return e.toString();
        }
    }

    /** The pool's counts now. */
    JsonNode counts() throws Exception {
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(url + "/pool"))
                        .header("Authorization", "Bearer " + token)
                        .timeout(WAIT)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** Waits, at most a minute, for the pool's counts to say what is expected. */
    JsonNode await(String what, Predicate<JsonNode> expected) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        JsonNode now = counts();
        while (!expected.test(now)) {
            assertThat(System.nanoTime()).as(what + "; last counts " + now).isLessThan(deadline);
            Thread.sleep(50); // polling the pool's refill, bounded by the deadline
            now = counts();
        }
        return now;
    }

    /** Sends SIGTERM and waits, at most a minute, for the process to end. */
    void stop() throws InterruptedException {
        process.toHandle().destroy();
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("serve stops within 60 s of SIGTERM")
                .isTrue();
    }
}
