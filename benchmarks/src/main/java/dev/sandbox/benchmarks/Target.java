package dev.sandbox.benchmarks;

import java.util.Locale;

/**
 * The ratio {@code sdk / baseline} a benchmark aims for. An upper bound ({@link #atMost}) is for costs such as
 * milliseconds or threads, where lower is better; a lower bound ({@link #atLeast}) is for rates such as lines per
 * second, where higher is better.
 *
 * <pre>{@code
 * Target t = Target.atMost(1.25);
 * boolean ok = t.met(1.07); // true
 * }</pre>
 *
 * @param bound the ratio bound
 * @param upper {@code true} for "at most", {@code false} for "at least"
 */
public record Target(double bound, boolean upper) {

    /**
     * A ceiling on the ratio: the figure is a cost, lower is better.
     *
     * @param bound the highest acceptable ratio
     * @return the target
     */
    public static Target atMost(double bound) {
        return new Target(bound, true);
    }

    /**
     * A floor under the ratio: the figure is a rate, higher is better.
     *
     * @param bound the lowest acceptable ratio
     * @return the target
     */
    public static Target atLeast(double bound) {
        return new Target(bound, false);
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
     * Whether a measured ratio meets the target.
     *
     * @param ratio {@code sdk / baseline}
     * @return whether it is within the bound
     */
    public boolean met(double ratio) {
        return upper ? ratio <= bound : ratio >= bound;
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "ratio%s%s", upper ? "<=" : ">=", bound);
    }
}
