package dev.sandbox.benchmarks;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import java.util.List;

/**
 * {@code kubernetes-stream-throughput}: lines per second of {@code seq 1 5000000} run in a pod. SDK: {@code
 * session.exec(...)} on a Kubernetes session, consumed by the local row's plain subscriber counting whole {@link
 * ExecEvent.Stdout} lines (the output travels as agent frames on the session's one exec connection). Baseline:
 * fabric8's own exec of the same {@code seq} in the same pod's session container, its stdout read with {@link
 * RawLines} (64 KiB reads, one {@code String} per line), then the exit code. Both sides check they saw exactly five
 * million lines and exit code 0.
 *
 * <pre>{@code
 * Result r = new KubernetesStreamThroughput().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class KubernetesStreamThroughput implements Benchmark {

    /** A run of this row with its default settings. */
    public KubernetesStreamThroughput() {}

    static final long LINES = 5_000_000;
    private static final List<String> SEQ = List.of("seq", "1", Long.toString(LINES));

    @Override
    public String name() {
        return "kubernetes-stream-throughput";
    }

    @Override
    public String unit() {
        return "lines/s";
    }

    @Override
    public Target target() {
        return Target.atLeast(1.0);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(0, 1), new Reps(2, 10));
        ExecOptions seq = ExecOptions.of(SEQ);
        try (KubeBench kube = KubeBench.open(name(), config);
                KubernetesSandboxProvider provider = kube.provider()) {
            SandboxSession session = provider.create(kube.sessionOptions()).block(KubeBench.TIMEOUT);
            try {
                return Harness.alternate(
                        name(),
                        unit(),
                        target(),
                        reps,
                        config,
                        () -> LocalStreamThroughput.streamOnce("SDK", session, seq, LINES),
                        () -> {
                            long t0 = System.nanoTime();
                            RawLines.Count c = kube.exec(session.id(), SEQ, RawLines::count);
                            long took = System.nanoTime() - t0;
                            LocalStreamThroughput.check("baseline", c.lines(), 0, LINES);
                            return c.lines() / (took / 1e9);
                        },
                        Harness.NOTHING);
            } finally {
                session.destroy().block(KubeBench.TIMEOUT);
            }
        }
    }
}
