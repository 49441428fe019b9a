package dev.sandbox.micrometer;

import static dev.sandbox.micrometer.SandboxObservationNames.*;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import dev.sandbox.docker.RequiresDocker;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.integration.Slf4jThreadLocalAccessor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.publisher.Hooks;
import reactor.util.context.Context;

/**
 * An observed Docker provider (a busybox container under runc): its timers carry the provider's name and the
 * command's exit code, its counters the bytes that crossed the container's boundary, and the log lines the Docker
 * provider writes while making the session (on its own threads) carry the caller's trace id.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerObservationTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String TRACE_ID = "trace-docker-1";

    private DockerSandboxProvider docker;
    private MeterRegistry meters;
    private SandboxProvider provider;

    @BeforeAll
    void start() {
        docker = DockerSandboxProvider.create(
                DockerSettings.of("sandbox-test:busybox").withPullPolicy(DockerSettings.PullPolicy.NEVER));
        meters = new SimpleMeterRegistry();
        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        provider = SandboxObservations.observe(docker, observations, meters);
        ContextRegistry.getInstance().registerThreadLocalAccessor(new Slf4jThreadLocalAccessor("traceId"));
    }

    @AfterAll
    void stop() {
        ContextRegistry.getInstance().removeThreadLocalAccessor(Slf4jThreadLocalAccessor.KEY);
        docker.close();
    }

    @Test
    void aContainersOperationsAreTimedCountedAndLoggedWithTheCallersTraceId() {
        Context caller = Context.of(Slf4jThreadLocalAccessor.KEY, Map.of("traceId", TRACE_ID));
        SandboxSession session;
        Hooks.enableAutomaticContextPropagation();
        try (LogCapture logs = LogCapture.attach()) {
            session = provider.create(SessionOptions.defaults())
                    .contextWrite(caller)
                    .block(WAIT);
            try {
                ExecResult result = session.run(ExecOptions.shell("echo hi; exit 3"))
                        .contextWrite(caller)
                        .block(WAIT);
                assertThat(result.exitCode()).isEqualTo(3);
                session.files()
                        .write("/tmp/a.txt", "four".getBytes(StandardCharsets.UTF_8))
                        .block(WAIT);
                assertThat(session.files().readAllBytes("/tmp/a.txt", 100).block(WAIT))
                        .hasSize(4);
            } finally {
                session.destroy().block(WAIT);
            }

            List<LogCapture.Line> created = logs.containing("created docker session " + session.id());
            assertThat(created)
                    .singleElement()
                    .satisfies(line -> assertThat(line.mdc()).containsEntry("traceId", TRACE_ID));
            assertThat(logs.containing("in session " + session.id()).stream()
                            .filter(line -> line.message().startsWith("sandbox.run "))
                            .toList())
                    .hasSize(2)
                    .allSatisfy(line -> assertThat(line.mdc())
                            .containsEntry("traceId", TRACE_ID)
                            .containsEntry(MDC_SESSION_ID, session.id()));
        } finally {
            Hooks.disableAutomaticContextPropagation();
        }

        assertThat(meters.get(CREATE)
                        .tag(PROVIDER, "docker")
                        .tag(OUTCOME, OUTCOME_SUCCESS)
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(meters.get(RUN)
                        .tag(PROVIDER, "docker")
                        .tag(EXIT_CODE, "3")
                        .timer()
                        .count())
                .isEqualTo(1);
        assertThat(meters.get(DESTROY).tag(PROVIDER, "docker").timer().count()).isEqualTo(1);
        assertThat(meters.get(OUTPUT_BYTES)
                        .tag(PROVIDER, "docker")
                        .tag(OPERATION, "run")
                        .tag(STREAM, "stdout")
                        .counter()
                        .count())
                .isEqualTo(3);
        assertThat(meters.get(FILE_BYTES)
                        .tag(PROVIDER, "docker")
                        .tag(OPERATION, "write")
                        .counter()
                        .count())
                .isEqualTo(4);
        assertThat(meters.get(FILE_BYTES)
                        .tag(PROVIDER, "docker")
                        .tag(OPERATION, "read")
                        .counter()
                        .count())
                .isEqualTo(4);
    }
}
