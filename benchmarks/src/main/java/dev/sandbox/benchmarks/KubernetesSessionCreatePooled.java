package dev.sandbox.benchmarks;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.SandboxPool;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.List;

/**
 * {@code kubernetes-session-create-pooled}: milliseconds from asking a warm {@link SandboxPool} over the Kubernetes
 * provider for a sandbox, customised with one environment variable and one label, until a command has run in it. SDK: {@code
 * pool.acquire(claim)} and then {@code session.run(true)}, both blocked on, with at least one warm session in the
 * pool when the trial starts (the pool refills while the baseline runs; waiting for a refill is not timed). Baseline:
 * what the caller pays without a pool, the cold pod of {@code kubernetes-session-create}: plain fabric8 creates a pod
 * of the same spec, waits until it runs, and execs {@code true}. Giving the session back (destroyed by the pool) is
 * not timed.
 *
 * <pre>{@code
 * Result r = new KubernetesSessionCreatePooled().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class KubernetesSessionCreatePooled implements Benchmark {
    private static final List<String> TRUE = List.of("true");

    /** A run of this row with its default settings. */
    public KubernetesSessionCreatePooled() {}

    @Override
    public String name() {
        return "kubernetes-session-create-pooled";
    }

    @Override
    public String unit() {
        return "ms";
    }

    @Override
    public Target target() {
        return Target.atMost(0.05);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(1, 3), new Reps(3, 25));
        ExecOptions trueCommand = ExecOptions.of(TRUE);
        Claim claim = Claim.defaults().withEnv("TENANT", "bench").withLabel("tenant", "bench");
        try (KubeBench kube = KubeBench.open(name(), config);
                KubernetesSandboxProvider provider = kube.provider()) {
            // the baseline's pod spec is a session's own, as in kubernetes-session-create
            SandboxSession first = provider.create(kube.sessionOptions()).block(KubeBench.TIMEOUT);
            Pod template;
            try {
                template = kube.baselineTemplate(first);
            } finally {
                first.destroy().block(KubeBench.TIMEOUT);
            }
            try (SandboxPool pool = SandboxPool.builder(provider)
                    .template(kube.sessionOptions())
                    .warm(2)
                    .acquireTimeout(KubeBench.TIMEOUT)
                    .build()) {
                return Harness.alternate(
                        name(),
                        unit(),
                        target(),
                        reps,
                        config,
                        () -> sdkOnce(pool, claim, trueCommand),
                        () -> KubernetesSessionCreate.baselineOnce(kube, template),
                        Harness.NOTHING);
            }
        }
    }

    private static double sdkOnce(SandboxPool pool, Claim claim, ExecOptions trueCommand) throws InterruptedException {
        long deadline = System.nanoTime() + KubeBench.TIMEOUT.toNanos();
        while (pool.stats().warm() == 0) { // a warm pool is what this row measures; waiting for it is not timed
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(
                        "the pool did not refill within " + KubeBench.TIMEOUT + ": " + pool.stats());
            }
            Thread.sleep(Duration.ofMillis(5));
        }
        long t0 = System.nanoTime();
        SandboxSession session = pool.acquire(claim).block(KubeBench.TIMEOUT);
        try {
            ExecResult r = session.run(trueCommand).block(KubeBench.TIMEOUT);
            long took = System.nanoTime() - t0;
            if (r == null || r.exitCode() != 0) {
                throw new IllegalStateException("SDK: true in a pooled session exited with " + r);
            }
            return took / 1e6;
        } finally {
            session.destroy().block(KubeBench.TIMEOUT);
        }
    }
}
