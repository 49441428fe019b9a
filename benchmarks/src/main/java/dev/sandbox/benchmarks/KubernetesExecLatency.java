package dev.sandbox.benchmarks;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import java.util.List;

/**
 * {@code kubernetes-exec-latency}: milliseconds from asking to run {@code echo hi} in a running pod until its output
 * and exit code are in hand. SDK: {@code session.run(ExecOptions.of("echo", "hi"))} on one Kubernetes session,
 * blocked on (one request on the session's open agent channel). Baseline: fabric8's own exec of {@code echo hi} in
 * the same pod's session container: open the exec (a WebSocket upgrade through the API server to the kubelet), read
 * stdout to its end, take the exit code. Both sides check the output is {@code hi} and the exit code 0.
 *
 * <pre>{@code
 * Result r = new KubernetesExecLatency().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class KubernetesExecLatency implements Benchmark {

    /** A run of this row with its default settings. */
    public KubernetesExecLatency() {}

    private static final List<String> ECHO = List.of("echo", "hi");

    @Override
    public String name() {
        return "kubernetes-exec-latency";
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
        Reps reps = config.reps(new Reps(5, 15), new Reps(30, 200));
        ExecOptions echo = ExecOptions.of(ECHO);
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
                        () -> {
                            long t0 = System.nanoTime();
                            ExecResult r = session.run(echo).block(KubeBench.TIMEOUT);
                            long took = System.nanoTime() - t0;
                            if (r == null || r.exitCode() != 0 || !r.stdout().equals("hi\n")) {
                                throw new IllegalStateException("SDK: echo hi gave " + r);
                            }
                            return took / 1e6;
                        },
                        () -> {
                            long t0 = System.nanoTime();
                            KubeBench.Exec e = kube.exec(session.id(), ECHO);
                            long took = System.nanoTime() - t0;
                            if (e.exitCode() != 0 || !e.stdout().equals("hi\n")) {
                                throw new IllegalStateException("baseline: echo hi gave " + e);
                            }
                            return took / 1e6;
                        },
                        Harness.NOTHING);
            } finally {
                session.destroy().block(KubeBench.TIMEOUT);
            }
        }
    }
}
