package dev.sandbox.benchmarks;

/**
 * Runs the SDK side and the baseline side of a benchmark alternately in this process: round {@code i} measures
 * the SDK first when {@code i} is even and the baseline first when it is odd, so drift (a CPU warming up, another
 * build on the machine, heap growth) falls on both sides alike. Warm-up rounds run the same way and are dropped.
 *
 * <p>There is deliberately no {@code System.gc()} between trials: after a full collection G1 shrinks the heap, and
 * the next trial pays page faults to grow it again, which charges the side that allocates more (the SDK, with an
 * event object per line) for memory a running service would already have. Young collections during a trial are
 * part of its cost.
 *
 * <pre>{@code
 * Result r = Harness.alternate("local-exec-latency", "ms", Target.atMost(1.25), new Reps(100, 500), config,
 *         () -> timeSdkOnce(), () -> timeBaselineOnce(), Harness.NOTHING);
 * }</pre>
 */
public final class Harness {

    /** Something run between trials, outside the timed part. */
    @FunctionalInterface
    public interface Settle {
        /** Runs it. */
        void run();
    }

    /** One repetition of one side: does the work once and returns its figure in the benchmark's unit. */
    @FunctionalInterface
    public interface Trial {
        /**
         * Does the work once.
         *
         * @return the figure, such as milliseconds taken or lines per second
         * @throws Exception when the work fails or its result is wrong
         */
        double measure() throws Exception;
    }

    /** Nothing between trials: for short trials where a collection would cost more than the trial. */
    public static final Settle NOTHING = () -> {};

    private Harness() {}

    /**
     * Measures both sides alternately.
     *
     * @param name the benchmark's name, for progress messages
     * @param unit the unit of both figures
     * @param target the target ratio
     * @param reps warm-up and measured rounds
     * @param config where progress goes
     * @param sdk one SDK repetition
     * @param baseline one baseline repetition
     * @param settle run before every trial, outside the timing
     * @return both sides' figures
     * @throws Exception the first failure of either side
     */
    public static Result alternate(
            String name,
            String unit,
            Target target,
            Reps reps,
            RunConfig config,
            Trial sdk,
            Trial baseline,
            Settle settle)
            throws Exception {
        config.log(
                "%s: %d warm-up rounds, then %d measured rounds (SDK and baseline alternating)",
                name, reps.warmup(), reps.measured());
        long started = System.nanoTime();
        for (int i = 0; i < reps.warmup(); i++) {
            round(i, sdk, baseline, settle, null, null);
        }
        if (reps.warmup() > 0) {
            config.log("%s: warm-up done after %.1f s", name, (System.nanoTime() - started) / 1e9);
        }
        double[] sdkValues = new double[reps.measured()];
        double[] baseValues = new double[reps.measured()];
        for (int i = 0; i < reps.measured(); i++) {
            long roundStart = System.nanoTime();
            round(i, sdk, baseline, settle, sdkValues, baseValues);
            double seconds = (System.nanoTime() - roundStart) / 1e9;
            if (seconds >= 1) { // long rounds: show each, so a slow side is visible while it runs
                config.log(
                        "%s: round %d/%d in %.1f s: sdk=%s baseline=%s %s",
                        name,
                        i + 1,
                        reps.measured(),
                        seconds,
                        Result.number(sdkValues[i]),
                        Result.number(baseValues[i]),
                        unit);
            }
        }
        config.log("%s: done in %.1f s", name, (System.nanoTime() - started) / 1e9);
        boolean higher = target.higherIsBetter();
        return new Result(name, unit, target, reps, new Samples(sdkValues, higher), new Samples(baseValues, higher));
    }

    private static void round(int i, Trial sdk, Trial baseline, Settle settle, double[] sdkOut, double[] baseOut)
            throws Exception {
        if (i % 2 == 0) {
            record(sdk, settle, sdkOut, i);
            record(baseline, settle, baseOut, i);
        } else {
            record(baseline, settle, baseOut, i);
            record(sdk, settle, sdkOut, i);
        }
    }

    private static void record(Trial trial, Settle settle, double[] out, int i) throws Exception {
        settle.run();
        double v = trial.measure();
        if (!(v > 0) || Double.isInfinite(v)) {
            throw new IllegalStateException("a trial measured " + v + ", which cannot be a figure");
        }
        if (out != null) {
            out[i] = v;
        }
    }
}
