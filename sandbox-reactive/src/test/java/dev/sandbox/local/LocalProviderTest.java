package dev.sandbox.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import reactor.blockhound.BlockingOperationError;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** Local-provider behaviour beyond the conformance kit: resource bounds, workdirs, the launcher. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocalProviderTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final long MIB = 1024 * 1024;

    private LocalSandboxProvider provider;

    @BeforeAll
    void start() {
        provider = LocalSandboxProvider.create();
    }

    @AfterAll
    void stop() {
        provider.close();
    }

    private SandboxSession session() {
        return provider.create(SessionOptions.defaults()).block(WAIT);
    }

    @Test
    void destroyKillsWhatItsCommandsLeftRunningInTheBackground() throws Exception {
        SandboxSession s = session();
        // a shell that leaves a process behind it and exits: no command of the session runs any more
        s.run(ExecOptions.shell("sleep 300 </dev/null >/dev/null 2>&1 & echo $! > bg.pid"))
                .block(WAIT);
        long pid =
                Long.parseLong(new String(s.files().readAllBytes("bg.pid", 64).block(WAIT)).trim());
        ProcessHandle left = ProcessHandle.of(pid).orElseThrow();
        assertThat(left.isAlive()).isTrue();
        s.destroy().block(WAIT);
        left.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(left.isAlive())
                .as("the background process of a destroyed session")
                .isFalse();
    }

    @Test
    void usesTheNativeLauncherOnLinux() {
        assertThat(provider.processLauncher()).isEqualTo("native-epoll");
        SandboxSession s = session();
        assertThat(s.ping().block(WAIT).processLauncher()).isEqualTo("native-epoll");
        s.destroy().block(WAIT);
    }

    @Test
    void blockHoundGuardsNonBlockingThreads() {
        // proves the harness would catch a blocking call on a Reactor non-blocking thread
        assertThatThrownBy(() -> Mono.delay(Duration.ofMillis(1))
                        .doOnNext(x -> {
                            try {
                                Thread.sleep(5);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        })
                        .block(WAIT))
                .hasRootCauseInstanceOf(BlockingOperationError.class);
    }

    @Test
    void slowSubscriberKeepsHeapBoundedAndTheWriterBlocked() throws Exception {
        SandboxSession s = session();
        long baseline = usedHeapAfterGc();
        AtomicLong pid = new AtomicLong();
        AtomicLong lines = new AtomicLong();
        // yes writes without end (far more than 1 GiB) unless the pipe is full
        Disposable subscription = s.exec(
                        ExecOptions.shell("echo $$ >&2; exec yes 0123456789012345678901234567890123456789"))
                .doOnNext(e -> {
                    if (e instanceof ExecEvent.Stderr err) {
                        pid.set(Long.parseLong(err.text()));
                    } else {
                        lines.incrementAndGet();
                    }
                })
                .limitRate(1)
                .delayElements(Duration.ofMillis(1))
                .subscribe();
        try {
            Thread.sleep(5000);
            assertThat(pid.get()).isPositive();
            long held = usedHeapAfterGc();
            String wchan = Files.readString(Path.of("/proc/" + pid.get() + "/wchan"));
            long written = writtenBytes(pid.get());
            System.out.printf(
                    "slow subscriber: heap growth %.1f MiB, %d lines delivered, writer wrote %.1f MiB, wchan %s%n",
                    (held - baseline) / (double) MIB, lines.get(), written / (double) MIB, wchan);
            assertThat(held - baseline).as("heap growth").isLessThan(32 * MIB);
            assertThat(wchan).as("the writer waits in write()").contains("pipe_write");
            assertThat(written).as("bytes the writer got out").isLessThan(16 * MIB);
        } finally {
            subscription.dispose();
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        while (isAlive(pid.get()) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(isAlive(pid.get())).as("writer killed within 1 s of cancel").isFalse();
        s.destroy().block(WAIT);
    }

    @Test
    void fiveHundredConcurrentStreamsStayWithin64PlatformThreads() throws Exception {
        SandboxSession s = session();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        AtomicInteger peakThreads = new AtomicInteger(threads.getThreadCount());
        AtomicInteger live = new AtomicInteger();
        AtomicInteger peakLive = new AtomicInteger();
        Thread sampler = Thread.ofPlatform().daemon().start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                peakThreads.accumulateAndGet(threads.getThreadCount(), Math::max);
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        // every command waits on its stdin until all 500 are running, so they surely overlap
        Sinks.One<ByteBuffer> gate = Sinks.one();
        Thread opener = Thread.ofPlatform().daemon().start(() -> {
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (live.get() < 500 && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
            gate.tryEmitValue(ByteBuffer.wrap("go\n".getBytes(StandardCharsets.UTF_8)));
        });
        try {
            List<Long> counts = Flux.range(0, 500)
                    .flatMap(
                            i -> s.exec(ExecOptions.shell("echo start; read go; seq 1 10000")
                                            .withStdin(gate.asMono().map(ByteBuffer::duplicate)))
                                    .doOnNext(e -> {
                                        if (e instanceof ExecEvent.Stdout out
                                                && out.text().equals("start")) {
                                            peakLive.accumulateAndGet(live.incrementAndGet(), Math::max);
                                        } else if (e instanceof ExecEvent.Exit exit) {
                                            live.decrementAndGet();
                                            assertThat(exit.code()).isZero();
                                        }
                                    })
                                    // a line ends with one whole event; a stall of seq mid-line (500 of them share two
                                    // cores) may deliver its first part earlier, flagged partial
                                    .filter(e -> e instanceof ExecEvent.Stdout out && !out.partial())
                                    .count(),
                            500)
                    .collectList()
                    .block(Duration.ofSeconds(180));
            assertThat(counts).hasSize(500).allMatch(c -> c == 10_001);
        } finally {
            sampler.interrupt();
            sampler.join();
            opener.interrupt();
        }
        System.out.printf(
                "500 streams: peak %d concurrently running, peak %d live platform threads%n",
                peakLive.get(), peakThreads.get());
        assertThat(peakLive.get()).as("streams running at once").isEqualTo(500);
        assertThat(peakThreads.get()).as("live platform threads").isLessThanOrEqualTo(64);
        s.destroy().block(WAIT);
    }

    @Test
    void destroyKillsProcessesAndDeletesTheWorkdir() throws Exception {
        SandboxSession s = session();
        String workdir = s.run(ExecOptions.shell("pwd; touch made-here"))
                .block(WAIT)
                .stdout()
                .trim();
        assertThat(Path.of(workdir, "made-here")).exists();
        AtomicReference<String> pid = new AtomicReference<>();
        Disposable running = s.exec(ExecOptions.shell("echo $$; exec sleep 60"))
                .doOnNext(e -> {
                    if (e instanceof ExecEvent.Stdout out) {
                        pid.set(out.text());
                    }
                })
                .subscribe();
        while (pid.get() == null) {
            Thread.sleep(10);
        }
        s.destroy().block(WAIT);
        s.destroy().block(WAIT); // idempotent
        assertThat(Path.of(workdir)).doesNotExist();
        long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        while (isAlive(Long.parseLong(pid.get())) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(isAlive(Long.parseLong(pid.get()))).isFalse();
        running.dispose();
    }

    @Test
    void aGivenWorkdirIsUsedAndKept(@TempDir Path dir) throws IOException {
        SandboxSession s = provider.create(SessionOptions.defaults().withWorkdir(dir.toString()))
                .block(WAIT);
        assertThat(s.run(ExecOptions.shell("pwd; echo hi > file")).block(WAIT).stdout())
                .isEqualTo(dir.toRealPath() + "\n");
        s.destroy().block(WAIT);
        assertThat(dir.resolve("file")).hasContent("hi");
    }

    @Test
    void closingTheProviderDestroysItsSessions() {
        LocalSandboxProvider own = LocalSandboxProvider.create();
        SandboxSession s = own.create(SessionOptions.defaults()).block(WAIT);
        String workdir = s.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim();
        own.close();
        assertThat(Path.of(workdir)).doesNotExist();
        assertThatThrownBy(() -> s.run(ExecOptions.of("true")).block(WAIT))
                .isInstanceOf(dev.sandbox.SessionClosedException.class);
    }

    private static boolean isAlive(long pid) {
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isEmpty()) {
            return false;
        }
        try {
            // a zombie waiting for a slow pid 1 is dead for our purposes
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            return !stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
        } catch (IOException e) {
            return false;
        }
    }

    private static long writtenBytes(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/io"))) {
            if (line.startsWith("wchar:")) {
                return Long.parseLong(line.substring(6).trim());
            }
        }
        throw new IllegalStateException("no wchar in /proc/" + pid + "/io");
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return memory.getHeapMemoryUsage().getUsed();
    }
}
