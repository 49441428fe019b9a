package dev.sandbox.benchmarks;

/**
 * The two lines a benchmark prints: {@code RESULT} and {@code STATS}. A {@link Result} is the usual one (the SDK
 * beside a baseline); {@link ConcurrentCreateReport} reports SDK figures without a baseline.
 *
 * <pre>{@code
 * Report r = benchmark.run(config);
 * System.out.println(r.resultLine());
 * System.out.println(r.statsLine());
 * }</pre>
 */
public interface Report {
    /**
     * The {@code RESULT} line, without a terminator.
     *
     * @return the line
     */
    String resultLine();

    /**
     * The {@code STATS} line, without a terminator.
     *
     * @return the line
     */
    String statsLine();
}
