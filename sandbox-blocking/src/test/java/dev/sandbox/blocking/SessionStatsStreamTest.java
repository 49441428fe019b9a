package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionStats;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A local session's stats through the blocking client: samples follow what runs, a bad interval is refused. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SessionStatsStreamTest {

    @Test
    void samplesFollowWhatRunsInTheSession() {
        try (SandboxClient client = SandboxClient.local()) {
            client.process().start(ExecOptions.shell("sleep 60 & sleep 60 & wait"));
            try (SessionStatsStream stats = client.stats(Duration.ofMillis(100))) {
                assertThat(stats.timeout()).isGreaterThan(Duration.ofMillis(100));
                Iterator<SessionStats> it = stats.iterator();
                SessionStats found = null;
                for (int i = 0; i < 100 && it.hasNext(); i++) {
                    SessionStats s = it.next();
                    if (s.pids() >= 3) {
                        found = s;
                        break;
                    }
                }
                assertThat(found)
                        .as("a sample with the shell and its two sleeps")
                        .isNotNull();
            }
        }
    }

    @Test
    void aBadIntervalIsRefusedAtOnceAndAClosedClientSaysSo() {
        SandboxClient client = SandboxClient.local();
        try {
            assertThatThrownBy(() -> client.stats(Duration.ofMillis(10)))
                    .isInstanceOfSatisfying(
                            InvalidArgumentException.class,
                            e -> assertThat(e.field()).isEqualTo("interval"));
        } finally {
            client.close();
        }
        assertThatThrownBy(() -> client.stats(Duration.ofSeconds(1))).isInstanceOf(SessionClosedException.class);
    }
}
