package dev.sandbox.benchmarks;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;

/**
 * {@code kubernetes-session-create}: milliseconds from asking for a new sandbox until a command has run in it. SDK:
 * {@code provider.create(options)} (the pod made, seen running by the provider's watch, the agent's exec connection
 * opened and answering) and then {@code session.run(true)}, blocked on. Baseline: plain fabric8 doing the same work:
 * create a pod of the same spec, wait with {@code waitUntilCondition} until it is {@code Running}, then one fabric8
 * exec of {@code true} (read to the end, exit code).
 *
 * <p>The baseline's pod spec is the SDK's own: before the first round the row makes one session and copies its pod's
 * spec (init container copying the agent from the agent image, the session container running the agent as process
 * 1, resources, security context, the {@code emptyDir}). Only the metadata differs: a new name, this run's label, no
 * owner reference, none of the provider's annotations. Deleting the pods is not timed.
 *
 * <pre>{@code
 * Result r = new KubernetesSessionCreate().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class KubernetesSessionCreate implements Benchmark {

    /** A run of this row with its default settings. */
    public KubernetesSessionCreate() {}

    private static final List<String> TRUE = List.of("true");

    @Override
    public String name() {
        return "kubernetes-session-create";
    }

    @Override
    public String unit() {
        return "ms";
    }

    @Override
    public Target target() {
        return Target.atMost(1.15);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(1, 3), new Reps(3, 25));
        ExecOptions trueCommand = ExecOptions.of(TRUE);
        try (KubeBench kube = KubeBench.open(name(), config);
                KubernetesSandboxProvider provider = kube.provider()) {
            SandboxSession first = provider.create(kube.sessionOptions()).block(KubeBench.TIMEOUT);
            Pod template;
            try {
                template = kube.baselineTemplate(first);
            } finally {
                first.destroy().block(KubeBench.TIMEOUT);
            }
            return Harness.alternate(
                    name(),
                    unit(),
                    target(),
                    reps,
                    config,
                    () -> sdkOnce(kube, provider, trueCommand),
                    () -> baselineOnce(kube, template),
                    Harness.NOTHING);
        }
    }

    private static double sdkOnce(KubeBench kube, KubernetesSandboxProvider provider, ExecOptions trueCommand) {
        long t0 = System.nanoTime();
        SandboxSession session = provider.create(kube.sessionOptions()).block(KubeBench.TIMEOUT);
        try {
            ExecResult r = session.run(trueCommand).block(KubeBench.TIMEOUT);
            long took = System.nanoTime() - t0;
            if (r == null || r.exitCode() != 0) {
                throw new IllegalStateException("SDK: true in a new session exited with " + r);
            }
            return took / 1e6;
        } finally {
            session.destroy().block(KubeBench.TIMEOUT);
        }
    }

    /** What a user writes with fabric8 alone (also the pooled row's baseline: a cold pod). */
    static double baselineOnce(KubeBench kube, Pod template) throws Exception {
        long t0 = System.nanoTime();
        String pod = kube.createRunningPod(template);
        try {
            KubeBench.Exec e = kube.exec(pod, TRUE);
            long took = System.nanoTime() - t0;
            if (e.exitCode() != 0) {
                throw new IllegalStateException("baseline: true in a new pod exited with " + e.exitCode());
            }
            return took / 1e6;
        } finally {
            kube.delete(pod);
        }
    }
}
