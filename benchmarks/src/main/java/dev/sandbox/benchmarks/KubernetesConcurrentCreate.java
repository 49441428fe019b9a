package dev.sandbox.benchmarks;

import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code kubernetes-concurrent-create}: 100 sessions created at once with one provider ({@code Flux.range(0, 100)
 * .flatMap(i -> provider.create(options), 100)}), each create timed from its subscription until the session is
 * handed out (its pod running and its agent answering on the session's exec connection). Reported: the create
 * times' median and 99th percentile, and the JVM's live threads before and at their peak while the creates run.
 * There is no baseline and no target: the row reports what the SDK costs. Short mode creates 10. The sessions are
 * destroyed after the measurement, untimed.
 *
 * <pre>{@code
 * Report r = new KubernetesConcurrentCreate().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class KubernetesConcurrentCreate implements Benchmark {

    /** A run of this row with its default settings. */
    public KubernetesConcurrentCreate() {}

    /** Sessions created at once in a full run. */
    static final int SESSIONS = 100;

    /** Sessions created at once in short mode. */
    static final int SHORT_SESSIONS = 10;

    @Override
    public String name() {
        return "kubernetes-concurrent-create";
    }

    @Override
    public String unit() {
        return "ms";
    }

    /** None really: the row has no baseline; this bound is never judged (the STATS line says {@code met=n/a}). */
    @Override
    public Target target() {
        return Target.sdkAtMost(Double.MAX_VALUE);
    }

    private record Timed(SandboxSession session, double millis) {}

    @Override
    public ConcurrentCreateReport run(RunConfig config) throws Exception {
        int n = config.shortMode() ? SHORT_SESSIONS : SESSIONS;
        try (KubeBench kube = KubeBench.open(name(), config);
                KubernetesSandboxProvider provider = kube.provider()) {
            SessionOptions options = kube.sessionOptions();
            // one session first, untimed: the provider's clients and event loops exist, as in a service under load
            provider.create(options).flatMap(s -> s.destroy()).block(KubeBench.TIMEOUT);
            Queue<SandboxSession> made = new ConcurrentLinkedQueue<>();
            int before = ManagementFactory.getThreadMXBean().getThreadCount();
            config.log("%s: creating %d sessions at once (%d live threads)", name(), n, before);
            long t0 = System.nanoTime();
            try (ThreadPeak peak = ThreadPeak.start()) {
                List<Timed> timed = Flux.range(0, n)
                        .flatMap(
                                i -> Mono.defer(() -> {
                                    long start = System.nanoTime();
                                    return provider.create(options)
                                            .doOnNext(made::add)
                                            .map(s -> new Timed(s, (System.nanoTime() - start) / 1e6));
                                }),
                                n)
                        .collectList()
                        .block(KubeBench.TIMEOUT.multipliedBy(2));
                int threads = peak.peak();
                config.log(
                        "%s: %d sessions in %.1f s, peak %d live threads",
                        name(), n, (System.nanoTime() - t0) / 1e9, threads);
                if (timed == null || timed.size() != n) {
                    throw new IllegalStateException(
                            "SDK: expected " + n + " sessions, got " + (timed == null ? 0 : timed.size()));
                }
                double[] millis = timed.stream().mapToDouble(Timed::millis).toArray();
                return new ConcurrentCreateReport(name(), n, new Samples(millis, false), before, threads);
            } finally {
                Flux.fromIterable(made)
                        .flatMap(s -> s.destroy().onErrorResume(e -> Mono.empty()), 16)
                        .then()
                        .block(KubeBench.TIMEOUT);
            }
        }
    }
}
