package dev.sandbox.benchmarks;

import java.util.Optional;

/**
 * A row of the benchmark table whose provider is not built yet: it keeps its name, unit and target, and reports
 * {@code RESULT <name> skipped} with the reason. Replace it in {@link Benchmarks} with a real benchmark once the
 * provider exists.
 *
 * <pre>{@code
 * new Pending("docker-exec-latency", "ms", Target.atMost(1.15), "the Docker provider is not built yet");
 * }</pre>
 *
 * @param name the benchmark's name
 * @param unit the unit its figures will have
 * @param target the ratio it will aim for
 * @param reason why it cannot run in this build
 */
public record Pending(String name, String unit, Target target, String reason) implements Benchmark {

    @Override
    public Optional<String> unavailable() {
        return Optional.of(reason);
    }

    @Override
    public Result run(RunConfig config) {
        throw new IllegalStateException(name + " cannot run: " + reason);
    }
}
