package dev.sandbox.benchmarks;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * What one benchmark measured: both sides' figures, and the two report lines.
 *
 * <pre>{@code
 * System.out.println(result.resultLine()); // RESULT local-exec-latency sdk=5.102 baseline=4.981 ratio=1.024 unit=ms
 * System.out.println(result.statsLine());
 * }</pre>
 *
 * @param name the benchmark's name
 * @param unit the unit of both figures
 * @param target the target ratio
 * @param reps the warm-up and measured rounds
 * @param sdk the SDK's figures
 * @param baseline the baseline's figures
 */
public record Result(String name, String unit, Target target, Reps reps, Samples sdk, Samples baseline)
        implements Report {

    /**
     * The ratio of the medians, {@code sdk / baseline}.
     *
     * @return the ratio
     */
    public double ratio() {
        return sdk.median() / baseline.median();
    }

    /**
     * The line {@code RESULT <name> sdk=<median> baseline=<median> ratio=<sdk/baseline> unit=<unit>}.
     *
     * @return the line, without a terminator
     */
    @Override
    public String resultLine() {
        return "RESULT " + name + " sdk=" + number(sdk.median()) + " baseline=" + number(baseline.median()) + " ratio="
                + number(ratio()) + " unit=" + unit;
    }

    /**
     * The line {@code STATS <name> sdk_p95=<p95> baseline_p95=<p95> reps=<rounds> warmup=<rounds> target=<target>
     * met=<yes|no>}; p95 is on the slow side (see {@link Samples#p95()}). The target reads {@code ratio<=1.15} for a
     * bound on the ratio, {@code sdk<=20.0} for a bound on the SDK's median (see {@link Target}).
     *
     * @return the line, without a terminator
     */
    @Override
    public String statsLine() {
        return "STATS " + name + " sdk_p95=" + number(sdk.p95()) + " baseline_p95=" + number(baseline.p95()) + " reps="
                + reps.measured() + " warmup=" + reps.warmup() + " target=" + target + " met="
                + (target.met(sdk.median(), ratio()) ? "yes" : "no");
    }

    /** Plain decimal notation (never an exponent): whole numbers from 1000 up, four significant digits below. */
    static String number(double v) {
        if (Math.abs(v) >= 1000) {
            return BigDecimal.valueOf(v).setScale(0, RoundingMode.HALF_EVEN).toPlainString();
        }
        return new BigDecimal(v)
                .round(new java.math.MathContext(4, RoundingMode.HALF_EVEN))
                .stripTrailingZeros()
                .toPlainString();
    }
}
