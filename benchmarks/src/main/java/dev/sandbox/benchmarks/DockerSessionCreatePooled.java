package dev.sandbox.benchmarks;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.SandboxPool;
import java.time.Duration;
import java.util.List;

/**
 * {@code docker-session-create-pooled}: milliseconds from asking a warm {@link SandboxPool} for a sandbox, customised
 * with one environment variable and one label, until a command has run in it. SDK: {@code pool.acquire(claim)} and then {@code
 * session.run(true)}, both blocked on, with at least one warm session in the pool when the trial starts (the pool
 * refills while the baseline runs). Baseline: what the caller would pay without a pool, plain docker-java's cold
 * create and start of a container of the same image and settings and the same first exec of {@code true}, as in
 * {@code docker-session-create}. Giving the session back (destroyed by the pool) is not timed.
 *
 * <pre>{@code
 * Result r = new DockerSessionCreatePooled().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerSessionCreatePooled implements Benchmark {
    private static final List<String> TRUE = List.of("true");

    /** A run of this row with its default settings. */
    public DockerSessionCreatePooled() {}

    @Override
    public String name() {
        return "docker-session-create-pooled";
    }

    @Override
    public String unit() {
        return "ms";
    }

    @Override
    public Target target() {
        return Target.atMost(0.10);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(1, 3), new Reps(3, 25));
        ExecOptions trueCommand = ExecOptions.of(TRUE);
        Claim claim = Claim.defaults().withEnv("TENANT", "bench").withLabel("tenant", "bench");
        try (DockerBench docker = DockerBench.open(name(), config);
                DockerSandboxProvider provider = docker.provider();
                SandboxPool pool = SandboxPool.builder(provider)
                        .template(docker.sessionOptions())
                        .warm(2)
                        .build()) {
            return Harness.alternate(
                    name(),
                    unit(),
                    target(),
                    reps,
                    config,
                    () -> sdkOnce(pool, claim, trueCommand),
                    () -> DockerSessionCreate.baselineOnce(docker),
                    Harness.NOTHING);
        }
    }

    private static double sdkOnce(SandboxPool pool, Claim claim, ExecOptions trueCommand) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (pool.stats().warm() == 0) { // a warm pool is what this row measures; waiting for it is not timed
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the pool did not refill within a minute: " + pool.stats());
            }
            Thread.sleep(5);
        }
        long t0 = System.nanoTime();
        SandboxSession session = pool.acquire(claim).block(DockerBench.TIMEOUT);
        try {
            ExecResult r = session.run(trueCommand).block(DockerBench.TIMEOUT);
            long took = System.nanoTime() - t0;
            if (r == null || r.exitCode() != 0) {
                throw new IllegalStateException("SDK: true in a pooled session exited with " + r);
            }
            return took / 1e6;
        } finally {
            session.destroy().block(DockerBench.TIMEOUT);
        }
    }
}
