package dev.sandbox.benchmarks;

/**
 * Thrown by {@link Benchmark#run} when the benchmark finds at run time that it cannot measure here, such as no
 * Docker daemon answering or a provider feature this build does not have. {@link Main} reports it as {@code RESULT
 * <name> skipped (<reason>)}, prints no {@code STATS} line, and does not count it as a failure.
 *
 * <pre>{@code
 * throw new Skipped("no Docker daemon: unix:///var/run/docker.sock did not answer");
 * }</pre>
 */
public final class Skipped extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * A skip with its reason.
     *
     * @param reason why the benchmark cannot run, printed in parentheses
     */
    public Skipped(String reason) {
        super(reason);
    }

    /**
     * Why the benchmark cannot run.
     *
     * @return the reason
     */
    public String reason() {
        return getMessage();
    }
}
