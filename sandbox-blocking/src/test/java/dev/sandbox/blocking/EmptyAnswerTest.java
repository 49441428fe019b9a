package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;

/**
 * The blocking facade's results are non-null (its package is {@code @NullMarked}). A session whose operation completes
 * without a value (a third-party provider or decorator breaking the contract) makes the blocking call fail with a
 * {@link BackendException} naming the operation, where it used to return {@code null}. The session is a real local
 * one, seen through a proxy that answers {@code ping} and {@code files().stat} with an empty {@link Mono} and passes
 * every other call on.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EmptyAnswerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @SuppressWarnings("unchecked")
    private static <T> T answeringEmpty(Class<T> type, T target, Set<String> empty, InvocationHandler files) {
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            if (empty.contains(method.getName())) {
                return Mono.empty();
            }
            if (method.getName().equals("files") && files != null) {
                return files.invoke(proxy, method, args);
            }
            try {
                return method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        });
    }

    @Test
    void anOperationThatCompletesEmptyFailsNamingItInsteadOfReturningNull() {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            SandboxSession real = provider.create(SessionOptions.defaults()).block(WAIT);
            assertThat(real).isNotNull();
            SandboxFiles files = answeringEmpty(SandboxFiles.class, real.files(), Set.of("stat"), null);
            SandboxSession session =
                    answeringEmpty(SandboxSession.class, real, Set.of("ping"), (proxy, method, args) -> files);
            try (SandboxClient client =
                    SandboxClient.builder().defaultTimeout(WAIT).attach(session)) {
                assertThatThrownBy(client::ping)
                        .isInstanceOf(BackendException.class)
                        .hasMessage("the ping of session " + real.id() + " completed without a value");
                assertThatThrownBy(() -> client.files().stat("anything"))
                        .isInstanceOf(BackendException.class)
                        .hasMessage("the stat of anything completed without a value");

                // the operations the proxy passes on still answer
                client.files().write("a.txt", new byte[] {'x'});
                assertThat(client.files().readAllBytes("a.txt", 0, 10)).containsExactly('x');
            } finally {
                real.destroy().block(WAIT);
            }
        }
    }
}
