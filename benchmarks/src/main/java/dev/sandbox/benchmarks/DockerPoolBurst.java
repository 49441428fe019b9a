package dev.sandbox.benchmarks;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.PoolStats;
import dev.sandbox.pool.SandboxPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code docker-pool-burst}: a burst of {@value #ACQUIRES} acquires at once on a Docker {@link SandboxPool} of
 * {@value #WARM} warm sessions capped at {@value #CAP} sessions alive, each caller running one command ({@code true})
 * in its session and giving it back. Each caller's wait is timed from asking ({@code pool.acquire(claim)}
 * subscribed) until the session is handed out; the first {@value #WARM} find a warm session, the others wait in the
 * pool's queue for creates, which the cap, the pool's default creates in flight (4) and refill rate (10 a second)
 * pace. Beside the waits: the cold create of {@code docker-session-create}'s baseline (docker-java's create + start
 * + first exec of {@code true}), one at a time, in the same run. Reported: the waits' median and 99th percentile,
 * the cold creates' 99th percentile, and the ratio of the two 99th percentiles; no target.
 *
 * <p>A round is one burst and a batch of {@value #COLD_PER_ROUND} cold creates, the burst first in even rounds and
 * the batch first in odd ones, as {@link Harness} alternates. Before each burst the pool is back at rest ({@value
 * #WARM} warm, none in use, being created or destroyed), untimed. Short mode runs one round of a burst of {@value
 * #SHORT_ACQUIRES} and {@value #SHORT_COLD} cold creates.
 *
 * <pre>{@code
 * PoolBurstReport r = new DockerPoolBurst().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerPoolBurst implements Benchmark {
    /** Acquires at once in a full run's burst. */
    static final int ACQUIRES = 100;

    /** Acquires at once in short mode. */
    static final int SHORT_ACQUIRES = 32;

    /** The pool's warm sessions. */
    static final int WARM = 8;

    /** The pool's cap on sessions alive. */
    static final int CAP = 16;

    /** Cold creates per round in a full run. */
    static final int COLD_PER_ROUND = 25;

    /** Cold creates in short mode. */
    static final int SHORT_COLD = 3;

    private static final ExecOptions TRUE = ExecOptions.of(List.of("true"));

    /** A run of this row with its default settings. */
    public DockerPoolBurst() {}

    @Override
    public String name() {
        return "docker-pool-burst";
    }

    @Override
    public String unit() {
        return "ms";
    }

    /** None really: the row reports percentiles; this bound is never judged (the STATS line says {@code met=n/a}). */
    @Override
    public Target target() {
        return Target.sdkAtMost(Double.MAX_VALUE);
    }

    @Override
    public PoolBurstReport run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(0, 1), new Reps(1, 4));
        int acquires = config.shortMode() ? SHORT_ACQUIRES : ACQUIRES;
        int coldPerRound = config.shortMode() ? SHORT_COLD : COLD_PER_ROUND;
        try (DockerBench docker = DockerBench.open(name(), config);
                DockerSandboxProvider provider = docker.provider();
                SandboxPool pool = SandboxPool.builder(provider)
                        .template(docker.sessionOptions())
                        .warm(WARM)
                        .maxSessions(CAP)
                        // long enough that a slow machine makes callers wait, not fail: the wait is the figure
                        .acquireTimeout(DockerBench.TIMEOUT)
                        .build()) {
            config.log(
                    "%s: %d warm-up rounds, then %d measured rounds (a burst of %d acquires and %d cold creates)",
                    name(), reps.warmup(), reps.measured(), acquires, coldPerRound);
            List<Double> waits = new ArrayList<>();
            List<Double> colds = new ArrayList<>();
            AtomicInteger aliveMax = new AtomicInteger();
            long coldAcquires = 0;
            for (int i = 0; i < reps.warmup() + reps.measured(); i++) {
                boolean measured = i >= reps.warmup();
                long roundStart = System.nanoTime();
                double[] burst = null;
                double[] cold = null;
                long coldInBurst = 0;
                for (int side = 0; side < 2; side++) {
                    if ((side == 0) == (i % 2 == 0)) {
                        awaitRest(pool);
                        long before = pool.stats().coldAcquires();
                        burst = burst(pool, acquires, aliveMax);
                        coldInBurst = pool.stats().coldAcquires() - before;
                    } else {
                        awaitRest(pool); // the refill after a burst does not run beside the cold creates
                        cold = new double[coldPerRound];
                        for (int c = 0; c < coldPerRound; c++) {
                            cold[c] = DockerSessionCreate.baselineOnce(docker);
                        }
                    }
                }
                config.log(
                        "%s: %s round %d/%d in %.1f s: wait p50 %s p99 %s, cold p99 %s ms (%d cold acquires)",
                        name(),
                        measured ? "measured" : "warm-up",
                        measured ? i - reps.warmup() + 1 : i + 1,
                        measured ? reps.measured() : reps.warmup(),
                        (System.nanoTime() - roundStart) / 1e9,
                        Result.number(PoolBurstReport.percentile(new Samples(burst, false), 50)),
                        Result.number(PoolBurstReport.percentile(new Samples(burst, false), 99)),
                        Result.number(PoolBurstReport.percentile(new Samples(cold, false), 99)),
                        coldInBurst);
                if (measured) {
                    for (double w : burst) {
                        waits.add(w);
                    }
                    for (double c : cold) {
                        colds.add(c);
                    }
                    coldAcquires += coldInBurst;
                }
            }
            return new PoolBurstReport(
                    name(),
                    WARM,
                    CAP,
                    new Samples(waits.stream().mapToDouble(Double::doubleValue).toArray(), false),
                    new Samples(colds.stream().mapToDouble(Double::doubleValue).toArray(), false),
                    coldAcquires,
                    aliveMax.get(),
                    reps);
        }
    }

    /** One burst: every acquire at once; returns each caller's wait in milliseconds. */
    private static double[] burst(SandboxPool pool, int acquires, AtomicInteger aliveMax) {
        AtomicBoolean running = new AtomicBoolean(true);
        // the cap is the pool's promise: watch the sessions alive while the burst runs
        Thread watcher = Thread.ofPlatform()
                .daemon()
                .name("sandbox-bench-pool-watch")
                .start(() -> {
                    while (running.get()) {
                        aliveMax.accumulateAndGet(pool.stats().alive(), Math::max);
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                });
        try {
            List<Double> waits = Flux.range(0, acquires)
                    .flatMap(
                            i -> Mono.defer(() -> {
                                long asked = System.nanoTime();
                                return pool.acquire(Claim.defaults().withEnv("CALLER", Integer.toString(i)))
                                        .flatMap(session -> {
                                            double waited = (System.nanoTime() - asked) / 1e6;
                                            return session.run(TRUE)
                                                    .flatMap(r -> checked(r, i))
                                                    .then(session.destroy())
                                                    .onErrorResume(e -> session.destroy()
                                                            .onErrorResume(x -> Mono.empty())
                                                            .then(Mono.error(e)))
                                                    .thenReturn(waited);
                                        });
                            }),
                            acquires)
                    .collectList()
                    .block(DockerBench.TIMEOUT.multipliedBy(2));
            if (waits == null || waits.size() != acquires) {
                throw new IllegalStateException(
                        "SDK: expected " + acquires + " acquires, got " + (waits == null ? 0 : waits.size()));
            }
            return waits.stream().mapToDouble(Double::doubleValue).toArray();
        } finally {
            running.set(false);
            watcher.interrupt();
        }
    }

    private static Mono<ExecResult> checked(ExecResult r, int caller) {
        if (r.exitCode() != 0) {
            return Mono.error(
                    new IllegalStateException("SDK: true in the session of caller " + caller + " exited with " + r));
        }
        return Mono.just(r);
    }

    /** Waits, untimed, until the pool is full and quiet: all warm, none in use, being created or destroyed. */
    private static void awaitRest(SandboxPool pool) throws InterruptedException {
        long deadline = System.nanoTime() + DockerBench.TIMEOUT.toNanos();
        while (true) {
            PoolStats s = pool.stats();
            if (s.warm() == WARM && s.inUse() == 0 && s.creating() == 0 && s.destroying() == 0) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(
                        "the pool did not come to rest within " + DockerBench.TIMEOUT + ": " + s);
            }
            Thread.sleep(Duration.ofMillis(10));
        }
    }
}
