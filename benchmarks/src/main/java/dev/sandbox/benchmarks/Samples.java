package dev.sandbox.benchmarks;

import java.util.Arrays;

/**
 * The figures of one side of a benchmark, one per measured round, with the statistics the report prints.
 *
 * <pre>{@code
 * Samples s = new Samples(new double[] {5.1, 5.3, 4.9}, false);
 * double median = s.median(); // 5.1
 * }</pre>
 */
public final class Samples {
    private final double[] sorted;
    private final boolean higherIsBetter;

    /**
     * Wraps the figures of one side.
     *
     * @param values one figure per measured round
     * @param higherIsBetter whether the unit is a rate (the slow tail is then at the low end)
     */
    public Samples(double[] values, boolean higherIsBetter) {
        if (values.length == 0) {
            throw new IllegalArgumentException("no samples");
        }
        this.sorted = values.clone();
        Arrays.sort(sorted);
        this.higherIsBetter = higherIsBetter;
    }

    /**
     * How many rounds were measured.
     *
     * @return the count
     */
    public int count() {
        return sorted.length;
    }

    /**
     * The median figure (the mean of the two middle ones for an even count).
     *
     * @return the median
     */
    public double median() {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /**
     * The 95th percentile on the slow side (nearest rank): for a cost such as milliseconds the value 95% of rounds
     * stayed at or below, for a rate such as lines per second the value 95% of rounds reached at least. Either way
     * it is the 95th percentile of the rounds' durations, expressed in the benchmark's unit.
     *
     * @return the slow-side 95th percentile
     */
    public double p95() {
        int n = sorted.length;
        int rank = (int) Math.ceil(0.95 * n); // 1-based nearest rank
        return higherIsBetter ? sorted[n - rank] : sorted[rank - 1];
    }

    /**
     * The figures in ascending order.
     *
     * @return a copy
     */
    public double[] values() {
        return sorted.clone();
    }
}
