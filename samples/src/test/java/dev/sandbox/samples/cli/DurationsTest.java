package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine.TypeConversionException;

class DurationsTest {
    private final Durations durations = new Durations();

    @Test
    void parsesEachUnit() {
        assertThat(durations.convert("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(durations.convert("10s")).isEqualTo(Duration.ofSeconds(10));
        assertThat(durations.convert("2m")).isEqualTo(Duration.ofMinutes(2));
        assertThat(durations.convert("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(durations.convert("0010s")).isEqualTo(Duration.ofSeconds(10));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "10", "s", "1.5s", "-1s", "10 s", "10S", "1d", "ms10", "1h30m", "PT10S"})
    void rejectsMalformedDurations(String text) {
        assertThatThrownBy(() -> durations.convert(text))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageContaining("'" + text + "'")
                .hasMessageContaining("500ms, 10s, 2m or 1h");
    }

    @Test
    void rejectsZero() {
        assertThatThrownBy(() -> durations.convert("0s"))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageContaining("positive");
    }

    @Test
    void rejectsDurationsTooLongForTheSdk() {
        assertThatThrownBy(() -> durations.convert("99999999999999999999h"))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageContaining("too long");
        assertThatThrownBy(() -> durations.convert("9999999999h"))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageContaining("too long");
    }

    @Test
    void theCliNamesTheOption() {
        for (String option : new String[] {"--timeout", "--idle-timeout", "--lifetime"}) {
            CommandLineTest.Outcome o = CommandLineTest.cli("exec", option, "soon", "--", "true");
            assertThat(o.code()).isEqualTo(2);
            assertThat(o.firstErrorLine())
                    .isEqualTo("sandbox: Invalid value for option '" + option + "': 'soon' is not a duration"
                            + " (use a whole number and a unit: 500ms, 10s, 2m or 1h)");
        }
    }
}
