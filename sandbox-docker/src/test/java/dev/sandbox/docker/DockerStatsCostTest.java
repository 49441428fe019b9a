package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Statistics;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionStats;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What one stats sample costs each way, on runc and on gVisor, median of {@value #SAMPLES} after a warm-up: the
 * first sample of {@code session.stats} (the daemon's stats stream), docker-java's {@code statsCmd} without
 * one-shot (what docker-java alone offers: the daemon waits for a second reading), reading the cgroup through the
 * agent today (an exec of {@code cat}), and one agent round trip (half a {@code ping}, which makes two): the least a
 * new agent request for the figures would cost. Prints the figures and what gVisor reports; asserts only that each way
 * gave an answer.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerStatsCostTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int SAMPLES = 15;
    /** Samples of the ways that wait for the daemon's once-a-second reading. */
    private static final int SLOW_SAMPLES = 5;
    /** The cgroup v1 files the daemon reads for the figures, as the container sees them. */
    private static final String CGROUP_CAT = "cat /sys/fs/cgroup/memory/memory.usage_in_bytes"
            + " /sys/fs/cgroup/memory/memory.max_usage_in_bytes /sys/fs/cgroup/cpuacct/cpuacct.usage"
            + " /sys/fs/cgroup/pids/pids.current";

    private DockerTestSupport support;
    private DockerSandboxProvider runc;
    private DockerSandboxProvider gvisor;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        runc = DockerSandboxProvider.create(DockerTestSupport.settings());
        gvisor = DockerSandboxProvider.create(DockerTestSupport.settings()
                .withRuntime(DockerSettings.Runtime.RUNSC)
                .withNetwork(DockerSettings.Network.NONE));
    }

    @AfterAll
    void stop() {
        try {
            gvisor.close();
        } finally {
            support.finish(runc);
        }
    }

    private static double medianMillis(Supplier<Object> once) {
        return medianMillis(SAMPLES, once);
    }

    /** For the ways that take a second or two: fewer samples, to keep the test short. */
    private static double medianMillis(int samples, Supplier<Object> once) {
        once.get();
        long[] nanos = new long[samples];
        for (int i = 0; i < samples; i++) {
            long t0 = System.nanoTime();
            assertThat(once.get()).isNotNull();
            nanos[i] = System.nanoTime() - t0;
        }
        Arrays.sort(nanos);
        return nanos[samples / 2] / 1e6;
    }

    private void measure(String runtime, DockerSandboxProvider provider) throws Exception {
        SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
        try {
            SessionStats first = s.stats(Duration.ofHours(1)).blockFirst(WAIT);
            System.out.printf("stats %s: first sample %s%n", runtime, first);
            long inside = s.files()
                    .list("/proc")
                    .filter(f -> f.name().chars().allMatch(Character::isDigit))
                    .count()
                    .block(WAIT);
            System.out.printf(
                    "stats %s: %d processes in the sandbox's /proc, %d pids in the sample%n",
                    runtime, inside, first.pids());
            String containerId = support.container(s.id()).getId();
            double firstSample = medianMillis(
                    SLOW_SAMPLES, () -> s.stats(Duration.ofHours(1)).blockFirst(WAIT));
            double agentRoundTrip = medianMillis(() -> s.ping().block(WAIT)) / 2;
            ExecResult cat = s.run(ExecOptions.shell(CGROUP_CAT)).block(WAIT);
            System.out.printf(
                    "stats %s: cgroup through the agent exits %d: %s%s%n",
                    runtime, cat.exitCode(), cat.stdout().replace('\n', ' '), cat.stderr());
            for (String f : new String[] {
                "/sys/fs/cgroup/memory/memory.usage_in_bytes", "/proc/stat", "/proc/meminfo", "/proc/net/dev"
            }) {
                try {
                    byte[] b = s.files().readAllBytes(f, 65536).block(WAIT);
                    System.out.printf(
                            "stats %s: %s through the agent's file read: %s%n",
                            runtime,
                            f,
                            new String(b, java.nio.charset.StandardCharsets.US_ASCII)
                                    .lines()
                                    .limit(6)
                                    .toList());
                } catch (RuntimeException e) {
                    System.out.printf("stats %s: %s through the agent's file read fails: %s%n", runtime, f, e);
                }
            }
            double agentFile =
                    medianMillis(() -> reactor.core.publisher.Flux.just("/proc/stat", "/proc/meminfo", "/proc/net/dev")
                            .flatMap(f -> s.files().readAllBytes(f, 65536))
                            .then(s.files().list("/proc").count())
                            .block(WAIT));
            System.out.printf(
                    "stats %s: three file reads and a /proc listing through the agent %.2f ms%n", runtime, agentFile);
            double agentExec =
                    medianMillis(() -> s.run(ExecOptions.shell(CGROUP_CAT)).block(WAIT));
            double dockerJava = medianMillis(SLOW_SAMPLES, () -> {
                CompletableFuture<Statistics> got = new CompletableFuture<>();
                ResultCallback.Adapter<Statistics> cb = support.docker
                        .statsCmd(containerId)
                        .withNoStream(true)
                        .exec(new ResultCallback.Adapter<>() {
                            @Override
                            public void onNext(Statistics st) {
                                got.complete(st);
                            }
                        });
                try {
                    return got.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new AssertionError(e);
                } finally {
                    try {
                        cb.close();
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }
            });
            System.out.printf(
                    "stats %s per sample (median of %d, of 5 for the daemon's ways): first sample of session.stats (the daemon's stats stream) %.2f ms; agent exec of cat %.2f ms;"
                            + " one agent round trip %.2f ms; docker-java statsCmd without one-shot %.2f ms%n",
                    runtime, SAMPLES, firstSample, agentExec, agentRoundTrip, dockerJava);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void perSampleCostOnRunc() throws Exception {
        measure("runc", runc);
    }

    @Test
    void perSampleCostOnGvisor() throws Exception {
        measure("runsc", gvisor);
    }
}
