package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionOptions;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Docker files beyond the kit: a 1 GiB round trip through the archive API in bounded heap (the figures go to
 * stdout), a slow reader that throttles the archive stream, a streamed write of unknown length, typed errors for bad paths and closed sessions.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerFilesTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration TRANSFER = Duration.ofMinutes(5);
    private static final long MIB = 1024 * 1024;

    private DockerTestSupport support;
    private DockerSandboxProvider provider;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        provider = DockerSandboxProvider.create(DockerTestSupport.settings());
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    private SandboxSession session() {
        return provider.create(SessionOptions.defaults().withLabel(DockerTestSupport.RUN_LABEL, support.runId))
                .block(WAIT);
    }

    @Test
    void oneGibibyteRoundTripKeepsEveryByteInBoundedHeap(@TempDir Path dir) throws Exception {
        Path source = dir.resolve("source.bin");
        byte[] block = new byte[(int) MIB];
        new Random(7).nextBytes(block);
        MessageDigest expected = MessageDigest.getInstance("SHA-256");
        try (OutputStream out = Files.newOutputStream(source)) {
            for (int i = 0; i < 1024; i++) {
                block[i] ^= (byte) i; // no two blocks alike
                out.write(block);
                expected.update(block);
            }
        }
        block = null;
        Path back = dir.resolve("back.bin");
        SandboxSession s = session();
        try {
            long baseline = liveHeapAfterGc();
            long usedBaseline = usedHeap();
            HeapWatch watch = new HeapWatch();
            watch.start();
            long upNanos;
            long downNanos;
            try {
                long t0 = System.nanoTime();
                assertThat(s.files().upload(source, "big.bin").block(TRANSFER).size())
                        .isEqualTo(1024 * MIB);
                upNanos = System.nanoTime() - t0;
                Files.delete(source); // keep the disk use down
                long t1 = System.nanoTime();
                assertThat(s.files().download("big.bin", back).block(TRANSFER)).isEqualTo(1024 * MIB);
                downNanos = System.nanoTime() - t1;
            } finally {
                watch.stop();
            }
            long growth = watch.peak() - baseline;
            long usedGrowth = watch.usedPeak() - usedBaseline;
            System.out.printf(
                    "docker 1 GiB round trip: upload %.2f s (%.0f MiB/s), download %.2f s (%.0f MiB/s),"
                            + " round trip %.2f s (%.0f MiB/s); live heap growth %.1f MiB,"
                            + " used heap (incl. eden) peak growth %.1f MiB, max heap %d MiB%n",
                    upNanos / 1e9,
                    1024 / (upNanos / 1e9),
                    downNanos / 1e9,
                    1024 / (downNanos / 1e9),
                    (upNanos + downNanos) / 1e9,
                    2048 / ((upNanos + downNanos) / 1e9),
                    growth / (double) MIB,
                    usedGrowth / (double) MIB,
                    Runtime.getRuntime().maxMemory() / MIB);
            assertThat(growth).as("live heap growth during the round trip").isLessThan(256 * MIB);
            assertThat(sha256(back)).isEqualTo(HexFormat.of().formatHex(expected.digest()));
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void underGvisorTransfersStreamThroughExecsInBoundedHeap(@TempDir Path dir) throws Exception {
        long size = 256 * MIB;
        Path source = dir.resolve("source.bin");
        byte[] block = new byte[(int) MIB];
        new Random(11).nextBytes(block);
        try (OutputStream out = Files.newOutputStream(source)) {
            for (int i = 0; i < size / MIB; i++) {
                block[i] ^= (byte) i;
                out.write(block);
            }
        }
        Path back = dir.resolve("back.bin");
        try (DockerSandboxProvider gvisor =
                DockerSandboxProvider.create(DockerTestSupport.settings().withRuntime(DockerSettings.Runtime.RUNSC))) {
            SandboxSession s = gvisor.create(
                            SessionOptions.defaults().withLabel(DockerTestSupport.RUN_LABEL, support.runId))
                    .block(WAIT);
            try {
                long baseline = liveHeapAfterGc();
                HeapWatch watch = new HeapWatch();
                watch.start();
                long nanos;
                try {
                    long t0 = System.nanoTime();
                    s.files().upload(source, "big.bin").block(TRANSFER);
                    assertThat(s.files().download("big.bin", back).block(TRANSFER))
                            .isEqualTo(size);
                    nanos = System.nanoTime() - t0;
                } finally {
                    watch.stop();
                }
                long growth = watch.peak() - baseline;
                System.out.printf(
                        "gvisor 256 MiB round trip through exec stdin/stdout: %.2f s (%.0f MiB/s);"
                                + " live heap growth %.1f MiB%n",
                        nanos / 1e9, 2 * size / (double) MIB / (nanos / 1e9), growth / (double) MIB);
                assertThat(growth).as("live heap growth during the round trip").isLessThan(256 * MIB);
                assertThat(sha256(back)).isEqualTo(sha256(source));
            } finally {
                s.destroy().block(WAIT);
            }
        }
    }

    @Test
    void aSlowReaderThrottlesTheArchiveStream() {
        SandboxSession s = session();
        try {
            long size = 128 * MIB;
            s.run(ExecOptions.shell("head -c " + size + " /dev/zero > slow.bin"))
                    .block(WAIT);
            ByteBufAllocatorMetric metric = ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric();
            long before = metric.usedDirectMemory();
            AtomicLong delivered = new AtomicLong();
            AtomicLong peak = new AtomicLong(before);
            // about 32 KiB a piece, one piece every 5 ms at most: far slower than the daemon sends
            s.files()
                    .read("slow.bin")
                    .limitRate(1)
                    .delayElements(Duration.ofMillis(5))
                    .take(Duration.ofSeconds(3))
                    .doOnNext(b -> {
                        delivered.addAndGet(b.remaining());
                        peak.accumulateAndGet(metric.usedDirectMemory(), Math::max);
                    })
                    .blockLast(WAIT);
            System.out.printf(
                    "docker slow reader: %.1f MiB delivered in 3 s, direct memory peak growth %.1f MiB%n",
                    delivered.get() / (double) MIB, (peak.get() - before) / (double) MIB);
            assertThat(delivered.get()).isLessThan(size / 2);
            // reads that ignored demand would have queued the rest of the file by now
            assertThat(peak.get() - before).as("direct memory growth").isLessThan(32 * MIB);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aStreamedWriteOfUnknownLengthKeepsEveryByte() {
        SandboxSession s = session();
        try {
            // 64 MiB in 64 KiB pieces whose total the writer never learns up front
            Flux<ByteBuffer> content = Flux.range(0, 1024).map(i -> {
                byte[] b = new byte[64 * 1024];
                b[0] = (byte) (int) i;
                return ByteBuffer.wrap(b);
            });
            assertThat(s.files().write("streamed.bin", content).block(TRANSFER).size())
                    .isEqualTo(64 * MIB);
            assertThat(s.run(ExecOptions.shell("wc -c < streamed.bin"))
                            .block(WAIT)
                            .stdout()
                            .trim())
                    .isEqualTo(Long.toString(64 * MIB));
            // a failing source leaves neither the file nor its temporary file
            StepVerifier.create(s.files()
                            .write(
                                    "failed.bin",
                                    Flux.just(ByteBuffer.wrap(new byte[10]))
                                            .concatWith(Mono.error(new IllegalStateException("source broke")))))
                    .expectErrorMessage("source broke")
                    .verify(WAIT);
            assertThat(s.run(ExecOptions.shell("ls -a | grep -c -e '[.]tmp' -e failed.bin || true"))
                            .block(WAIT)
                            .stdout()
                            .trim())
                    .isEqualTo("0");
            assertThat(new String(s.files().readAllBytes("/etc/hostname", 100).block(WAIT), StandardCharsets.UTF_8))
                    .isNotBlank();
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void badPathsAndClosedSessionsAreTypedErrors() {
        SandboxSession s = session();
        try {
            StepVerifier.create(s.files().stat("a\0b"))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(InvalidArgumentException.class);
                        assertThat(((InvalidArgumentException) e).field()).isEqualTo("path");
                        assertThat(e).hasMessageContaining("a\\0b");
                    })
                    .verify(WAIT);
            StepVerifier.create(s.files().move("x", ""))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(InvalidArgumentException.class);
                        assertThat(((InvalidArgumentException) e).field()).isEqualTo("to");
                    })
                    .verify(WAIT);
            StepVerifier.create(s.files().remove("/", true))
                    .expectError(InvalidArgumentException.class)
                    .verify(WAIT);
            s.close().block(WAIT);
            StepVerifier.create(s.files().stat("/etc"))
                    .expectErrorSatisfies(e -> assertThat(e)
                            .isInstanceOf(SessionClosedException.class)
                            .hasMessageContaining(s.id()))
                    .verify(WAIT);
            StepVerifier.create(s.files().watch("/etc"))
                    .expectError(SessionClosedException.class)
                    .verify(WAIT);
        } finally {
            provider.attach(s.id())
                    .flatMap(SandboxSession::destroy)
                    .onErrorResume(e -> Mono.empty())
                    .block(WAIT);
        }
    }

    private static String sha256(Path file) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[1 << 16];
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    private static long liveHeapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return liveHeap();
    }

    /**
     * Heap outside the allocation area (survivor and old spaces): what survived a collection. Holding a file in
     * memory would show here; short-lived chunk buffers die in eden and do not.
     */
    private static long liveHeap() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && !pool.getName().contains("Eden")) {
                sum += pool.getUsage().getUsed();
            }
        }
        return sum;
    }

    /** All heap in use, garbage in eden included. */
    private static long usedHeap() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Samples the heap while a transfer runs. */
    private static final class HeapWatch {
        private final AtomicLong peak = new AtomicLong();
        private final AtomicLong usedPeak = new AtomicLong();
        private volatile boolean running = true;
        private Thread thread;

        void start() {
            thread = Thread.ofPlatform().daemon().start(() -> {
                while (running) {
                    sample();
                    Mono.delay(Duration.ofMillis(10)).onErrorComplete().block();
                }
            });
        }

        private void sample() {
            peak.accumulateAndGet(liveHeap(), Math::max);
            usedPeak.accumulateAndGet(usedHeap(), Math::max);
        }

        void stop() throws InterruptedException {
            running = false;
            thread.join();
            sample();
        }

        long peak() {
            return peak.get();
        }

        long usedPeak() {
            return usedPeak.get();
        }
    }

    @Test
    void aListingOverTheBoundFailsNamingThePath() {
        SandboxSession s = session();
        try {
            // a tree one entry over the bound: the agent's listing is cut off, not held whole
            ExecResult made = s.run(ExecOptions.shell("mkdir -p many/sub && cd many/sub && seq 1 "
                            + dev.sandbox.SandboxFiles.LIST_MAX_ENTRIES + " | xargs touch"))
                    .block(WAIT);
            assertThat(made.exitCode()).as(made.stderr()).isZero();
            assertThat(s.files().list("many/sub").count().block(WAIT))
                    .isEqualTo(dev.sandbox.SandboxFiles.LIST_MAX_ENTRIES);
            StepVerifier.create(s.files().list("many", 2))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(dev.sandbox.FileOperationException.class);
                        assertThat(((dev.sandbox.FileOperationException) e).reason())
                                .isEqualTo(dev.sandbox.FileOperationException.Reason.TOO_LARGE);
                        assertThat(((dev.sandbox.FileOperationException) e).path())
                                .isEqualTo("many");
                    })
                    .verify(WAIT);
            // the connection is still good
            assertThat(s.files().exists("many").block(WAIT)).isTrue();
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void ownerAndGroupNamesComeFromTheContainersFiles() {
        SandboxSession s = session();
        try {
            ExecResult made = s.run(
                            ExecOptions.shell(
                                    "mkdir -p /etc && printf 'root:x:0:0::/:/bin/sh\\nbroken\\nzed:x:1234:4321::/:/bin/sh\\n'"
                                            + " > /etc/passwd && printf 'zgrp:x:4321:\\n' > /etc/group"
                                            + " && touch owned && chown 1234:4321 owned && touch nobodys && chown 777:888 nobodys"))
                    .block(WAIT);
            assertThat(made.exitCode()).as(made.stderr()).isZero();
            dev.sandbox.FileInfo owned = s.files().stat("owned").block(WAIT);
            assertThat(owned.uid()).isEqualTo(1234);
            assertThat(owned.gid()).isEqualTo(4321);
            assertThat(owned.owner()).contains("zed");
            assertThat(owned.group()).contains("zgrp");
            dev.sandbox.FileInfo nobodys = s.files().stat("nobodys").block(WAIT);
            assertThat(nobodys.uid()).isEqualTo(777);
            assertThat(nobodys.owner()).isEmpty();
            assertThat(nobodys.group()).isEmpty();
            assertThat(s.files().list(".").collectList().block(WAIT))
                    .filteredOn(f -> f.name().equals("owned"))
                    .singleElement()
                    .satisfies(f -> assertThat(f.owner()).contains("zed"));
        } finally {
            s.destroy().block(WAIT);
        }
    }
}
