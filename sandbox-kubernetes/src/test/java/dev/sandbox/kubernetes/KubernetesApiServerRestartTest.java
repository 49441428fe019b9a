package dev.sandbox.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.BackendException;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.Disposable;

/**
 * The API server restarted (scripts/kube-restart.sh, the same command line, about ten seconds away) while a command
 * streams through it: the command fails with a retryable {@link BackendException}, the next call makes a new
 * connection, and a background process the agent holds in the pod lived on: its output resumes from the offset the
 * client had read, with no line lost or repeated; a new session then starts. This restarts a component of the shared cluster: it disturbs
 * every other user of the cluster for those seconds.
 */
@RequiresKubernetes
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesApiServerRestartTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The script stops the API server (up to 10 s), starts it and waits until it is ready (up to 60 s). */
    private static final Duration RESTART = Duration.ofSeconds(90);

    private static final Path RESTART_SCRIPT = Path.of("../scripts/kube-restart.sh");

    private KubernetesTestSupport support;
    private KubernetesSandboxProvider provider;

    @BeforeAll
    void start() {
        KubernetesTestSupport.loadAgentImage();
        support = new KubernetesTestSupport();
        provider = KubernetesTestSupport.provider();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    @Test
    void aCommandStreamingThroughARestartedApiServerFailsRetryablyAndABackgroundProcessResumes() throws Exception {
        SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
        Disposable following = null;
        try {
            // a counter the agent holds, one line every 100 ms; this client follows it and keeps where it was
            BackgroundProcess counter = s.start(
                            ExecOptions.shell("i=0; while :; do echo $i; i=$((i+1)); sleep 0.1; done"))
                    .block(WAIT);
            AtomicReference<ExecEvent.Line> last = new AtomicReference<>();
            CountDownLatch counting = new CountDownLatch(5);
            following = counter.output(0, 0)
                    .subscribe(
                            e -> {
                                if (e instanceof ExecEvent.Stdout line && !line.partial()) {
                                    last.set(line);
                                    counting.countDown();
                                }
                            },
                            e -> {});
            // a command streaming through the API server
            CompletableFuture<Throwable> end = new CompletableFuture<>();
            CountDownLatch started = new CountDownLatch(1);
            s.exec(ExecOptions.shell("echo started; sleep 120"))
                    .subscribe(
                            e -> started.countDown(),
                            end::complete,
                            () -> end.complete(new AssertionError("the stream completed instead of failing")));
            assertThat(started.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
            assertThat(counting.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

            long t0 = System.nanoTime();
            Process restart = new ProcessBuilder("bash", RESTART_SCRIPT.toString(), "kube-apiserver")
                    .redirectErrorStream(true)
                    .start();
            Throwable failure = end.get(RESTART.toMillis(), TimeUnit.MILLISECONDS);
            long failedAfter = (System.nanoTime() - t0) / 1_000_000;
            if (!restart.waitFor(RESTART.toSeconds(), TimeUnit.SECONDS)) {
                restart.destroyForcibly();
                throw new AssertionError("scripts/kube-restart.sh did not finish within " + RESTART);
            }
            String said = new String(restart.getInputStream().readNBytes(64 * 1024), StandardCharsets.UTF_8);
            assertThat(restart.exitValue()).as("kube-restart.sh: %s", said).isZero();
            long readyAfter = (System.nanoTime() - t0) / 1_000_000;
            following.dispose();
            ExecEvent.Line seen = last.get();

            assertThat(failure)
                    .as("the streaming command's end")
                    .isInstanceOfSatisfying(
                            BackendException.class,
                            e -> assertThat(e.isRetryable())
                                    .as("retryable: %s", e)
                                    .isTrue());

            // the next call makes a new connection through the restarted API server
            long t1 = System.nanoTime();
            assertThat(s.run(ExecOptions.shell("echo again")).block(WAIT).stdout())
                    .isEqualTo("again\n");
            long againAfter = (System.nanoTime() - t1) / 1_000_000;

            // the counter ran on: read on from the offset this client had, no line lost or repeated
            long n = Long.parseLong(seen.text().strip());
            List<ExecEvent> next = s.process(counter.id())
                    .flatMapMany(p -> p.output(seen.nextOffset(), 0))
                    .filter(e -> e instanceof ExecEvent.Stdout line && !line.partial())
                    .take(20)
                    .collectList()
                    .block(WAIT);
            assertThat(next).hasSize(20);
            for (int i = 0; i < next.size(); i++) {
                assertThat(((ExecEvent.Stdout) next.get(i)).text().strip()).isEqualTo(Long.toString(n + 1 + i));
            }
            long now = Long.parseLong(s.run(ExecOptions.shell("sleep 0.5; echo ok"))
                    .then(s.process(counter.id())
                            .flatMapMany(p -> p.snapshot(seen.nextOffset(), 0))
                            .filter(e -> e instanceof ExecEvent.Stdout line && !line.partial())
                            .last())
                    .map(e -> ((ExecEvent.Stdout) e).text().strip())
                    .block(WAIT));
            System.out.printf(
                    "measured: API server restart: stream failed after %d ms (%s), API server ready after %d ms,"
                            + " next call took %d ms, counter went from %d to %d meanwhile%n",
                    failedAfter, failure, readyAfter, againAfter, n, now);
            assertThat(now - n)
                    .as("lines the background process wrote while the API server was away")
                    .isGreaterThan(20);
            counter.kill().block(WAIT);

            // and a new session starts: the scheduler, the controllers and the kubelet are back too (their watches
            // reconnect with a backoff, which the tests after this one would otherwise pay)
            long t2 = System.nanoTime();
            SandboxSession fresh = provider.create(support.sessionOptions()).block(WAIT);
            try {
                assertThat(fresh.run(ExecOptions.shell("echo fresh"))
                                .block(WAIT)
                                .stdout())
                        .isEqualTo("fresh\n");
            } finally {
                fresh.destroy().block(WAIT);
            }
            System.out.printf(
                    "measured: a new session after the API server restart took %d ms%n",
                    (System.nanoTime() - t2) / 1_000_000);
        } finally {
            if (following != null) {
                following.dispose();
            }
            s.destroy().block(WAIT);
        }
    }
}
