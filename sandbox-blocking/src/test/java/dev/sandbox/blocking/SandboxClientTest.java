package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionOptions;
import dev.sandbox.SessionStatus;
import dev.sandbox.local.LocalSandboxProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SandboxClientTest {
    private static final Duration GONE_WITHIN = Duration.ofSeconds(1);

    @TempDir
    Path tmp;

    private SandboxClient client;

    @BeforeEach
    void open() {
        client = SandboxClient.builder().defaultTimeout(Duration.ofSeconds(30)).local();
    }

    @AfterEach
    void close() {
        client.close();
    }

    @Test
    void runReturnsOutputAndExitCode() {
        ExecResult result = client.process().run(ExecOptions.shell("echo hello; echo oops >&2; exit 3"));

        assertThat(result.exitCode()).isEqualTo(3);
        assertThat(result.stdout()).isEqualTo("hello\n");
        assertThat(result.stderr()).isEqualTo("oops\n");
        assertThat(result.termination()).isEqualTo(ExecEvent.Termination.EXITED);
    }

    @Test
    void pingReportsARunningLocalSession() {
        SessionStatus status = client.ping();

        assertThat(status.status()).isEqualTo("running");
        assertThat(status.provider()).isEqualTo("local");
        assertThat(status.sessionId()).isEqualTo(client.sessionId());
    }

    @Test
    void execYieldsLinesInOrderThenExit() {
        List<ExecEvent> events = new ArrayList<>();
        try (ExecStream stream =
                client.process().exec(ExecOptions.shell("for i in 1 2 3 4 5; do echo line$i; done; exit 7"))) {
            stream.forEach(events::add);
        }

        assertThat(events).hasSize(6);
        assertThat(events.subList(0, 5))
                .extracting(e -> ((ExecEvent.Stdout) e).text())
                .containsExactly("line1", "line2", "line3", "line4", "line5");
        assertThat(events.get(5))
                .isInstanceOfSatisfying(
                        ExecEvent.Exit.class, exit -> assertThat(exit.code()).isEqualTo(7));
    }

    @Test
    void execWithByteOutputYieldsChunksThenExit() {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        List<ExecEvent> events = new ArrayList<>();
        try (ExecStream stream = client.process()
                .exec(ExecOptions.shell("printf 'a\\000\\377\\nb'; exit 2").withByteOutput(true))) {
            stream.forEach(events::add);
        }
        for (ExecEvent e : events.subList(0, events.size() - 1)) {
            ExecEvent.Chunk c = (ExecEvent.Chunk) e;
            assertThat(c.offset()).isEqualTo(out.size());
            out.writeBytes(c.bytes());
        }
        assertThat(out.toByteArray()).isEqualTo(new byte[] {'a', 0, (byte) 0xFF, '\n', 'b'});
        assertThat(events.get(events.size() - 1))
                .isInstanceOfSatisfying(
                        ExecEvent.Exit.class, exit -> assertThat(exit.code()).isEqualTo(2));
    }

    @Test
    void execShowsAPromptBeforeItsInput() {
        // the prompt has no newline: it comes as a partial line while the command waits for its input
        reactor.core.publisher.Sinks.Many<java.nio.ByteBuffer> stdin =
                reactor.core.publisher.Sinks.many().unicast().onBackpressureBuffer();
        try (ExecStream stream = client.process()
                .exec(ExecOptions.shell("printf 'Name: '; read x; echo \"hi $x\"")
                        .withStdin(stdin.asFlux()))) {
            java.util.Iterator<ExecEvent> it = stream.iterator();
            assertThat(it.next()).isEqualTo(new ExecEvent.Stdout("Name: ", 0, true, 6));
            stdin.tryEmitNext(java.nio.ByteBuffer.wrap("Bo\n".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            stdin.tryEmitComplete();
            assertThat(it.next()).isEqualTo(new ExecEvent.Stdout("hi Bo", 6, false, 12));
            assertThat(it.next()).isInstanceOf(ExecEvent.Exit.class);
        }
    }

    @Test
    void execAsJavaStreamSeparatesStdoutAndStderr() {
        List<String> lines;
        try (ExecStream events = client.process().exec(ExecOptions.shell("echo a; echo b >&2; echo c"))) {
            lines = events.stream()
                    .filter(e -> e instanceof ExecEvent.Line)
                    .map(e -> ((ExecEvent.Line) e).stream() + ":" + ((ExecEvent.Line) e).text())
                    .toList();
        }

        assertThat(lines).containsExactlyInAnyOrder("STDOUT:a", "STDERR:b", "STDOUT:c");
        assertThat(lines.stream().filter(l -> l.startsWith("STDOUT")).toList()).containsExactly("STDOUT:a", "STDOUT:c");
    }

    @Test
    void anExecStreamCanBeIteratedOnlyOnce() {
        try (ExecStream events = client.process().exec(ExecOptions.of("true"))) {
            events.iterator();
            assertThatThrownBy(events::iterator).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void closingAStreamEarlyKillsTheProcess() throws Exception {
        Path pidFile = tmp.resolve("pid");
        ExecStream events =
                client.process().exec(ExecOptions.shell(Pids.recordingPid(pidFile, "echo started; exec sleep 60")));
        Iterator<ExecEvent> it = events.iterator();
        assertThat(it.hasNext()).isTrue();
        assertThat(it.next()).isEqualTo(new ExecEvent.Stdout("started", 0, false, 8));
        long pid = Pids.await(pidFile, Duration.ofSeconds(5));
        assertThat(Pids.alive(pid)).isTrue();

        events.close();

        Pids.assertGoneWithin(pid, GONE_WITHIN);
        assertThat(it.hasNext()).isFalse();
    }

    @Test
    void closingTheJavaStreamClosesTheExecStream() throws Exception {
        Path pidFile = tmp.resolve("pid");
        ExecStream events =
                client.process().exec(ExecOptions.shell(Pids.recordingPid(pidFile, "echo started; exec sleep 60")));
        try (var s = events.stream()) {
            assertThat(s.findFirst()).contains(new ExecEvent.Stdout("started", 0, false, 8));
        }
        Pids.assertGoneWithin(Pids.await(pidFile, Duration.ofSeconds(5)), GONE_WITHIN);
        assertThat(events.ready()).isTrue();
    }

    @Test
    void defaultTimeoutThrowsAndKillsTheCommand() throws Exception {
        Path pidFile = tmp.resolve("pid");
        try (SandboxClient quick =
                SandboxClient.builder().defaultTimeout(Duration.ofMillis(500)).local()) {
            long start = System.nanoTime();
            assertThatThrownBy(
                            () -> quick.process().run(ExecOptions.shell(Pids.recordingPid(pidFile, "exec sleep 60"))))
                    .isInstanceOfSatisfying(
                            SandboxTimeoutException.class,
                            e -> assertThat(e.timeout()).isEqualTo(Duration.ofMillis(500)));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
            Pids.assertGoneWithin(Pids.await(pidFile, Duration.ofSeconds(5)), GONE_WITHIN);
        }
    }

    @Test
    void perCallTimeoutOverridesTheDefault() throws Exception {
        Path pidFile = tmp.resolve("pid");
        assertThatThrownBy(() -> client.process()
                        .run(ExecOptions.shell(Pids.recordingPid(pidFile, "exec sleep 60")), Duration.ofMillis(300)))
                .isInstanceOfSatisfying(
                        SandboxTimeoutException.class,
                        e -> assertThat(e.timeout()).isEqualTo(Duration.ofMillis(300)));
        Pids.assertGoneWithin(Pids.await(pidFile, Duration.ofSeconds(5)), GONE_WITHIN);
    }

    @Test
    void eachWaitForTheNextStreamEventIsBoundedByTheTimeout() throws Exception {
        Path pidFile = tmp.resolve("pid");
        try (ExecStream events = client.process()
                .exec(
                        ExecOptions.shell(Pids.recordingPid(pidFile, "echo started; exec sleep 60")),
                        Duration.ofMillis(500))) {
            Iterator<ExecEvent> it = events.iterator();
            assertThat(it.next()).isInstanceOf(ExecEvent.Stdout.class);

            assertThatThrownBy(it::hasNext)
                    .isInstanceOfSatisfying(
                            SandboxTimeoutException.class,
                            e -> assertThat(e.timeout()).isEqualTo(Duration.ofMillis(500)));
            Pids.assertGoneWithin(Pids.await(pidFile, Duration.ofSeconds(5)), GONE_WITHIN);
            assertThat(it.hasNext()).isFalse();
        }
    }

    @Test
    void slowOutputWithinTheTimeoutIsNotATimeout() {
        List<ExecEvent> events = new ArrayList<>();
        try (ExecStream stream = client.process()
                .exec(ExecOptions.shell("for i in 1 2 3; do echo $i; sleep 0.2; done"), Duration.ofMillis(1500))) {
            stream.forEach(events::add);
        }
        assertThat(events).hasSize(4).last().isInstanceOf(ExecEvent.Exit.class);
    }

    @Test
    void interruptDuringRunKillsTheCommandAndRestoresTheFlag() throws Exception {
        Path pidFile = tmp.resolve("pid");
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean();
        Thread worker = new Thread(() -> {
            try {
                client.process().run(ExecOptions.shell(Pids.recordingPid(pidFile, "exec sleep 60")));
            } catch (Throwable t) {
                thrown.set(t);
            }
            flagAfter.set(Thread.currentThread().isInterrupted());
        });
        worker.start();
        long pid = Pids.await(pidFile, Duration.ofSeconds(5));

        worker.interrupt();
        worker.join(5_000);

        assertThat(worker.isAlive()).isFalse();
        assertThat(thrown.get())
                .isInstanceOf(SandboxInterruptedException.class)
                .hasCauseInstanceOf(InterruptedException.class);
        assertThat(flagAfter).isTrue();
        Pids.assertGoneWithin(pid, GONE_WITHIN);
    }

    @Test
    void interruptDuringStreamIterationKillsTheCommandAndRestoresTheFlag() throws Exception {
        Path pidFile = tmp.resolve("pid");
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean();
        Thread worker = new Thread(() -> {
            try (ExecStream events =
                    client.process().exec(ExecOptions.shell(Pids.recordingPid(pidFile, "exec sleep 60")))) {
                events.forEach(e -> {});
            } catch (Throwable t) {
                thrown.set(t);
            }
            flagAfter.set(Thread.currentThread().isInterrupted());
        });
        worker.start();
        long pid = Pids.await(pidFile, Duration.ofSeconds(5));

        worker.interrupt();
        worker.join(5_000);

        assertThat(thrown.get()).isInstanceOf(SandboxInterruptedException.class);
        assertThat(flagAfter).isTrue();
        Pids.assertGoneWithin(pid, GONE_WITHIN);
    }

    @Test
    void anAlreadyInterruptedThreadFailsWithoutStartingAnything() throws Exception {
        Path marker = tmp.resolve("ran");
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> client.process().run(ExecOptions.shell("touch '" + marker + "'")))
                    .isInstanceOf(SandboxInterruptedException.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        Thread.sleep(200);
        assertThat(marker).doesNotExist();
    }

    @Test
    void blockingOnANonBlockingThreadFailsAtOnce() {
        assertThatThrownBy(() -> Mono.fromCallable(() -> client.process().run(ExecOptions.of("true")))
                        .subscribeOn(Schedulers.parallel())
                        .block(Duration.ofSeconds(10)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ProcessClient.run")
                .hasMessageContaining("parallel");
        assertThatThrownBy(() -> Mono.fromCallable(() -> client.ping())
                        .subscribeOn(Schedulers.parallel())
                        .block(Duration.ofSeconds(10)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("SandboxClient.ping");
        assertThatThrownBy(() -> Mono.fromCallable(() -> client.process().exec(ExecOptions.of("true")))
                        .subscribeOn(Schedulers.parallel())
                        .block(Duration.ofSeconds(10)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ProcessClient.exec");
        assertThatThrownBy(() -> Mono.fromCallable(() -> client.process().start(ExecOptions.of("true")))
                        .subscribeOn(Schedulers.parallel())
                        .block(Duration.ofSeconds(10)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("ProcessClient.start");
        assertThatThrownBy(() -> Mono.fromCallable(() -> client.files().stat("."))
                        .subscribeOn(Schedulers.parallel())
                        .block(Duration.ofSeconds(10)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("FileClient.stat");
        assertThatThrownBy(() -> Mono.fromCallable(() -> client.files().read("x"))
                        .subscribeOn(Schedulers.parallel())
                        .block(Duration.ofSeconds(10)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("FileClient.read");
    }

    @Test
    void iteratingAStreamOnANonBlockingThreadFailsAtOnce() {
        try (ExecStream events = client.process().exec(ExecOptions.of("sleep", "5"))) {
            assertThatThrownBy(() -> Mono.fromCallable(() -> events.iterator().hasNext())
                            .subscribeOn(Schedulers.parallel())
                            .block(Duration.ofSeconds(10)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("ExecStream");
        }
    }

    @Test
    void bulkOutputOnBothStreamsAtOnceIsDeliveredCompletely() {
        String lineA = "a".repeat(100);
        String lineB = "b".repeat(100);
        long[] bytes = new long[2];
        long[] lines = new long[2];
        long[] wrong = new long[2];
        ExecEvent.Exit exit = null;
        String command = "head -c 20000000 /dev/zero | tr '\\0' a | fold -w 100 &"
                + " head -c 20000000 /dev/zero | tr '\\0' b | fold -w 100 >&2; wait";
        try (ExecStream events = client.process().exec(ExecOptions.shell(command))) {
            for (ExecEvent event : events) {
                switch (event) {
                    case ExecEvent.Stdout out -> {
                        bytes[0] += out.text().length() + 1;
                        lines[0]++;
                        wrong[0] += out.text().equals(lineA) ? 0 : 1;
                    }
                    case ExecEvent.Stderr err -> {
                        bytes[1] += err.text().length() + 1;
                        lines[1]++;
                        wrong[1] += err.text().equals(lineB) ? 0 : 1;
                    }
                    case ExecEvent.Chunk c -> throw new AssertionError("byte output was not asked for: " + c);
                    case ExecEvent.Exit e -> exit = e;
                }
            }
        }

        assertThat(exit).isNotNull();
        assertThat(exit.code()).isZero();
        // 20,000,000 characters folded into 200,000 lines of 100, each with its newline
        assertThat(bytes).containsExactly(20_200_000L, 20_200_000L);
        assertThat(lines).containsExactly(200_000L, 200_000L);
        assertThat(wrong).containsExactly(0L, 0L);
    }

    @Test
    void useAfterCloseIsASessionClosedException() {
        client.close();
        client.close(); // idempotent

        assertThatThrownBy(() -> client.process().run(ExecOptions.of("true")))
                .isInstanceOf(SessionClosedException.class);
        assertThatThrownBy(() -> client.process().exec(ExecOptions.of("true")))
                .isInstanceOf(SessionClosedException.class);
        assertThatThrownBy(() -> client.ping()).isInstanceOf(SessionClosedException.class);
        assertThatThrownBy(() -> client.process().start(ExecOptions.of("true")))
                .isInstanceOf(SessionClosedException.class);
        assertThatThrownBy(() -> client.process().processes()).isInstanceOf(SessionClosedException.class);
        assertThatThrownBy(() -> client.files().list(".")).isInstanceOf(SessionClosedException.class);
        assertThatThrownBy(() -> client.files().upload(tmp, "x")).isInstanceOf(SessionClosedException.class);
        assertThatThrownBy(() -> client.setLifetime(Duration.ofMinutes(1))).isInstanceOf(SessionClosedException.class);
    }

    @Test
    void sdkErrorsAreRethrownUnchanged() {
        assertThatThrownBy(() -> client.process().run(ExecOptions.of("no-such-program-for-sure")))
                .isExactlyInstanceOf(ProcessLaunchException.class)
                .hasMessageContaining("no-such-program-for-sure");
        assertThatThrownBy(() -> client.process().run(ExecOptions.of("ls").withCwd("relative")))
                .isExactlyInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("cwd");
        try (ExecStream events = client.process().exec(ExecOptions.of("no-such-program-for-sure"))) {
            assertThatThrownBy(() -> events.iterator().hasNext()).isExactlyInstanceOf(ProcessLaunchException.class);
        }
    }

    @Test
    void commandTimeoutIsAnExitCodeNotAnException() {
        ExecResult result = client.process().run(ExecOptions.of("sleep", "5").withTimeout(Duration.ofMillis(300)));

        assertThat(result.exitCode()).isEqualTo(124);
        assertThat(result.timedOut()).isTrue();
    }

    @Test
    void attachByIdFindsAnExistingSessionAndLeavesItRunning() {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            String sessionId;
            String processId;
            try (SandboxClient first = SandboxClient.create(provider, SessionOptions.defaults())) {
                sessionId = first.sessionId();
                try (SandboxClient second = SandboxClient.attach(provider, sessionId)) {
                    processId = second.process()
                            .start(ExecOptions.shell("echo from the second client"))
                            .id();
                }
                // the second client released its handle only: the session and its process are still there
                try (SandboxClient third = SandboxClient.attach(provider, sessionId);
                        ProcessOutput output =
                                third.process().process(processId).output(0, 0)) {
                    assertThat(output.iterator().next())
                            .isEqualTo(new ExecEvent.Stdout("from the second client", 0, false, 23));
                }
            }
            assertThatThrownBy(() -> SandboxClient.attach(provider, sessionId))
                    .isInstanceOf(dev.sandbox.SessionNotFoundException.class)
                    .hasMessageContaining(sessionId);
        }
    }

    @Test
    void createDestroysTheSessionButLeavesTheProviderOpen() {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            String id;
            try (SandboxClient created =
                    SandboxClient.create(provider, SessionOptions.defaults().withEnv("GREETING", "hi"))) {
                id = created.sessionId();
                assertThat(created.process()
                                .run(ExecOptions.shell("echo $GREETING"))
                                .stdout())
                        .isEqualTo("hi\n");
            }
            assertThat(provider.list(java.util.Map.of())
                            .map(info -> info.id())
                            .collectList()
                            .block())
                    .doesNotContain(id);
            try (SandboxClient another = SandboxClient.create(provider, SessionOptions.defaults())) {
                assertThat(another.ping().status()).isEqualTo("running");
            }
        }
    }

    @Test
    void attachClosesOnlyTheHandle() {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            SandboxSession session = provider.create(SessionOptions.defaults()).block(Duration.ofSeconds(10));
            try (SandboxClient attached = SandboxClient.attach(session)) {
                assertThat(attached.process().run(ExecOptions.of("true")).exitCode())
                        .isZero();
            }
            assertThatThrownBy(() -> session.ping().block(Duration.ofSeconds(5)))
                    .isInstanceOf(SessionClosedException.class);
            SandboxSession again = provider.attach(session.id()).block(Duration.ofSeconds(5));
            try (SandboxClient reattached = SandboxClient.attach(again)) {
                assertThat(reattached.ping().status()).isEqualTo("running");
            }
        }
    }

    @Test
    void localCloseClosesTheProviderItOwns() throws Exception {
        SandboxClient local = SandboxClient.local();
        CompletableFuture<Long> pid = new CompletableFuture<>();
        try (ExecStream events = local.process().exec(ExecOptions.shell("echo $$; exec sleep 60"))) {
            ExecEvent first = events.iterator().next();
            pid.complete(Long.parseLong(((ExecEvent.Stdout) first).text()));
            local.close();
            Pids.assertGoneWithin(pid.join(), GONE_WITHIN);
        }
        assertThatThrownBy(local::ping).isInstanceOf(SessionClosedException.class);
    }

    @Test
    void invalidSettingsAreRejected() {
        assertThatThrownBy(() -> SandboxClient.builder().defaultTimeout(Duration.ZERO))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("defaultTimeout");
        assertThatThrownBy(() -> SandboxClient.builder().streamPrefetch(0))
                .isInstanceOf(InvalidArgumentException.class);
        assertThatThrownBy(() -> client.process().run(ExecOptions.of("true"), Duration.ofSeconds(-1)))
                .isInstanceOf(InvalidArgumentException.class);
    }
}
