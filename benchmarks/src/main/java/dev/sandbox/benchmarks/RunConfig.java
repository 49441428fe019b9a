package dev.sandbox.benchmarks;

import java.io.PrintStream;
import java.util.Locale;

/**
 * How a run is made: short mode (a few repetitions, so CI can check that every benchmark still works) or full
 * mode, and where progress messages go.
 *
 * <pre>{@code
 * RunConfig config = RunConfig.of(false, System.err);
 * }</pre>
 *
 * @param shortMode few repetitions: the figures only show that the benchmark works
 * @param progress where progress messages go (never the RESULT lines)
 */
public record RunConfig(boolean shortMode, PrintStream progress) {

    /**
     * A config.
     *
     * @param shortMode whether to run few repetitions
     * @param progress where progress messages go
     * @return the config
     */
    public static RunConfig of(boolean shortMode, PrintStream progress) {
        return new RunConfig(shortMode, progress);
    }

    /**
     * Picks the repetitions for the mode.
     *
     * @param shortReps repetitions in short mode
     * @param fullReps repetitions in full mode
     * @return the one for this run
     */
    public Reps reps(Reps shortReps, Reps fullReps) {
        return shortMode ? shortReps : fullReps;
    }

    /**
     * Prints a progress message.
     *
     * @param format a {@link String#format} pattern
     * @param args its arguments
     */
    public void log(String format, Object... args) {
        progress.printf(Locale.ROOT, format + "%n", args);
        progress.flush();
    }
}
