package dev.sandbox.benchmarks;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;

/**
 * {@code remote-stream-throughput}: lines per second of {@code seq 1 10000000} through {@code exec} over a sandbox
 * server on loopback (SDK), against the same {@code exec} on the local provider directly (baseline). Both count every
 * whole line ({@link ExecEvent.Stdout} events not flagged partial) and check the total and the exit code.
 *
 * <pre>{@code
 * Result r = new RemoteStreamThroughput().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class RemoteStreamThroughput implements Benchmark {

    /** A run of this row with its default settings. */
    public RemoteStreamThroughput() {}

    private static final ExecOptions SEQ = ExecOptions.of("seq", "1", Long.toString(LocalStreamThroughput.LINES));

    @Override
    public String name() {
        return "remote-stream-throughput";
    }

    @Override
    public String unit() {
        return "lines/s";
    }

    @Override
    public Target target() {
        return Target.atLeast(0.8);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(0, 1), new Reps(2, 8));
        try (Loopback loopback = Loopback.start()) {
            return Harness.alternate(
                    name(),
                    unit(),
                    target(),
                    reps,
                    config,
                    () -> LocalStreamThroughput.streamOnce("SDK", loopback.remote(), SEQ, LocalStreamThroughput.LINES),
                    () -> LocalStreamThroughput.streamOnce(
                            "baseline", loopback.local(), SEQ, LocalStreamThroughput.LINES),
                    Harness.NOTHING);
        }
    }
}
