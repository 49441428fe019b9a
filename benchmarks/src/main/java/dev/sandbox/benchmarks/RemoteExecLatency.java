package dev.sandbox.benchmarks;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import java.time.Duration;

/**
 * {@code remote-exec-latency}: milliseconds of {@code run} of {@code true} through a sandbox server on loopback
 * (SDK), against the same {@code run} on the local provider directly (baseline).
 *
 * <pre>{@code
 * Result r = new RemoteExecLatency().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class RemoteExecLatency implements Benchmark {

    /** A run of this row with its default settings. */
    public RemoteExecLatency() {}

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Override
    public String name() {
        return "remote-exec-latency";
    }

    @Override
    public String unit() {
        return "ms";
    }

    @Override
    public Target target() {
        return Target.atMost(1.2);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        // 2,000 warm-up rounds: the HTTP client and server code (reactor-netty's codec, Reactor's operators, Jackson)
        // runs interpreted for the first few hundred calls; a service that talks to a sandbox server runs it compiled
        Reps reps = config.reps(new Reps(10, 30), new Reps(2000, 300));
        try (Loopback loopback = Loopback.start()) {
            return Harness.alternate(
                    name(),
                    unit(),
                    target(),
                    reps,
                    config,
                    () -> once("SDK", loopback.remote()),
                    () -> once("baseline", loopback.local()),
                    Harness.NOTHING);
        }
    }

    private static double once(String side, SandboxSession session) {
        long t0 = System.nanoTime();
        ExecResult r = session.run(ExecOptions.of("true")).block(TIMEOUT);
        long took = System.nanoTime() - t0;
        if (r == null || r.exitCode() != 0) {
            throw new IllegalStateException(side + ": true exited with " + r);
        }
        return took / 1e6;
    }
}
