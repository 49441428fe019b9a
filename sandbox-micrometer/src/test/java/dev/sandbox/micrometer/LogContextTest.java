package dev.sandbox.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.ExecStream;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.local.LocalSandboxProvider;
import io.micrometer.context.ContextRegistry;
import io.micrometer.context.integration.Slf4jThreadLocalAccessor;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import reactor.core.publisher.Hooks;
import reactor.util.context.Context;

/**
 * Without a tracer: an application that keeps its own trace id in the MDC (and tells context-propagation about that
 * key) calls an observed provider. Through the blocking facade from a plain thread, with Reactor's automatic context
 * propagation, the SDK's log lines for those calls, also the ones written on the SDK's own threads, carry that trace
 * id and the session id; through the reactive API without automatic propagation, the decorator's own lines still do.
 */
class LogContextTest {
    private static final String TRACE_ID = "trace-blocking-1";
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static LocalSandboxProvider local;
    private static SandboxProvider provider;

    @BeforeAll
    static void setUp() {
        ContextRegistry.getInstance().registerThreadLocalAccessor(new Slf4jThreadLocalAccessor("traceId"));
        local = LocalSandboxProvider.create();
        provider = SandboxObservations.observe(local, TestObservationRegistry.create(), new SimpleMeterRegistry());
    }

    @AfterAll
    static void tearDown() {
        local.close();
        ContextRegistry.getInstance().removeThreadLocalAccessor(Slf4jThreadLocalAccessor.KEY);
    }

    @Test
    void theBlockingCallersMdcTraceIdAndTheSessionIdAreInTheSdksLogLines() {
        String sessionId;
        Hooks.enableAutomaticContextPropagation();
        try (LogCapture logs = LogCapture.attach()) {
            MDC.put("traceId", TRACE_ID);
            try (SandboxClient client = SandboxClient.create(provider, SessionOptions.defaults())) {
                sessionId = client.sessionId();
                assertThat(client.process().run(ExecOptions.of("echo", "x")).stdout())
                        .isEqualTo("x\n");
                try (ExecStream events = client.process().exec(ExecOptions.of("echo", "y"))) {
                    assertThat(events.stream().count()).isEqualTo(2);
                }
            } finally {
                MDC.remove("traceId");
            }

            assertThat(logs.containing("created local session " + sessionId))
                    .singleElement()
                    .satisfies(line -> assertThat(line.mdc()).containsEntry("traceId", TRACE_ID));
            List<LogCapture.Line> sessionLines = logs.containing("in session " + sessionId);
            // run, exec and destroy: each starts on this thread and ends on one of the SDK's
            assertThat(sessionLines).hasSize(6);
            assertThat(sessionLines)
                    .anySatisfy(line -> assertThat(line.thread())
                            .isNotEqualTo(Thread.currentThread().getName()));
            assertThat(sessionLines)
                    .allSatisfy(line -> assertThat(line.mdc())
                            .containsEntry("traceId", TRACE_ID)
                            .containsEntry(SandboxObservationNames.MDC_SESSION_ID, sessionId));
        } finally {
            Hooks.disableAutomaticContextPropagation();
        }
    }

    @Test
    void withoutAutomaticPropagationTheDecoratorsLinesStillCarryTheContextAndTheSessionId() {
        SandboxSession session = provider.create(SessionOptions.defaults()).block(WAIT);
        try (LogCapture logs = LogCapture.attach()) {
            session.exec(ExecOptions.of("echo", "z"))
                    .contextWrite(Context.of(Slf4jThreadLocalAccessor.KEY, Map.of("traceId", TRACE_ID)))
                    .blockLast(WAIT);

            List<LogCapture.Line> execLines = logs.containing("in session " + session.id());
            assertThat(execLines).hasSize(2); // starts here, ends on the thread that saw the exit
            assertThat(execLines)
                    .allSatisfy(line -> assertThat(line.mdc())
                            .containsEntry("traceId", TRACE_ID)
                            .containsEntry(SandboxObservationNames.MDC_SESSION_ID, session.id()));
            assertThat(MDC.get(SandboxObservationNames.MDC_SESSION_ID)).isNull(); // restored after each line
        } finally {
            session.destroy().block(WAIT);
        }
    }
}
