package dev.sandbox.benchmarks;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.docker.DockerSandboxProvider;
import java.util.List;

/**
 * {@code docker-session-create}: milliseconds from asking for a new sandbox until a command has run in it, that is
 * until the sandbox is known to be usable. SDK: {@code provider.create(options)} and then {@code session.run(true)}
 * on the new session, both blocked on. Baseline: plain docker-java doing the same work: create and start a container
 * of the same image and settings ({@link DockerBench#startContainer()}), then the same first exec of {@code true}
 * (create, start, await, inspect the exit code).
 *
 * <p>The first exec is part of the figure on both sides because a started container is not yet proof that commands
 * run in it, and because it is what a caller waits for in practice. Removing the container is not timed; it happens
 * after each trial ({@code session.destroy()}, or a forced remove for the baseline).
 *
 * <pre>{@code
 * Result r = new DockerSessionCreate().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerSessionCreate implements Benchmark {

    /** A run of this row with its default settings. */
    public DockerSessionCreate() {}

    private static final List<String> TRUE = List.of("true");

    @Override
    public String name() {
        return "docker-session-create";
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
        try (DockerBench docker = DockerBench.open(name(), config);
                DockerSandboxProvider provider = docker.provider()) {
            return Harness.alternate(
                    name(),
                    unit(),
                    target(),
                    reps,
                    config,
                    () -> sdkOnce(docker, provider, trueCommand),
                    () -> baselineOnce(docker),
                    Harness.NOTHING);
        }
    }

    private static double sdkOnce(DockerBench docker, DockerSandboxProvider provider, ExecOptions trueCommand) {
        long t0 = System.nanoTime();
        SandboxSession session = provider.create(docker.sessionOptions()).block(DockerBench.TIMEOUT);
        try {
            ExecResult r = session.run(trueCommand).block(DockerBench.TIMEOUT);
            long took = System.nanoTime() - t0;
            if (r == null || r.exitCode() != 0) {
                throw new IllegalStateException("SDK: true in a new session exited with " + r);
            }
            return took / 1e6;
        } finally {
            session.destroy().block(DockerBench.TIMEOUT);
        }
    }

    /** What a user writes with docker-java alone (also the pooled row's baseline: a cold start). */
    static double baselineOnce(DockerBench docker) throws InterruptedException {
        long t0 = System.nanoTime();
        String container = docker.startContainer();
        try {
            long exit = docker.exec(container, TRUE, new ResultCallback.Adapter<Frame>());
            long took = System.nanoTime() - t0;
            if (exit != 0) {
                throw new IllegalStateException("baseline: true in a new container exited with " + exit);
            }
            return took / 1e6;
        } finally {
            docker.remove(container);
        }
    }
}
