package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.local.LocalSandboxProvider;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Extra endpoints mounted on a real server ({@link SandboxServer.Builder#endpoint}): behind the token, under their
 * path only, with bounded bodies, and streamed chunk by chunk.
 */
class ServerEndpointTest {
    private static final String TOKEN = "endpoint-test-token-0123";
    private static final Duration WAIT = Duration.ofSeconds(20);

    static LocalSandboxProvider provider;
    static SandboxServer server;
    static final Sinks.Many<byte[]> stream = Sinks.many().unicast().onBackpressureBuffer();
    static final CountDownLatch stopped = new CountDownLatch(1);
    final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        provider = LocalSandboxProvider.create();
        ServerEndpoint echo = new ServerEndpoint() {
            @Override
            public Mono<Response> handle(Request request) {
                if (request.path().endsWith("/stream")) {
                    return Mono.just(new Response(200, Map.of("content-type", "text/plain"), stream.asFlux()));
                }
                return request.body()
                        .map(body -> Response.text(
                                201,
                                "text/plain",
                                request.method() + " " + request.path() + " by " + request.tenant() + " x="
                                        + request.header("X-Test") + ": "
                                        + new String(body, StandardCharsets.UTF_8)));
            }

            @Override
            public void stop() {
                stopped.countDown();
            }
        };
        server = SandboxServer.builder(provider)
                .port(0)
                .token(TOKEN.toCharArray())
                .maxJsonBytes(1024)
                .endpoint("/echo", echo)
                .start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.stop(Duration.ofSeconds(5));
            assertThat(stopped.getCount())
                    .as("the endpoint was told the server stops")
                    .isZero();
        }
        if (provider != null) {
            provider.close();
        }
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(server.baseUrl() + path)).timeout(WAIT);
    }

    @Test
    void answers_under_its_path_with_the_token_only() throws Exception {
        HttpResponse<String> ok = http.send(
                request("/echo/a/b")
                        .header("Authorization", "Bearer " + TOKEN)
                        .header("X-Test", "yes")
                        .POST(HttpRequest.BodyPublishers.ofString("hello"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(ok.statusCode()).isEqualTo(201);
        assertThat(ok.body()).isEqualTo("POST /echo/a/b by default x=yes: hello");

        HttpResponse<String> noToken = http.send(
                request("/echo").POST(HttpRequest.BodyPublishers.ofString("x")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(noToken.statusCode()).isEqualTo(401);

        HttpResponse<String> notUnder = http.send(
                request("/echoes").header("Authorization", "Bearer " + TOKEN).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(notUnder.statusCode()).isEqualTo(404);
    }

    @Test
    void a_body_over_the_limit_is_refused_with_413() throws Exception {
        HttpResponse<String> big = http.send(
                request("/echo")
                        .header("Authorization", "Bearer " + TOKEN)
                        .POST(HttpRequest.BodyPublishers.ofString("x".repeat(2048)))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(big.statusCode()).isEqualTo(413);
    }

    @Test
    void each_chunk_reaches_the_client_as_it_comes() throws Exception {
        HttpResponse<InputStream> response = http.send(
                request("/echo/stream")
                        .header("Authorization", "Bearer " + TOKEN)
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            stream.tryEmitNext("first\n".getBytes(StandardCharsets.UTF_8));
            assertThat(lines.readLine()).isEqualTo("first"); // arrives while the stream is still open
            stream.tryEmitNext("second\n".getBytes(StandardCharsets.UTF_8));
            assertThat(lines.readLine()).isEqualTo("second");
            stream.tryEmitComplete();
            assertThat(lines.readLine()).isNull();
        }
    }

    @Test
    void paths_that_are_the_servers_own_or_malformed_are_refused() {
        SandboxServer.Builder builder = SandboxServer.builder(provider);
        ServerEndpoint none = r -> Mono.just(ServerEndpoint.Response.empty(204));
        assertThatThrownBy(() -> builder.endpoint("/v1/mine", none))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("/v1");
        assertThatThrownBy(() -> builder.endpoint("mcp", none))
                .isInstanceOf(InvalidArgumentException.class)
                .extracting(e -> ((InvalidArgumentException) e).field())
                .isEqualTo("path");
        assertThatThrownBy(() -> builder.endpoint("/a/..", none))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("'/a/..'");
        builder.endpoint("/mcp", none);
        assertThatThrownBy(() -> builder.endpoint("/mcp/inner", none))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("overlaps");
    }
}
