package dev.sandbox.benchmarks;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;

/**
 * How a run is made: short mode (a few repetitions, so CI can check that every benchmark still works) or full
 * mode, where progress messages go, and how many threads the JVM had before any benchmark started.
 *
 * <pre>{@code
 * RunConfig config = RunConfig.of(false, System.err);
 * }</pre>
 *
 * @param shortMode few repetitions: the figures only show that the benchmark works
 * @param progress where progress messages go (never the RESULT lines)
 * @param jvmThreads live threads before any benchmark ran: the JVM's own, the floor both sides share
 */
public record RunConfig(boolean shortMode, PrintStream progress, int jvmThreads) {

    /**
     * A config whose thread floor is the live thread count now; make it before any benchmark runs.
     *
     * @param shortMode whether to run few repetitions
     * @param progress where progress messages go
     * @return the config
     */
    public static RunConfig of(boolean shortMode, PrintStream progress) {
        return new RunConfig(
                shortMode, progress, ManagementFactory.getThreadMXBean().getThreadCount());
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
        progress.printf(java.util.Locale.ROOT, format + "%n", args);
        progress.flush();
    }
}
