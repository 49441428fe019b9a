package dev.sandbox.benchmarks;

import java.util.Locale;

/**
 * What a benchmark aims for. Most rows bound the ratio {@code sdk / baseline}: an upper bound ({@link #atMost}) for
 * costs such as milliseconds or threads, where lower is better; a lower bound ({@link #atLeast}) for rates such as
 * lines per second, where higher is better. A row whose goal is an absolute figure (a latency the SDK must reach
 * whatever the baseline does) bounds the SDK's median instead ({@link #sdkAtMost}, {@link #sdkAtLeast}); its report
 * still prints the ratio, for comparison, but {@code met} then judges the SDK's median.
 *
 * <pre>{@code
 * Target t = Target.atMost(1.25);
 * boolean ok = t.met(5.35, 1.07); // true: the ratio 1.07 is within 1.25
 * Target abs = Target.sdkAtMost(20);
 * boolean fast = abs.met(12.0, 0.1); // true: the SDK's median 12 is within 20
 * }</pre>
 *
 * @param bound the bound, on the ratio or on the SDK's median (in the row's unit)
 * @param upper {@code true} for "at most", {@code false} for "at least"
 * @param absolute {@code true} when the bound is on the SDK's median, {@code false} when on the ratio
 */
public record Target(double bound, boolean upper, boolean absolute) {

    /**
     * Checks the bound.
     *
     * @param bound a positive, finite number
     * @param upper whether it is a ceiling
     * @param absolute whether it bounds the SDK's median rather than the ratio
     */
    public Target {
        if (!(bound > 0) || Double.isInfinite(bound)) {
            throw new IllegalArgumentException("a target's bound must be positive and finite, got " + bound);
        }
    }

    /**
     * A ceiling on the ratio: the figure is a cost, lower is better.
     *
     * @param bound the highest acceptable ratio
     * @return the target
     */
    public static Target atMost(double bound) {
        return new Target(bound, true, false);
    }

    /**
     * A floor under the ratio: the figure is a rate, higher is better.
     *
     * @param bound the lowest acceptable ratio
     * @return the target
     */
    public static Target atLeast(double bound) {
        return new Target(bound, false, false);
    }

    /**
     * A ceiling on the SDK's median itself, in the row's unit: the figure is a cost, lower is better, and the
     * baseline does not move the goal.
     *
     * @param bound the highest acceptable SDK median
     * @return the target
     */
    public static Target sdkAtMost(double bound) {
        return new Target(bound, true, true);
    }

    /**
     * A floor under the SDK's median itself, in the row's unit: the figure is a rate, higher is better.
     *
     * @param bound the lowest acceptable SDK median
     * @return the target
     */
    public static Target sdkAtLeast(double bound) {
        return new Target(bound, false, true);
    }

    /**
     * Whether higher figures are better for this benchmark's unit.
     *
     * @return {@code true} for rates
     */
    public boolean higherIsBetter() {
        return !upper;
    }

    /**
     * Whether the measured figures meet the target.
     *
     * @param sdkMedian the SDK's median, judged by an absolute target
     * @param ratio {@code sdk / baseline}, judged by a ratio target
     * @return whether the judged figure is within the bound
     */
    public boolean met(double sdkMedian, double ratio) {
        double judged = absolute ? sdkMedian : ratio;
        return upper ? judged <= bound : judged >= bound;
    }

    /** {@code ratio<=1.25}, {@code ratio>=0.8}, or for an absolute target {@code sdk<=20.0}. */
    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s%s%s", absolute ? "sdk" : "ratio", upper ? "<=" : ">=", bound);
    }
}
