package dev.sandbox.benchmarks;

/**
 * What {@code docker-pool-burst} measured: how long the callers of a burst waited for a pooled session, beside how
 * long a cold create takes without a pool. The figures are percentiles of two sets of samples rather than medians of
 * alternating rounds, so the row has its own lines, with no target ({@code target=none met=n/a}).
 *
 * <pre>{@code
 * RESULT docker-pool-burst sdk_p50=4.1 sdk_p99=9020 baseline_p99=612.3 ratio_p99=14.73 acquires=400 unit=ms
 * STATS docker-pool-burst sdk_max=9311 baseline_p50=402.5 cold_creates=100 cold_acquires=368 warm=8 cap=16
 *     alive_max=16 reps=4 warmup=1 target=none met=n/a
 * }</pre>
 *
 * (the STATS line is one line.)
 *
 * @param name the row's name
 * @param warm the pool's warm sessions
 * @param cap the pool's cap on sessions alive
 * @param waitMillis one wait per acquire (from asking until the session was handed out), in milliseconds
 * @param coldMillis one cold create (create, start, first exec) per sample, in milliseconds
 * @param coldAcquires how many of the acquires found no warm session and waited for a create
 * @param aliveMax the most sessions the pool had alive at any hand-out or give-back during the bursts
 * @param reps the warm-up and measured rounds (a round is one burst and a batch of cold creates)
 */
public record PoolBurstReport(
        String name,
        int warm,
        int cap,
        Samples waitMillis,
        Samples coldMillis,
        long coldAcquires,
        int aliveMax,
        Reps reps)
        implements Report {

    /**
     * A percentile by nearest rank.
     *
     * @param samples the figures
     * @param percent 0 to 100
     * @return the figure that many percent of the samples are at or below
     */
    static double percentile(Samples samples, double percent) {
        double[] v = samples.values();
        int rank = Math.max(1, (int) Math.ceil(percent / 100 * v.length));
        return v[rank - 1];
    }

    /**
     * The 99th percentile of the waits over that of the cold creates.
     *
     * @return the ratio
     */
    public double ratioP99() {
        return percentile(waitMillis, 99) / percentile(coldMillis, 99);
    }

    @Override
    public String resultLine() {
        return "RESULT " + name + " sdk_p50=" + Result.number(percentile(waitMillis, 50)) + " sdk_p99="
                + Result.number(percentile(waitMillis, 99)) + " baseline_p99="
                + Result.number(percentile(coldMillis, 99)) + " ratio_p99=" + Result.number(ratioP99())
                + " acquires=" + waitMillis.count() + " unit=ms";
    }

    @Override
    public String statsLine() {
        return "STATS " + name + " sdk_max=" + Result.number(percentile(waitMillis, 100)) + " baseline_p50="
                + Result.number(percentile(coldMillis, 50)) + " cold_creates=" + coldMillis.count()
                + " cold_acquires=" + coldAcquires + " warm=" + warm + " cap=" + cap + " alive_max=" + aliveMax
                + " reps=" + reps.measured() + " warmup=" + reps.warmup() + " target=none met=n/a";
    }
}
