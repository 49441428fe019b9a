package dev.sandbox.benchmarks;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import java.time.Duration;
import reactor.core.publisher.Flux;

/**
 * {@code remote-exec-throughput}: commands per second with {@value #IN_FLIGHT} {@code echo hi} in flight at once.
 * SDK: {@code Flux.range(0, count).flatMap(i -> session.run(echo), 16)} on a session of a sandbox server on loopback
 * (the remote provider). Baseline: the same on a session of the local provider directly, in the same JVM. A fixed count
 * of commands (50 in short mode, 1,000 in full) bounds each trial; the figure is the count divided by the trial's wall
 * time. Both sides check that every command printed exactly {@code hi} and exited with 0.
 *
 * <pre>{@code
 * Result r = new RemoteExecThroughput().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class RemoteExecThroughput implements Benchmark {

    /** How many commands each side keeps in flight. */
    static final int IN_FLIGHT = 16;

    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    /** A run of this row with its default settings. */
    public RemoteExecThroughput() {}

    @Override
    public String name() {
        return "remote-exec-throughput";
    }

    @Override
    public String unit() {
        return "execs/s";
    }

    @Override
    public Target target() {
        return Target.atLeast(0.8);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(1, 2), new Reps(2, 5));
        int count = config.shortMode() ? 50 : 1000;
        ExecOptions echo = ExecOptions.of("echo", "hi");
        try (Loopback loopback = Loopback.start()) {
            return Harness.alternate(
                    name(),
                    unit(),
                    target(),
                    reps,
                    config,
                    () -> once("SDK", loopback.remote(), echo, count),
                    () -> once("baseline", loopback.local(), echo, count),
                    Harness.NOTHING);
        }
    }

    private static double once(String side, SandboxSession session, ExecOptions echo, int count) {
        long t0 = System.nanoTime();
        Long done = Flux.range(0, count)
                .flatMap(i -> session.run(echo), IN_FLIGHT)
                .doOnNext(r -> check(side, r))
                .count()
                .block(TIMEOUT);
        long took = System.nanoTime() - t0;
        if (done == null || done != count) {
            throw new IllegalStateException(side + ": " + done + " of " + count + " commands finished");
        }
        return count / (took / 1e9);
    }

    private static void check(String side, ExecResult r) {
        if (r.exitCode() != 0 || !r.stdout().equals("hi\n")) {
            throw new IllegalStateException(side + ": echo hi gave " + r);
        }
    }
}
