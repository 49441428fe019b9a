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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;

/**
 * {@code docker-exec-throughput}: commands per second when {@value #IN_FLIGHT} {@code echo hi} execs are in flight at
 * once in one running container. A fixed count of execs (32 in short mode, 400 in full), not a time, bounds each
 * trial; the figure is that count divided by the trial's wall time. SDK: {@code Flux.range(0, count).flatMap(i ->
 * session.run(echo), 16)} on one Docker session. Baseline: plain docker-java on a container of the same image and
 * settings: a fixed pool of 16 platform threads, each running exec create, exec start with a collecting {@link
 * ResultCallback.Adapter}, await, inspect for the exit code ({@link DockerBench#exec}), as a user writes it. Both
 * sides check that every exec printed exactly {@code hi} and exited with 0.
 *
 * <pre>{@code
 * Result r = new DockerExecThroughput().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerExecThroughput implements Benchmark {

    /** A run of this row with its default settings. */
    public DockerExecThroughput() {}

    /** How many execs each side keeps in flight. */
    static final int IN_FLIGHT = 16;

    static final int SHORT_COUNT = 32;
    static final int FULL_COUNT = 400;

    private static final List<String> ECHO = List.of("echo", "hi");

    @Override
    public String name() {
        return "docker-exec-throughput";
    }

    @Override
    public String unit() {
        return "execs/s";
    }

    @Override
    public Target target() {
        return Target.atLeast(10.0);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        // a full trial is 400 execs, about 30 s a side at the 13 execs/s both reach today: 1 + 3 rounds take 4 min
        Reps reps = config.reps(new Reps(0, 1), new Reps(1, 3));
        int count = config.shortMode() ? SHORT_COUNT : FULL_COUNT;
        ExecOptions echo = ExecOptions.of(ECHO);
        ThreadPoolExecutor pool = baselinePool(count);
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
                            () -> sdkOnce(session, echo, count),
                            () -> baselineOnce(docker, container, pool, count),
                            Harness.NOTHING);
                } finally {
                    docker.remove(container);
                }
            } finally {
                session.destroy().block(DockerBench.TIMEOUT);
            }
        } finally {
            pool.shutdownNow();
            if (!pool.awaitTermination(DockerBench.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                config.log("%s: the baseline's exec threads did not end within %s", name(), DockerBench.TIMEOUT);
            }
        }
    }

    private static double sdkOnce(SandboxSession session, ExecOptions echo, int count) {
        long t0 = System.nanoTime();
        Long done = Flux.range(0, count)
                .flatMap(i -> session.run(echo), IN_FLIGHT)
                .doOnNext(DockerExecThroughput::checkSdk)
                .count()
                .block(DockerBench.TIMEOUT);
        long took = System.nanoTime() - t0;
        if (done == null || done != count) {
            throw new IllegalStateException("SDK: " + done + " of " + count + " execs finished");
        }
        return count / (took / 1e9);
    }

    private static void checkSdk(ExecResult r) {
        if (r.exitCode() != 0 || !r.stdout().equals("hi\n")) {
            throw new IllegalStateException("SDK: echo hi gave " + r);
        }
    }

    /**
     * The baseline's threads: a fixed pool of {@value #IN_FLIGHT}, made once for the row, as a user keeps one. Its
     * queue holds one trial's tasks and no more.
     */
    private static ThreadPoolExecutor baselinePool(int count) {
        AtomicInteger n = new AtomicInteger();
        ThreadFactory threads = r -> {
            Thread t = new Thread(r, "baseline-exec-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        return new ThreadPoolExecutor(
                IN_FLIGHT, IN_FLIGHT, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(count), threads);
    }

    /** What a user writes with docker-java alone: the same exec as the latency row, on 16 threads at once. */
    private static double baselineOnce(DockerBench docker, String container, ThreadPoolExecutor pool, int count)
            throws InterruptedException, ExecutionException, TimeoutException {
        long t0 = System.nanoTime();
        List<Future<?>> execs = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            execs.add(pool.submit(() -> {
                baselineExec(docker, container);
                return null;
            }));
        }
        long deadline = t0 + DockerBench.TIMEOUT.toNanos();
        try {
            for (Future<?> f : execs) {
                f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } finally {
            for (Future<?> f : execs) {
                f.cancel(true); // only the unfinished ones, after a failure or the timeout
            }
        }
        long took = System.nanoTime() - t0;
        return count / (took / 1e9);
    }

    private static void baselineExec(DockerBench docker, String container) throws InterruptedException {
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ResultCallback.Adapter<Frame> collect = new ResultCallback.Adapter<>() {
            @Override
            public void onNext(Frame frame) {
                if (frame.getStreamType() == StreamType.STDOUT) {
                    synchronized (stdout) {
                        if (stdout.size() < 4096) { // echo hi prints 3 bytes; more is an error below
                            stdout.writeBytes(frame.getPayload());
                        }
                    }
                }
            }
        };
        long exit = docker.exec(container, ECHO, collect);
        String out;
        synchronized (stdout) {
            out = stdout.toString(StandardCharsets.UTF_8);
        }
        if (exit != 0 || !out.equals("hi\n")) {
            throw new IllegalStateException("baseline: echo hi printed '" + out + "' and exited with " + exit);
        }
    }
}
