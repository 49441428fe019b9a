package dev.sandbox.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.local.LocalSandboxProvider;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A WebFlux application on Spring Boot with a real tracer (Brave), serving on loopback a request that creates an
 * observed local session, runs a command in it and destroys it. The trace id the request came with (its W3C {@code
 * traceparent} header) is in the MDC of the SDK's log lines for that request, the core's and the decorator's, with the
 * session id; and the same holds for the blocking facade called from a thread in a traced observation.
 */
class WebFluxTraceTest {
    private static final String TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static ConfigurableApplicationContext app;
    private static URI base;
    private LogCapture logs;

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean(destroyMethod = "close")
        SandboxProvider sandboxProvider(ObservationRegistry registry) {
            return SandboxObservations.observe(LocalSandboxProvider.create(), registry);
        }

        @Bean
        RunController runController(SandboxProvider provider) {
            return new RunController(provider);
        }
    }

    @RestController
    static class RunController {
        private final SandboxProvider provider;

        RunController(SandboxProvider provider) {
            this.provider = provider;
        }

        /** Answers the session's id and what the command printed. */
        @GetMapping("/run")
        Mono<String> run() {
            return provider.create(SessionOptions.defaults())
                    .flatMap(session -> session.run(ExecOptions.of("echo", "hello"))
                            .flatMap(result -> session.destroy()
                                    .thenReturn(
                                            session.id() + " " + result.stdout().strip())));
        }
    }

    @BeforeAll
    static void startApp() {
        app = new SpringApplicationBuilder(App.class)
                .properties(
                        "server.port=0",
                        "server.address=127.0.0.1",
                        "spring.main.banner-mode=off",
                        "spring.reactor.context-propagation=auto",
                        "management.tracing.sampling.probability=1.0",
                        "logging.level.dev.sandbox=DEBUG")
                .run();
        base = URI.create("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port"));
    }

    @AfterAll
    static void stopApp() {
        if (app != null) {
            app.close();
        }
    }

    @BeforeEach
    void capture() {
        logs = LogCapture.attach();
    }

    @AfterEach
    void release() {
        logs.close();
    }

    @Test
    void aRequestsTraceIdReachesTheSdksLogLinesWithTheSessionId() throws Exception {
        HttpResponse<String> response;
        try (HttpClient http = HttpClient.newHttpClient()) {
            response = http.send(
                    HttpRequest.newBuilder(base.resolve("/run"))
                            .header("traceparent", "00-" + TRACE_ID + "-b7ad6b7169203331-01")
                            .timeout(WAIT)
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        }
        assertThat(response.statusCode()).isEqualTo(200);
        String sessionId = response.body().split(" ")[0];
        assertThat(response.body()).isEqualTo(sessionId + " hello");

        // the core's line, written on a scheduler thread while the session was made
        assertThat(logs.containing("created local session " + sessionId))
                .singleElement()
                .satisfies(line -> assertThat(line.mdc()).containsEntry("traceId", TRACE_ID));
        // the decorator's lines for the run and the destroy, on the caller's and the SDK's threads
        List<LogCapture.Line> sessionLines = logs.lines().stream()
                .filter(line -> line.message().contains("in session " + sessionId))
                .toList();
        assertThat(sessionLines).hasSize(4);
        assertThat(sessionLines)
                .allSatisfy(line -> assertThat(line.mdc())
                        .containsEntry("traceId", TRACE_ID)
                        .containsEntry(SandboxObservationNames.MDC_SESSION_ID, sessionId));
    }

    @Test
    void theTraceIdSurvivesTheBlockingFacade() {
        ObservationRegistry registry = app.getBean(ObservationRegistry.class);
        SandboxProvider provider = app.getBean(SandboxProvider.class);
        AtomicReference<String> traceId = new AtomicReference<>();
        AtomicReference<String> sessionId = new AtomicReference<>();

        Observation.createNotStarted("job", registry).observe(() -> {
            traceId.set(MDC.get("traceId"));
            try (SandboxClient client = SandboxClient.create(provider, SessionOptions.defaults())) {
                sessionId.set(client.sessionId());
                assertThat(client.process().run(ExecOptions.of("echo", "x")).stdout())
                        .isEqualTo("x\n");
            }
        });

        assertThat(traceId.get()).hasSize(32);
        assertThat(logs.containing("created local session " + sessionId.get()))
                .singleElement()
                .satisfies(line -> assertThat(line.mdc()).containsEntry("traceId", traceId.get()));
        List<LogCapture.Line> runLines = logs.containing("in session " + sessionId.get()).stream()
                .filter(line -> line.message().startsWith("sandbox.run "))
                .toList();
        assertThat(runLines).hasSize(2);
        assertThat(runLines)
                .allSatisfy(line -> assertThat(line.mdc())
                        .containsEntry("traceId", traceId.get())
                        .containsEntry(SandboxObservationNames.MDC_SESSION_ID, sessionId.get()));
    }
}
