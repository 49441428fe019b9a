package dev.sandbox.samples.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the CLI's durations: a whole number and a unit, {@code ms}, {@code s}, {@code m} or {@code h}. */
final class Durations {
    private static final Pattern FORMAT = Pattern.compile("(\\d+)(ms|s|m|h)");

    private Durations() {}

    /**
     * Parses a positive duration such as {@code 500ms}, {@code 10s}, {@code 2m} or {@code 1h}.
     *
     * @param option the option the text was given to, for the message
     * @param text the text
     * @return the duration
     * @throws UsageException when the text is not a positive duration in that form
     */
    static Duration parse(String option, String text) throws UsageException {
        Matcher m = FORMAT.matcher(text);
        if (!m.matches()) {
            throw new UsageException("invalid duration for " + option + ": '" + text
                    + "' (use a whole number and a unit: 500ms, 10s, 2m or 1h)");
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
            throw new UsageException("duration for " + option + " is too long: '" + text + "'");
        }
        if (d.isZero()) {
            throw new UsageException("duration for " + option + " must be positive, got '" + text + "'");
        }
        return d;
    }
}
