package dev.sandbox.benchmarks;

import dev.sandbox.SandboxSession;
import dev.sandbox.docker.DockerSandboxProvider;

/**
 * {@code docker-tunnel-throughput}: MiB per second of reading 256 MiB (32 MiB in short mode) from a TCP server inside
 * a Docker session. SDK: a host socket reads the whole stream through {@code session.ports().forward(9000)} from
 * {@code busybox nc -ll -p 9000 -e} a script that runs {@code dd if=/dev/zero bs=65536 count=N/65536} (the session
 * stays on network {@code none}: the bytes come as a {@code CONNECT} stream of the agent connection). Baseline: the
 * same {@code dd} over {@code docker exec}'s stream with plain docker-java (the other Docker rows' raw exec), on a
 * container of the same image and settings: the only way to the bytes without a forward. Target: at least the exec
 * stream's rate (the bar).
 *
 * <pre>{@code
 * Result r = new DockerTunnelThroughput().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerTunnelThroughput implements Benchmark {

    /** A run of this row with its default settings. */
    public DockerTunnelThroughput() {}

    @Override
    public String name() {
        return "docker-tunnel-throughput";
    }

    @Override
    public String unit() {
        return "MiB/s";
    }

    @Override
    public Target target() {
        return Target.atLeast(1.0);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(0, 1), new Reps(2, 9));
        long bytes = TunnelBench.bytes(config);
        try (DockerBench docker = DockerBench.open(name(), config);
                DockerSandboxProvider provider = docker.provider()) {
            SandboxSession session = provider.create(docker.sessionOptions()).block(DockerBench.TIMEOUT);
            try (TunnelBench.Sandbox source = TunnelBench.Sandbox.start(session, bytes)) {
                String container = docker.startContainer();
                try {
                    return Harness.alternate(
                            name(),
                            unit(),
                            target(),
                            reps,
                            config,
                            () -> TunnelBench.read("SDK", source.forward().localAddress(), bytes),
                            () -> TunnelBench.execOnce(docker, container, bytes),
                            Harness.NOTHING);
                } finally {
                    docker.remove(container);
                }
            } finally {
                session.destroy().block(DockerBench.TIMEOUT);
            }
        }
    }
}
