package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Measures what the SDK adds on top of the daemon: container create, exec round trip and stream throughput, each
 * against the same operation done with plain docker-java in the same run, reported as a ratio. Asserts only that
 * both sides did the same work; the figures are printed for the record.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerMeasurementsTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int CREATES = 5;
    private static final int EXECS = 20;
    private static final long STREAM_BYTES = 100_000_000L;

    private DockerTestSupport support;
    private DockerSandboxProvider provider;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        provider = DockerTestSupport.unsweptProvider();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    private SessionOptions options() {
        return support.sessionOptions();
    }

    @Test
    void createExecAndStreamAgainstPlainDockerJava() throws Exception {
        // warm both paths up once
        SandboxSession warm = provider.create(options()).block(WAIT);
        warm.run(ExecOptions.of("true")).block(WAIT);
        String rawWarm = rawContainer();
        rawExec(rawWarm, "true");
        support.docker.removeContainerCmd(rawWarm).withForce(true).exec();
        warm.destroy().block(WAIT);

        long[] sdkCreate = new long[CREATES];
        long[] rawCreate = new long[CREATES];
        for (int i = 0; i < CREATES; i++) {
            long t0 = System.nanoTime();
            SandboxSession s = provider.create(options()).block(WAIT);
            sdkCreate[i] = System.nanoTime() - t0;
            s.destroy().block(WAIT);
            t0 = System.nanoTime();
            String id = rawContainer();
            rawCreate[i] = System.nanoTime() - t0;
            support.docker.removeContainerCmd(id).withForce(true).exec();
        }

        SandboxSession s = provider.create(options()).block(WAIT);
        String raw = rawContainer();
        try {
            long[] sdkExec = new long[EXECS];
            long[] rawExec = new long[EXECS];
            for (int i = 0; i < EXECS; i++) {
                long t0 = System.nanoTime();
                assertThat(s.run(ExecOptions.of("echo", "hi")).block(WAIT).stdout())
                        .isEqualTo("hi\n");
                sdkExec[i] = System.nanoTime() - t0;
                t0 = System.nanoTime();
                assertThat(rawExec(raw, "echo", "hi")).isEqualTo(3);
                rawExec[i] = System.nanoTime() - t0;
            }

            // lines of 99 letters and a newline, 100 bytes each
            String producer = "yes " + "a".repeat(99) + " | head -c " + STREAM_BYTES;
            long expected = STREAM_BYTES;
            AtomicLong sdkBytes = new AtomicLong();
            long t0 = System.nanoTime();
            s.exec(ExecOptions.shell(producer))
                    .doOnNext(e -> {
                        if (e instanceof ExecEvent.Stdout out) {
                            // a line can arrive in parts (flagged partial): only its last part ends with the newline
                            sdkBytes.addAndGet(out.text().length() + (out.partial() ? 0 : 1));
                        }
                    })
                    .blockLast(Duration.ofMinutes(2));
            long sdkStream = System.nanoTime() - t0;
            t0 = System.nanoTime();
            long sdkRunBytes = s.run(ExecOptions.shell(producer).withMaxOutputBytes(0))
                    .block(Duration.ofMinutes(2))
                    .stdoutBytes();
            long sdkRun = System.nanoTime() - t0;
            t0 = System.nanoTime();
            long rawBytes = rawExec(raw, "sh", "-c", producer);
            long rawStream = System.nanoTime() - t0;
            assertThat(sdkBytes.get()).isEqualTo(expected);
            assertThat(sdkRunBytes).isEqualTo(expected);
            assertThat(rawBytes).isEqualTo(expected);

            System.out.printf(
                    "docker create: sdk median %.0f ms, docker-java median %.0f ms, ratio %.2f%n",
                    median(sdkCreate) / 1e6, median(rawCreate) / 1e6, median(sdkCreate) / (double) median(rawCreate));
            System.out.printf(
                    "docker exec (echo hi, run to exit): sdk median %.1f ms, docker-java median %.1f ms, ratio %.2f%n",
                    median(sdkExec) / 1e6, median(rawExec) / 1e6, median(sdkExec) / (double) median(rawExec));
            System.out.printf(
                    "docker stream (%d MB in lines of 100 bytes): sdk exec (line events) %.0f MiB/s, sdk run (bytes)"
                            + " %.0f MiB/s, docker-java (frames) %.0f MiB/s, ratios %.2f and %.2f%n",
                    STREAM_BYTES / 1_000_000,
                    expected / (sdkStream / 1e9) / (1 << 20),
                    expected / (sdkRun / 1e9) / (1 << 20),
                    expected / (rawStream / 1e9) / (1 << 20),
                    rawStream / (double) sdkStream,
                    rawStream / (double) sdkRun);
        } finally {
            support.docker.removeContainerCmd(raw).withForce(true).exec();
            s.destroy().block(WAIT);
        }
    }

    private String rawContainer() {
        String id = support.docker
                .createContainerCmd(DockerTestSupport.IMAGE)
                .withCmd("sleep", "600")
                .withLabels(Map.of(DockerTestSupport.RUN_LABEL, support.runId))
                .exec()
                .getId();
        support.docker.startContainerCmd(id).exec();
        return id;
    }

    /** Runs a command with plain docker-java, to its exit code; returns the stdout byte count. */
    private long rawExec(String container, String... argv) throws InterruptedException {
        String execId = support.docker
                .execCreateCmd(container)
                .withCmd(argv)
                .withAttachStdout(true)
                .withAttachStderr(true)
                .exec()
                .getId();
        AtomicLong bytes = new AtomicLong();
        support.docker
                .execStartCmd(execId)
                .exec(new ResultCallback.Adapter<Frame>() {
                    @Override
                    public void onNext(Frame frame) {
                        if (frame.getStreamType() == StreamType.STDOUT) {
                            bytes.addAndGet(frame.getPayload().length);
                        }
                    }
                })
                .awaitCompletion(2, TimeUnit.MINUTES);
        Long code = null;
        for (int i = 0; i < 200 && code == null; i++) {
            var inspect = support.docker.inspectExecCmd(execId).exec();
            if (!Boolean.TRUE.equals(inspect.isRunning())) {
                code = inspect.getExitCodeLong();
            } else {
                Thread.sleep(5);
            }
        }
        assertThat(code).isZero();
        return bytes.get();
    }

    private static long median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
