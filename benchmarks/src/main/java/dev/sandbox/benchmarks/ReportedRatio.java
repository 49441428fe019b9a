package dev.sandbox.benchmarks;

/**
 * A row that compares the SDK with a reference it is not asked to reach (a ceiling such as host loopback): the usual
 * {@code RESULT} line, and a {@code STATS} line whose target reads {@code none} and {@code met=n/a}.
 *
 * <pre>{@code
 * RESULT docker-tunnel-vs-loopback sdk=410 baseline=3900 ratio=0.1051 unit=MiB/s
 * STATS docker-tunnel-vs-loopback sdk_p95=380 baseline_p95=3500 reps=9 warmup=2 target=none met=n/a
 * }</pre>
 *
 * @param result both sides' samples
 */
public record ReportedRatio(Result result) implements Report {

    @Override
    public String resultLine() {
        return result.resultLine();
    }

    @Override
    public String statsLine() {
        return "STATS " + result.name() + " sdk_p95="
                + Result.number(result.sdk().p95()) + " baseline_p95="
                + Result.number(result.baseline().p95()) + " reps="
                + result.reps().measured() + " warmup="
                + result.reps().warmup() + " target=none met=n/a";
    }
}
