package dev.sandbox.samples.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * The CLI's durations: a whole number and a unit, {@code ms}, {@code s}, {@code m} or {@code h}, such as {@code 500ms},
 * {@code 10s}, {@code 2m} or {@code 1h}; positive, and short enough for the SDK's timers. Registered for every {@link
 * Duration} option; picocli names the option when a value is rejected.
 */
final class Durations implements ITypeConverter<Duration> {
    private static final Pattern FORMAT = Pattern.compile("(\\d+)(ms|s|m|h)");

    @Override
    public Duration convert(String text) {
        Matcher m = FORMAT.matcher(text);
        if (!m.matches()) {
            throw new TypeConversionException(
                    "'" + text + "' is not a duration (use a whole number and a unit: 500ms, 10s, 2m or 1h)");
        }
        Duration d;
        try {
            long n = Long.parseLong(m.group(1));
            d = switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                default -> Duration.ofHours(n);
            };
            d.toNanos(); // the SDK's timers work in nanoseconds
        } catch (NumberFormatException | ArithmeticException e) {
            throw new TypeConversionException("duration '" + text + "' is too long");
        }
        if (d.isZero()) {
            throw new TypeConversionException("duration must be positive, got '" + text + "'");
        }
        return d;
    }

    /**
     * Writes a duration the way the CLI reads them: {@code 5s}, {@code 2m}, {@code 1h}, or {@code 1500ms}.
     *
     * @param d a positive duration
     * @return its text
     */
    static String format(Duration d) {
        long ms = d.toMillis();
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }
}
