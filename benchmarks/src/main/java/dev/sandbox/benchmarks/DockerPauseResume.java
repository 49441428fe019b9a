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
 * {@code docker-pause-resume}: milliseconds to pause a running container, resume it and have the output of its first
 * command ({@code echo hi}) in hand. SDK: {@code session.pause()}, {@code session.resume()}, then {@code
 * session.run(ExecOptions.of("echo", "hi"))} on one Docker session, each blocked on. Baseline: plain docker-java on a
 * container of the same image and settings: {@code pauseContainerCmd}, {@code unpauseContainerCmd}, then the {@code
 * docker-exec-latency} row's exec (create, start with a collecting callback, await, inspect the exit code). Both sides
 * check the output is {@code hi} and the exit code 0.
 *
 * <pre>{@code
 * Result r = new DockerPauseResume().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerPauseResume implements Benchmark {

    /** A run of this row with its default settings. */
    public DockerPauseResume() {}

    private static final List<String> ECHO = List.of("echo", "hi");

    @Override
    public String name() {
        return "docker-pause-resume";
    }

    @Override
    public String unit() {
        return "ms";
    }

    @Override
    public Target target() {
        return Target.atMost(0.5);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(3, 10), new Reps(20, 100));
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
                                session.pause().block(DockerBench.TIMEOUT);
                                session.resume().block(DockerBench.TIMEOUT);
                                ExecResult r = session.run(echo).block(DockerBench.TIMEOUT);
                                long took = System.nanoTime() - t0;
                                if (r == null
                                        || r.exitCode() != 0
                                        || !r.stdout().equals("hi\n")) {
                                    throw new IllegalStateException("SDK: echo hi after resume gave " + r);
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
        docker.docker().pauseContainerCmd(container).exec();
        docker.docker().unpauseContainerCmd(container).exec();
        long exit = docker.exec(container, ECHO, collect);
        String out = stdout.toString(StandardCharsets.UTF_8);
        long took = System.nanoTime() - t0;
        if (exit != 0 || !out.equals("hi\n")) {
            throw new IllegalStateException("baseline: echo hi printed '" + out + "' and exited with " + exit);
        }
        return took / 1e6;
    }
}
