package dev.sandbox.benchmarks;

import dev.sandbox.SandboxSession;
import dev.sandbox.docker.DockerSandboxProvider;

/**
 * {@code docker-tunnel-vs-loopback}: what a forward costs against the fastest a host can move the same bytes. SDK:
 * {@code docker-tunnel-throughput}'s side, 256 MiB (32 MiB in short mode) read through {@code
 * session.ports().forward(9000)}. Baseline: a host server on loopback that writes the same zero bytes, read by the
 * same client loop (no sandbox, no agent). The ratio is reported, with no bar ({@code target=none}): loopback is the
 * ceiling, not something a forward can be asked to reach.
 *
 * <pre>{@code
 * Report r = new DockerTunnelVsLoopback().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerTunnelVsLoopback implements Benchmark {

    /** A run of this row with its default settings. */
    public DockerTunnelVsLoopback() {}

    @Override
    public String name() {
        return "docker-tunnel-vs-loopback";
    }

    @Override
    public String unit() {
        return "MiB/s";
    }

    /**
     * Only which way is better (more MiB/s): the row reports its ratio without judging it.
     *
     * @return a target whose bound the report does not print
     */
    @Override
    public Target target() {
        return Target.atLeast(1.0);
    }

    @Override
    public ReportedRatio run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(0, 1), new Reps(2, 9));
        long bytes = TunnelBench.bytes(config);
        try (DockerBench docker = DockerBench.open(name(), config);
                DockerSandboxProvider provider = docker.provider();
                TunnelBench.LoopbackSource loopback = new TunnelBench.LoopbackSource(bytes)) {
            SandboxSession session = provider.create(docker.sessionOptions()).block(DockerBench.TIMEOUT);
            try (TunnelBench.Sandbox source = TunnelBench.Sandbox.start(session, bytes)) {
                return new ReportedRatio(Harness.alternate(
                        name(),
                        unit(),
                        target(),
                        reps,
                        config,
                        () -> TunnelBench.read("SDK", source.forward().localAddress(), bytes),
                        () -> TunnelBench.read("loopback", loopback.address(), bytes),
                        Harness.NOTHING));
            } finally {
                session.destroy().block(DockerBench.TIMEOUT);
            }
        }
    }
}
