package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.SandboxSession;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * The agent inside every Docker sandbox, seen as a user sees it: a sandbox made from an image holding one static
 * program, code in the sandbox that tries to kill the agent or speaks garbage to it, a lifetime that ends with no
 * client alive, a reader that stops reading, and a thousand streams at once.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerAgentTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Built by scripts/test-image.sh: one file, the static busybox at /busybox. */
    private static final String ONE_PROGRAM = "sandbox-test:one-program";

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

    @Test
    void anImageWithNothingButOneStaticProgramRunsCommandsFilesAndWatches() {
        SandboxSession s = provider.create(
                        support.sessionOptions(),
                        DockerSettings.of(ONE_PROGRAM).withPullPolicy(DockerSettings.PullPolicy.NEVER))
                .block(WAIT);
        try {
            ExecResult r = s.run(ExecOptions.of("/busybox", "echo", "hi")).block(WAIT);
            assertThat(r.exitCode()).isZero();
            assertThat(r.stdout()).isEqualTo("hi\n");
            // no shell, no ls: the files API is the agent's own
            s.files().mkdir("/work").block(WAIT);
            FileInfo written = s.files()
                    .write("/work/a.txt", "one".getBytes(StandardCharsets.UTF_8))
                    .block(WAIT);
            assertThat(written.size()).isEqualTo(3);
            assertThat(s.files().list("/work").map(FileInfo::name).collectList().block(WAIT))
                    .containsExactly("a.txt");
            assertThat(new String(s.files().readAllBytes("/work/a.txt", 100).block(WAIT), StandardCharsets.UTF_8))
                    .isEqualTo("one");
            // a watch sees a file a command writes right after the watch said it is live
            StepVerifier.create(s.files()
                            .watch("/work")
                            .filter(e ->
                                    e.kind() == FileEvent.Kind.READY || e.path().endsWith("/b.txt"))
                            .take(2))
                    .assertNext(e -> assertThat(e).isEqualTo(new FileEvent(FileEvent.Kind.READY, "/work")))
                    .then(() -> s.run(ExecOptions.of("/busybox", "touch", "/work/b.txt"))
                            .subscribe())
                    .assertNext(e -> assertThat(e).isEqualTo(new FileEvent(FileEvent.Kind.CREATED, "/work/b.txt")))
                    .expectComplete()
                    .verify(WAIT);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void codeInTheSandboxCannotKillItsAgentAndGarbageEndsOnlyItsOwnConnection() {
        SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
        try {
            // SIGKILL and SIGSTOP to process 1, SIGTERM to everything else (the relay of this connection included),
            // and random bytes spoken to the agent on a connection of its own
            ExecResult r = s.run(ExecOptions.shell("kill -9 1; kill -STOP 1; kill -TERM -1;"
                            + " head -c 100000 /dev/urandom | timeout 5 /.dev-sandbox/agent relay | wc -c; echo done"))
                    .block(WAIT);
            assertThat(r.stdout()).endsWith("done\n");
            // the agent is still there, and so is this client's connection to it
            assertThat(s.run(ExecOptions.shell("echo still; cat /proc/1/cmdline | tr '\\0' ' '"))
                            .block(WAIT)
                            .stdout())
                    .startsWith("still\n/.dev-sandbox/agent init");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void codeThatKillsEveryProcessCutsARelayedConnectionAndTheNextCommandMakesANewOne() {
        // over the relay (a direct channel has no process in the sandbox to kill: DockerDirectChannelTest)
        DockerSandboxProvider relayOnly = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .sweepInterval(null)
                .directChannel(false)
                .build();
        SandboxSession s = relayOnly.create(support.sessionOptions()).block(WAIT);
        try {
            // kill -9 -1 reaches every process but the agent and the caller, the relay of this client's connection
            // included: what still runs on it fails with a retryable error naming the connection. The shell goes on
            // after the kill (kill(-1) spares its caller): had it ended at once, its exit could be delivered before
            // the cut is seen, and the command would succeed
            StepVerifier.create(s.run(ExecOptions.shell("sleep 0.2; kill -9 -1; sleep 20")))
                    .expectErrorSatisfies(e -> assertThat(e)
                            .isInstanceOf(dev.sandbox.BackendException.class)
                            .hasMessageContaining("connection to the agent")
                            .satisfies(x -> assertThat(((dev.sandbox.BackendException) x).isRetryable())
                                    .isTrue()))
                    .verify(WAIT);
            assertThat(s.run(ExecOptions.shell("echo again")).block(WAIT).stdout())
                    .isEqualTo("again\n");
        } finally {
            s.destroy().block(WAIT);
            relayOnly.close();
        }
    }

    @Test
    void aLifetimePassesWithNoClientAliveAndTheAgentEndsTheSandboxOnTime() throws InterruptedException {
        String id;
        Instant created;
        // no reaper and no sweeper: only the agent can end it
        try (DockerSandboxProvider gone = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .sweepInterval(null)
                .reaper(false)
                .build()) {
            SandboxSession s = gone.create(support.sessionOptions().withLifetime(Duration.ofSeconds(3)))
                    .block(WAIT);
            created = Instant.now();
            id = s.id();
            assertThat(s.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
        }
        // its deadline (3 s, rounded up to the second) plus the grace the SDK keeps to end it first
        Instant due = created.plusSeconds(3 + 1 + DockerSandboxProvider.LIFETIME_GRACE_SECONDS);
        sleep(Math.max(
                0, Duration.between(Instant.now(), created.plusSeconds(2)).toMillis()));
        assertThat(support.container(id))
                .as("still running before its deadline")
                .isNotNull();
        while (support.container(id) != null && Instant.now().isBefore(due.plusSeconds(5))) {
            Thread.sleep(100);
        }
        assertThat(support.container(id))
                .as("ended by its agent within 5 s of %s", due)
                .isNull();
    }

    @Test
    void aReaderThatStopsReadingBlocksItsProcessWhileOthersOnTheSameConnectionFlow() {
        SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
        try {
            // a reader that takes one line of an endless producer, then asks for nothing more
            AtomicLong lines = new AtomicLong();
            BaseSubscriber<ExecEvent> stalled = new BaseSubscriber<>() {
                @Override
                protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
                    request(1);
                }

                @Override
                protected void hookOnNext(ExecEvent value) {
                    lines.incrementAndGet();
                }
            };
            s.exec(ExecOptions.shell("echo $$ > /tmp/yes.pid; exec yes")).subscribe(stalled);
            try {
                // 100 MiB through another command on the same connection while the first is stalled
                long t0 = System.nanoTime();
                ExecResult other = s.run(ExecOptions.shell("head -c 104857600 /dev/zero | wc -c")
                                .withTimeout(Duration.ofSeconds(30)))
                        .block(WAIT);
                double seconds = (System.nanoTime() - t0) / 1e9;
                assertThat(other.stdout().trim()).isEqualTo("104857600");
                assertThat(seconds).as("the other command's time").isLessThan(20);
                // the stalled producer waits in write(): asleep, and its output far below what it could make
                String state = s.run(ExecOptions.shell("p=$(cat /tmp/yes.pid); for i in 1 2 3 4 5 6 7 8 9 10; do"
                                + " s=$(cut -d' ' -f3 /proc/$p/stat); [ \"$s\" = S ] && break; sleep 0.1; done;"
                                + " echo $s; cut -d' ' -f14 /proc/$p/stat"))
                        .block(WAIT)
                        .stdout();
                assertThat(state).startsWith("S\n");
                assertThat(lines.get()).isEqualTo(1);
            } finally {
                stalled.dispose();
            }
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aThousandConcurrentStreamsOnOneSessionKeepTheAgentUnder32MiB() {
        SandboxSession s = provider.create(
                        support.sessionOptions(), DockerTestSupport.settings().withPidsLimit(4096))
                .block(WAIT);
        try {
            int n = 1000;
            // each command waits in read() on its stdin, which ends for all at once: n processes, no CPU
            reactor.core.publisher.Sinks.Empty<Void> go = reactor.core.publisher.Sinks.empty();
            reactor.core.publisher.Mono<List<ExecResult>> all = Flux.range(0, n)
                    .flatMap(
                            i -> s.run(ExecOptions.shell("read x; echo " + i)
                                    .withStdin(go.asMono().thenMany(Flux.<java.nio.ByteBuffer>empty()))),
                            n)
                    .collectList()
                    .cache();
            Disposable started = all.subscribe();
            try {
                long rss = 0;
                long deadline = System.nanoTime() + WAIT.toNanos();
                int running = 0;
                while (System.nanoTime() < deadline) {
                    String status = s.run(
                                    ExecOptions.shell(
                                            "grep VmRSS /proc/1/status | tr -s ' ' | cut -d' ' -f2; ls /proc | grep -c '^[0-9]'"))
                            .block(WAIT)
                            .stdout();
                    List<String> parts = status.lines().toList();
                    rss = Math.max(rss, Long.parseLong(parts.get(0).trim()));
                    running = Integer.parseInt(parts.get(1).trim());
                    if (running >= n) {
                        break;
                    }
                    sleep(200);
                }
                assertThat(running).as("processes running at once").isGreaterThanOrEqualTo(n);
                assertThat(rss).as("the agent's resident memory in KiB").isLessThan(32 * 1024);
            } finally {
                go.tryEmitEmpty();
            }
            List<ExecResult> results = all.block(WAIT);
            started.dispose();
            assertThat(results)
                    .hasSize(n)
                    .allSatisfy(r -> assertThat(r.exitCode()).isZero());
            assertThat(results.stream()
                            .mapToInt(r -> Integer.parseInt(r.stdout().trim()))
                            .sum())
                    .isEqualTo(n * (n - 1) / 2);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
