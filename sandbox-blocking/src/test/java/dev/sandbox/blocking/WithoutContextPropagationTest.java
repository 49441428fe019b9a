package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The facade without Micrometer's context-propagation (an optional dependency, left off this execution's class path,
 * as in most applications): nothing of it is loaded, and calls, streams and streamed writes work.
 */
class WithoutContextPropagationTest {

    @Test
    void theFacadeWorksWithoutTheLibrary() throws Exception {
        assertThatThrownBy(() -> Class.forName("io.micrometer.context.ContextRegistry"))
                .isInstanceOf(ClassNotFoundException.class);

        try (SandboxClient client = SandboxClient.local()) {
            ExecResult result = client.process().run(ExecOptions.of("echo", "hi"));
            assertThat(result.stdout()).isEqualTo("hi\n");
            try (ExecStream events = client.process().exec(ExecOptions.of("echo", "there"))) {
                assertThat(events.stream().count()).isEqualTo(2);
            }
            client.files().write("a.txt", new java.io.ByteArrayInputStream("abc".getBytes(StandardCharsets.UTF_8)));
            assertThat(client.files().readAllBytes("a.txt", 10))
                    .asString(StandardCharsets.UTF_8)
                    .isEqualTo("abc");
        }
    }
}
