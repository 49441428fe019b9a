package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {

    @Test
    void parsesEachUnit() throws UsageException {
        assertThat(Durations.parse("--timeout", "500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("--timeout", "10s")).isEqualTo(Duration.ofSeconds(10));
        assertThat(Durations.parse("--timeout", "2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(Durations.parse("--timeout", "1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Durations.parse("--timeout", "0010s")).isEqualTo(Duration.ofSeconds(10));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "10", "s", "1.5s", "-1s", "10 s", "10S", "1d", "ms10", "1h30m", "PT10S"})
    void rejectsMalformedDurations(String text) {
        assertThatThrownBy(() -> Durations.parse("--timeout", text))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("--timeout")
                .hasMessageContaining("500ms, 10s, 2m or 1h");
    }

    @Test
    void rejectsZero() {
        assertThatThrownBy(() -> Durations.parse("--idle-timeout", "0s"))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("positive");
    }

    @Test
    void rejectsDurationsTooLongForTheSdk() {
        assertThatThrownBy(() -> Durations.parse("--timeout", "99999999999999999999h"))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("too long");
        assertThatThrownBy(() -> Durations.parse("--timeout", "9999999999h"))
                .isInstanceOf(UsageException.class)
                .hasMessageContaining("too long");
    }
}
