package dev.sandbox.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.SandboxProvider;
import dev.sandbox.samples.webflux.ExecController.ExitData;
import dev.sandbox.samples.webflux.ExecController.LineData;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import tools.jackson.databind.json.JsonMapper;

/**
 * The HTTP API over a real Netty server on a loopback port, with real processes behind it: event names and order,
 * live delivery, bad input, and what happens when the client goes away or stops reading.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ExecEndpointTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final ParameterizedTypeReference<ServerSentEvent<String>> SSE =
            new ParameterizedTypeReference<>() {};
    private static final JsonMapper JSON = new JsonMapper();

    @LocalServerPort
    int port;

    @Autowired
    SandboxProvider provider;

    @TempDir
    Path dir;

    WebTestClient client;

    @BeforeEach
    void client() {
        client = WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:" + port)
                .responseTimeout(WAIT)
                .build();
    }

    private Flux<ServerSentEvent<String>> exec(String shellCommand) {
        return client.post()
                .uri("/api/exec")
                .contentType(MediaType.APPLICATION_JSON)
                .accept(MediaType.TEXT_EVENT_STREAM)
                .bodyValue(Map.of("command", List.of("sh", "-c", shellCommand)))
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .contentTypeCompatibleWith(MediaType.TEXT_EVENT_STREAM)
                .returnResult(SSE)
                .getResponseBody();
    }

    private static boolean line(ServerSentEvent<String> event, String name, String text) {
        return name.equals(event.event())
                && text.equals(JSON.readValue(event.data(), LineData.class).text());
    }

    private static ExitData exit(ServerSentEvent<String> event) {
        assertThat(event.event()).isEqualTo("exit");
        return JSON.readValue(event.data(), ExitData.class);
    }

    @Test
    void page_is_served_at_the_root() {
        String page = client.get()
                .uri("/")
                .exchange()
                .expectStatus()
                .isOk()
                .expectHeader()
                .contentTypeCompatibleWith(MediaType.TEXT_HTML)
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        assertThat(page).contains("id=\"command\"", "id=\"run\"", "api/exec");
    }

    @Test
    void streams_stdout_and_stderr_lines_in_order_then_the_exit_code() {
        StepVerifier.create(exec("echo one; sleep 0.2; echo two >&2; sleep 0.2; echo three; exit 3"))
                .expectNextMatches(e -> line(e, "stdout", "one"))
                .expectNextMatches(e -> line(e, "stderr", "two"))
                .expectNextMatches(e -> line(e, "stdout", "three"))
                .assertNext(e -> {
                    ExitData exit = exit(e);
                    assertThat(exit.code()).isEqualTo(3);
                    assertThat(exit.termination()).isEqualTo("EXITED");
                })
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void line_data_is_json_so_carriage_returns_and_unicode_survive() {
        StepVerifier.create(exec("printf 'progress 50%%\\rprogress 100%% \\342\\234\\223\\n'"))
                .assertNext(e -> {
                    LineData data = JSON.readValue(e.data(), LineData.class);
                    assertThat(data.text()).isEqualTo("progress 50%\rprogress 100% \u2713");
                    assertThat(data.offset()).isZero();
                    assertThat(data.partial()).isFalse();
                })
                .assertNext(e -> assertThat(exit(e).code()).isZero())
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void lines_arrive_while_the_command_is_still_running() throws IOException {
        // the command waits for a file that the test creates only after it has seen the first line: if the server
        // held lines back until the command ended, this would time out
        Path go = dir.resolve("go");
        StepVerifier.create(exec("echo waiting; while [ ! -e " + go + " ]; do sleep 0.05; done; echo released"))
                .expectNextMatches(e -> line(e, "stdout", "waiting"))
                .then(() -> {
                    try {
                        Files.createFile(go);
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                })
                .expectNextMatches(e -> line(e, "stdout", "released"))
                .assertNext(e -> assertThat(exit(e).code()).isZero())
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void a_program_that_cannot_start_ends_the_stream_with_an_error_event() {
        Flux<ServerSentEvent<String>> events = client.post()
                .uri("/api/exec")
                .contentType(MediaType.APPLICATION_JSON)
                .accept(MediaType.TEXT_EVENT_STREAM)
                .bodyValue(Map.of("command", List.of("/no/such/program")))
                .exchange()
                .expectStatus()
                .isOk()
                .returnResult(SSE)
                .getResponseBody();
        StepVerifier.create(events)
                .assertNext(e -> {
                    assertThat(e.event()).isEqualTo("error");
                    assertThat(JSON.readValue(e.data(), ApiError.class).message())
                            .contains("/no/such/program");
                })
                .expectComplete()
                .verify(WAIT);
    }

    private ApiError badRequest(String body) {
        return client.post()
                .uri("/api/exec")
                .contentType(MediaType.APPLICATION_JSON)
                .accept(MediaType.TEXT_EVENT_STREAM)
                .bodyValue(body)
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectHeader()
                .contentTypeCompatibleWith(MediaType.APPLICATION_JSON)
                .expectBody(ApiError.class)
                .returnResult()
                .getResponseBody();
    }

    @Test
    void an_empty_command_is_a_400_naming_the_field() {
        ApiError error = badRequest("{\"command\": []}");
        assertThat(error.field()).isEqualTo("command");
        assertThat(error.message()).contains("command", "empty");
    }

    @Test
    void a_missing_command_is_a_400_naming_the_field() {
        ApiError error = badRequest("{}");
        assertThat(error.field()).isEqualTo("command");
        assertThat(error.message()).contains("command is required");
    }

    @Test
    void a_command_that_is_not_an_array_of_strings_is_a_400_naming_the_field() {
        assertThat(badRequest("{\"command\": \"ls -l\"}").field()).isEqualTo("command");
        assertThat(badRequest("{\"command\": [\"ls\", null]}").field()).isEqualTo("command[1]");
        assertThat(badRequest("{\"command\": [\"\"]}").field()).isEqualTo("command[0]");
        assertThat(badRequest("{\"command\": [\"a\\u0000b\"]}").field()).isEqualTo("command[0]");
    }

    @Test
    void a_body_that_is_not_json_is_a_400() {
        ApiError error = badRequest("run ls please");
        assertThat(error.error()).isEqualTo("invalid_body");
        assertThat(error.message()).contains("must be JSON");
    }

    @Test
    void cancelling_the_stream_kills_the_process_and_its_children() throws Exception {
        Path pidFile = dir.resolve("pid");
        Path childFile = dir.resolve("child");
        StepVerifier.create(
                        exec("echo $$ > " + pidFile + "; sleep 60 & echo $! > " + childFile + "; echo started; wait"))
                .expectNextMatches(e -> line(e, "stdout", "started"))
                .thenCancel()
                .verify(WAIT);
        long shell = Processes.readPid(pidFile, WAIT);
        long child = Processes.readPid(childFile, WAIT);

        assertThat(Processes.awaitGone(shell, Duration.ofSeconds(1)))
                .as("the shell %d ends within 1 s of the cancel", shell)
                .isTrue();
        assertThat(Processes.awaitGone(child, Duration.ofSeconds(1)))
                .as("its child sleep %d ends too", child)
                .isTrue();
        assertNoSessionsWithin(Duration.ofSeconds(2));
    }

    @Test
    void a_client_that_stops_reading_stalls_the_process_instead_of_filling_server_memory() throws Exception {
        Path pidFile = dir.resolve("pid");
        String command = "echo $$ > " + pidFile + "; exec yes \"$(printf '%0512d' 0)\"";
        byte[] body = JSON.writeValueAsBytes(Map.of("command", List.of("sh", "-c", command)));
        long pid;
        try (Socket socket = new Socket()) {
            socket.setReceiveBufferSize(64 * 1024);
            socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            OutputStream out = socket.getOutputStream();
            out.write(("POST /api/exec HTTP/1.1\r\nHost: 127.0.0.1:" + port
                            + "\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: "
                            + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            // and never read: once the socket buffers are full, the server must stop asking the process for more
            pid = Processes.readPid(pidFile, WAIT);
            long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            long before = Processes.bytesWritten(pid);
            while (true) {
                Thread.sleep(500);
                long now = Processes.bytesWritten(pid);
                if (now == before) {
                    break;
                }
                assertThat(System.nanoTime() - deadline)
                        .as("the writer stalls; it has written %d bytes so far", now)
                        .isNegative();
                before = now;
            }
            System.out.printf("the writer stalled after %d bytes%n", before);
            assertThat(before).as("bytes written before the stall").isLessThan(64L * 1024 * 1024);
            assertThat(Processes.running(pid)).as("stalled, not killed").isTrue();
        }
        assertThat(Processes.awaitGone(pid, Duration.ofSeconds(1)))
                .as("closing the connection kills the writer %d", pid)
                .isTrue();
        assertNoSessionsWithin(Duration.ofSeconds(2));
    }

    private void assertNoSessionsWithin(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<?> sessions = provider.list(Map.of()).collectList().block(WAIT);
        while (!sessions.isEmpty() && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
            sessions = provider.list(Map.of()).collectList().block(WAIT);
        }
        assertThat(sessions).as("sessions left after the stream ended").isEmpty();
    }
}
