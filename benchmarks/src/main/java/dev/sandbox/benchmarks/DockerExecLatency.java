package dev.sandbox.benchmarks;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.docker.DockerSandboxProvider;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * {@code docker-exec-latency}: milliseconds from asking to run {@code echo hi} in a running container until its
 * output and exit code are in hand. SDK: {@code session.run(ExecOptions.of("echo", "hi"))} on one Docker session,
 * blocked on. Baseline: plain docker-java on a container of the same image and settings: exec create, exec start with
 * a {@link ResultCallback.Adapter} collecting stdout, await completion, inspect the exec for its exit code (repeated
 * until the daemon has set it). Both sides check the output is {@code hi} and the exit code 0.
 *
 * <pre>{@code
 * Result r = new DockerExecLatency().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerExecLatency implements Benchmark {

    /** A run of this row with its default settings. */
    public DockerExecLatency() {}

    private static final List<String> ECHO = List.of("echo", "hi");

    @Override
    public String name() {
        return "docker-exec-latency";
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
        Reps reps = config.reps(new Reps(5, 15), new Reps(30, 200));
        ExecOptions echo = ExecOptions.of(ECHO);
        try (DockerBench docker = DockerBench.open(name(), config);
                DockerSandboxProvider provider = docker.provider()) {
            SandboxSession session = provider.create(docker.sessionOptions()).block(DockerBench.TIMEOUT);
            try {
                String container = docker.startContainer();
                try {
                    return Harness.alternate(
                            name(),
                            unit(),
                            target(),
                            reps,
                            config,
                            () -> {
                                long t0 = System.nanoTime();
                                ExecResult r = session.run(echo).block(DockerBench.TIMEOUT);
                                long took = System.nanoTime() - t0;
                                if (r == null
                                        || r.exitCode() != 0
                                        || !r.stdout().equals("hi\n")) {
                                    throw new IllegalStateException("SDK: echo hi gave " + r);
                                }
                                return took / 1e6;
                            },
                            () -> baselineOnce(docker, container),
                            Harness.NOTHING);
                } finally {
                    docker.remove(container);
                }
            } finally {
                session.destroy().block(DockerBench.TIMEOUT);
            }
        }
    }

    /** What a user writes with docker-java alone. */
    private static double baselineOnce(DockerBench docker, String container) throws InterruptedException {
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ResultCallback.Adapter<Frame> collect = new ResultCallback.Adapter<>() {
            @Override
            public void onNext(Frame frame) {
                if (frame.getStreamType() == StreamType.STDOUT) {
                    stdout.writeBytes(frame.getPayload());
                }
            }
        };
        long t0 = System.nanoTime();
        long exit = docker.exec(container, ECHO, collect);
        String out = stdout.toString(StandardCharsets.UTF_8);
        long took = System.nanoTime() - t0;
        if (exit != 0 || !out.equals("hi\n")) {
            throw new IllegalStateException("baseline: echo hi printed '" + out + "' and exited with " + exit);
        }
        return took / 1e6;
    }
}
