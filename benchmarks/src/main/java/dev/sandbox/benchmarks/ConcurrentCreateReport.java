package dev.sandbox.benchmarks;

/**
 * What {@code kubernetes-concurrent-create} measured: SDK figures only, with no baseline (a user without the SDK has
 * no equivalent of "a session" to create 100 of), so no ratio and no target.
 *
 * <pre>{@code
 * RESULT kubernetes-concurrent-create sdk_p50=5120 sdk_p99=9870 threads_peak=61 threads_before=28 sessions=100 unit=ms baseline=none
 * STATS kubernetes-concurrent-create sdk_max=10020 reps=1 warmup=0 target=none met=n/a
 * }</pre>
 *
 * @param name the row's name
 * @param sessions how many sessions were created at once
 * @param createMillis one create time per session, in milliseconds
 * @param threadsBefore live JVM threads before the creates started
 * @param threadsPeak the most live JVM threads seen while they ran
 */
public record ConcurrentCreateReport(
        String name, int sessions, Samples createMillis, int threadsBefore, int threadsPeak) implements Report {

    /**
     * The 99th percentile of the create times (nearest rank).
     *
     * @return milliseconds
     */
    public double p99() {
        double[] v = createMillis.values();
        int rank = (int) Math.ceil(0.99 * v.length);
        return v[rank - 1];
    }

    @Override
    public String resultLine() {
        return "RESULT " + name + " sdk_p50=" + Result.number(createMillis.median()) + " sdk_p99="
                + Result.number(p99()) + " threads_peak=" + threadsPeak + " threads_before=" + threadsBefore
                + " sessions=" + sessions + " unit=ms baseline=none";
    }

    @Override
    public String statsLine() {
        double[] v = createMillis.values();
        return "STATS " + name + " sdk_min=" + Result.number(v[0]) + " sdk_max=" + Result.number(v[v.length - 1])
                + " reps=1 warmup=0 target=none met=n/a";
    }
}
