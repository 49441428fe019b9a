package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SessionOptions;
import dev.sandbox.SessionPausedException;
import dev.sandbox.local.LocalSandboxProvider;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The blocking facade's pause and resume, on real local processes. */
class PauseClientTest {
    private LocalSandboxProvider provider;

    @BeforeEach
    void start() {
        provider = LocalSandboxProvider.create();
    }

    @AfterEach
    void stop() {
        provider.close();
    }

    @Test
    void aPausedCounterWritesNothingUntilResumedAndLosesNothing() throws Exception {
        try (SandboxClient client = SandboxClient.create(provider, SessionOptions.defaults());
                ExecStream counter = client.process()
                        .exec(ExecOptions.shell("i=0; while true; do echo $i; i=$((i+1)); sleep 0.05; done"))) {
            Iterator<ExecEvent> events = counter.iterator();
            List<String> lines = new ArrayList<>();
            while (lines.size() < 3) {
                if (events.next() instanceof ExecEvent.Stdout out) {
                    lines.add(out.text());
                }
            }
            client.pause();
            client.pause(); // idempotent
            assertThat(client.ping().status()).isEqualTo("paused");
            Thread.sleep(300); // what was written before the freeze
            while (counter.ready()) {
                if (events.next() instanceof ExecEvent.Stdout out) {
                    lines.add(out.text());
                }
            }
            Thread.sleep(1000);
            assertThat(counter.ready()).as("a line while paused").isFalse();
            client.resume();
            client.resume();
            assertThat(client.ping().status()).isEqualTo("running");
            int before = lines.size();
            while (lines.size() < before + 5) {
                if (events.next() instanceof ExecEvent.Stdout out) {
                    lines.add(out.text());
                }
            }
            for (int i = 0; i < lines.size(); i++) {
                assertThat(lines.get(i)).as("line %d of %s", i, lines).isEqualTo(Integer.toString(i));
            }
        }
    }

    @Test
    void withoutAutoResumeACommandOnAPausedSessionFailsTyped() {
        try (SandboxClient client =
                SandboxClient.create(provider, SessionOptions.defaults().withAutoResume(false))) {
            client.pause();
            assertThatThrownBy(() -> client.process().run(ExecOptions.shell("echo no")))
                    .isInstanceOf(SessionPausedException.class)
                    .hasMessageContaining(client.sessionId())
                    .hasMessageContaining("paused");
            client.resume();
            assertThat(client.process().run(ExecOptions.shell("echo yes")).stdout())
                    .isEqualTo("yes\n");
        }
    }
}
