package dev.sandbox.benchmarks;

import java.util.Optional;

/**
 * One row of the benchmark table: an SDK figure and a raw baseline figure of the same work, measured in the same
 * process run by the {@link Harness}, and compared as the ratio {@code sdk / baseline}.
 *
 * <p>A benchmark whose provider is not part of this build yet stays in the {@link Benchmarks registry} by name and
 * reports why it cannot run through {@link #unavailable()}.
 *
 * <pre>{@code
 * Benchmark b = Benchmarks.byName("local-exec-latency").orElseThrow();
 * Result r = b.run(RunConfig.of(true, System.err));
 * System.out.println(r.resultLine());
 * }</pre>
 */
public interface Benchmark {

    /**
     * The name the jar is run with, such as {@code local-exec-latency}.
     *
     * @return the name
     */
    String name();

    /**
     * The unit of both figures, such as {@code ms} or {@code lines/s}.
     *
     * @return the unit
     */
    String unit();

    /**
     * The ratio the SDK aims for; it also says which way is better for this unit.
     *
     * @return the target
     */
    Target target();

    /**
     * Why this benchmark cannot run in this build, for example because its provider does not exist yet.
     *
     * @return the reason, or empty when it can run
     */
    default Optional<String> unavailable() {
        return Optional.empty();
    }

    /**
     * Measures both sides, alternating, after a warm-up.
     *
     * @param config short or full mode, and where progress goes
     * @return the report: both sides' samples ({@link Result}), or SDK figures alone
     * @throws Skipped when it finds at run time that it cannot measure here (no Docker daemon, a provider feature
     *     this build lacks)
     * @throws Exception when the work fails or a side produced a wrong result (a wrong line count, a non-zero
     *     exit), which makes the figure meaningless
     */
    Report run(RunConfig config) throws Exception;
}
