package dev.sandbox.benchmarks;

/**
 * How many alternating rounds a benchmark runs: a round measures the SDK once and the baseline once.
 *
 * <pre>{@code
 * Reps reps = config.shortMode() ? new Reps(2, 10) : new Reps(100, 500);
 * }</pre>
 *
 * @param warmup rounds run first and thrown away
 * @param measured rounds whose figures are kept
 */
public record Reps(int warmup, int measured) {
    /**
     * Checks the counts.
     *
     * @param warmup zero or more
     * @param measured one or more
     */
    public Reps {
        if (warmup < 0 || measured < 1) {
            throw new IllegalArgumentException(
                    "reps need warmup >= 0 and measured >= 1, got " + warmup + "/" + measured);
        }
    }
}
