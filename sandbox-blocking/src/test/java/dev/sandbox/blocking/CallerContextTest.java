package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import io.micrometer.context.ContextRegistry;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * With Micrometer's context-propagation on the class path (this class runs in its own Surefire execution that has
 * it), what the calling thread holds in a registered thread local reaches the reactive calls the facade makes: the
 * Reactor {@code Context} each call sees carries it, through both waiting paths (a call awaited, a stream read) and a
 * streamed write.
 */
class CallerContextTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String KEY = "test.request";
    private static final ThreadLocal<String> REQUEST = new ThreadLocal<>();

    private static LocalSandboxProvider provider;
    private SandboxSession session;
    private final Map<String, String> seen = new ConcurrentHashMap<>();

    @BeforeAll
    static void register() {
        // the default Surefire execution, which leaves the library off, runs this class only when a -Dtest names it
        Assumptions.assumeTrue(
                CallerContextTest.class.getClassLoader().getResource("io/micrometer/context/ContextRegistry.class")
                        != null,
                "context-propagation is not on this execution's class path");
        ContextRegistry.getInstance().registerThreadLocalAccessor(KEY, REQUEST::get, REQUEST::set, REQUEST::remove);
        provider = LocalSandboxProvider.create();
    }

    @AfterAll
    static void unregister() {
        if (provider == null) {
            return;
        }
        provider.close();
        ContextRegistry.getInstance().removeThreadLocalAccessor(KEY);
    }

    @BeforeEach
    void session() {
        session = provider.create(SessionOptions.defaults()).block(WAIT);
    }

    @AfterEach
    void destroy() {
        REQUEST.remove();
        session.destroy().block(WAIT);
    }

    @Test
    void theCallingThreadsContextReachesEveryKindOfCall() throws Exception {
        REQUEST.set("request-1");
        SandboxClient client = SandboxClient.attach(recording(SandboxSession.class, session));

        client.process().run(ExecOptions.of("true"));
        try (ExecStream events = client.process().exec(ExecOptions.of("echo", "hi"))) {
            assertThat(events.stream().count()).isEqualTo(2);
        }
        client.files().write("a.txt", new ByteArrayInputStream("abc".getBytes(StandardCharsets.UTF_8)));
        try (InputStream in = client.files().read("a.txt")) {
            assertThat(in.readAllBytes()).asString(StandardCharsets.UTF_8).isEqualTo("abc");
        }

        assertThat(seen)
                .containsEntry("run", "request-1")
                .containsEntry("exec", "request-1")
                .containsEntry("write", "request-1")
                .containsEntry("read", "request-1");
    }

    @Test
    void aThreadWithoutTheValuePassesNone() {
        SandboxClient client = SandboxClient.attach(recording(SandboxSession.class, session));

        client.process().run(ExecOptions.of("true"));

        assertThat(seen).containsEntry("run", "absent");
    }

    /** The target, with every Mono or Flux it answers noting what its subscriber's Context holds under KEY. */
    private <T> T recording(Class<T> type, T target) {
        return type.cast(Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {type}, (p, m, args) -> {
            Object result;
            try {
                result = m.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (result instanceof SandboxFiles files) {
                return recording(SandboxFiles.class, files);
            }
            if (result instanceof Mono<?> mono) {
                return Mono.deferContextual(ctx -> {
                    seen.put(m.getName(), ctx.getOrDefault(KEY, "absent"));
                    return mono;
                });
            }
            if (result instanceof Flux<?> flux) {
                return Flux.deferContextual(ctx -> {
                    seen.put(m.getName(), ctx.getOrDefault(KEY, "absent"));
                    return flux;
                });
            }
            return result;
        }));
    }
}
