package dev.sandbox.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** Local files beyond the kit: a 1 GiB round trip in bounded memory, confinement to the session root. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocalFilesTest {
    private static final Duration WAIT = Duration.ofSeconds(120);
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
        Path back = dir.resolve("back.bin");
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            long baseline = liveHeapAfterGc();
            HeapWatch watch = new HeapWatch();
            watch.start();
            try {
                s.files().upload(source, "big.bin").block(WAIT);
                Files.delete(source); // keep the disk use down
                assertThat(s.files().download("big.bin", back).block(WAIT)).isEqualTo(1024 * MIB);
            } finally {
                watch.stop();
            }
            long growth = watch.peak() - baseline;
            System.out.printf("1 GiB round trip: live heap growth %.1f MiB%n", growth / (double) MIB);
            assertThat(growth).as("live heap growth during the round trip").isLessThan(32 * MIB);
            assertThat(sha256(back)).isEqualTo(HexFormat.of().formatHex(expected.digest()));
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void pathsCannotLeaveTheSessionRoot(@TempDir Path outside) throws IOException {
        Files.writeString(outside.resolve("secret.txt"), "secret");
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            s.run(ExecOptions.shell("mkdir sub; ln -s " + outside + " sub/out; ln -s /etc/hostname host"))
                    .block(WAIT);
            for (String path : new String[] {
                "../x", "sub/../../x", outside.resolve("secret.txt").toString(), "sub/out/secret.txt", "host"
            }) {
                StepVerifier.create(s.files().readAllBytes(path, 100))
                        .expectErrorSatisfies(e -> assertThat(e)
                                .isInstanceOf(InvalidArgumentException.class)
                                .hasMessageContaining(path)
                                .hasMessageContaining("outside the session root"))
                        .verify(WAIT);
            }
            StepVerifier.create(s.files().write("sub/out/planted.txt", new byte[1]))
                    .expectError(InvalidArgumentException.class)
                    .verify(WAIT);
            assertThat(outside.resolve("planted.txt")).doesNotExist();
            StepVerifier.create(s.files().remove(".", true))
                    .expectError(InvalidArgumentException.class)
                    .verify(WAIT);
            // a link that stays inside is fine, and so is removing a link that points out
            s.run(ExecOptions.shell("echo in > inside.txt; ln -s inside.txt alias"))
                    .block(WAIT);
            assertThat(new String(s.files().readAllBytes("alias", 100).block(WAIT)))
                    .isEqualTo("in\n");
            s.files().remove("sub/out").block(WAIT);
            assertThat(outside.resolve("secret.txt")).hasContent("secret");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void destroyKillsBackgroundProcesses() throws Exception {
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        BackgroundProcess p =
                s.start(ExecOptions.shell("echo $$; exec sleep 60")).block(WAIT);
        ExecEvent first = p.output(0, 0).blockFirst(WAIT);
        long pid = Long.parseLong(((ExecEvent.Stdout) first).text());
        assertThat(p.pid()).hasValue(pid);
        s.destroy().block(WAIT);
        StepVerifier.create(p.exit())
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOfSatisfying(
                                dev.sandbox.SessionClosedException.class,
                                c -> assertThat(c.reason()).isEqualTo(dev.sandbox.SessionEndReason.DESTROYED)))
                .verify(WAIT);
        assertThat(runsAndIsNoZombie(pid)).isFalse();
    }

    private static boolean runsAndIsNoZombie(long pid) {
        if (!ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            return false;
        }
        try {
            return !Files.readString(Path.of("/proc/" + pid + "/stat")).contains(") Z ");
        } catch (IOException e) {
            return false; // reaped between the two looks
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

    /** Samples the live heap while a transfer runs. */
    private static final class HeapWatch {
        private final AtomicLong peak = new AtomicLong();
        private volatile boolean running = true;
        private Thread thread;

        void start() {
            thread = Thread.ofPlatform().daemon().start(() -> {
                while (running) {
                    peak.accumulateAndGet(liveHeap(), Math::max);
                    Mono.delay(Duration.ofMillis(10)).onErrorComplete().block();
                }
            });
        }

        void stop() throws InterruptedException {
            running = false;
            thread.join();
            peak.accumulateAndGet(liveHeap(), Math::max);
        }

        long peak() {
            return peak.get();
        }
    }

    @Test
    void recursiveListsAndCreatedParentsStayInsideTheRoot(@TempDir Path outside) throws Exception {
        Files.writeString(outside.resolve("secret.txt"), "outside");
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            Path workdir =
                    Path.of(s.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim());
            Files.createDirectories(workdir.resolve("in/deeper"));
            Files.createSymbolicLink(workdir.resolve("in/out"), outside);
            List<FileInfo> all =
                    s.files().list("in", Integer.MAX_VALUE).collectList().block(WAIT);
            assertThat(all).extracting(FileInfo::name).containsExactly("deeper", "out");
            assertThat(all.get(1).type()).isEqualTo(FileInfo.Type.SYMLINK);

            // creating parents through a link that leaves the root is refused, and nothing appears outside
            StepVerifier.create(s.files().write("in/out/new/x.txt", new byte[] {1}))
                    .expectError(InvalidArgumentException.class)
                    .verify(WAIT);
            try (var entries = Files.list(outside)) {
                assertThat(entries.map(p -> p.getFileName().toString())).containsExactly("secret.txt");
            }
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aListingOverTheBoundFailsNamingThePath() throws Exception {
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            Path workdir =
                    Path.of(s.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim());
            Path many = Files.createDirectories(workdir.resolve("many/sub"));
            for (int i = 0; i < SandboxFiles.LIST_MAX_ENTRIES; i++) {
                Files.createFile(many.resolve("f" + i));
            }
            // exactly the bound: listed; one more entry (the parent's listing counts "sub" too): refused
            assertThat(s.files().list("many/sub").count().block(WAIT)).isEqualTo(SandboxFiles.LIST_MAX_ENTRIES);
            StepVerifier.create(s.files().list("many", 2))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(FileOperationException.class);
                        assertThat(((FileOperationException) e).reason())
                                .isEqualTo(FileOperationException.Reason.TOO_LARGE);
                        assertThat(((FileOperationException) e).path()).isEqualTo("many");
                    })
                    .verify(WAIT);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aListingWhosePathsAddUpPastTheBoundFailsNamingThePath() throws Exception {
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            Path workdir =
                    Path.of(s.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim());
            // few entries, long paths: 14 directories of 250-character names, then files of 250-character names
            Path deep = workdir.resolve("long");
            for (int i = 0; i < 14; i++) {
                deep = deep.resolve(("d" + i).repeat(125).substring(0, 250));
            }
            Files.createDirectories(deep);
            long perFile = deep.toString().length() + 251;
            int files = (int) (SandboxFiles.LIST_MAX_PATH_CHARS / perFile) + 1;
            for (int i = 0; i < files; i++) {
                Files.createFile(deep.resolve(String.format("%06d", i) + "f".repeat(244)));
            }
            assertThat(files).isLessThan(SandboxFiles.LIST_MAX_ENTRIES / 2);
            StepVerifier.create(s.files().list("long", Integer.MAX_VALUE))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(FileOperationException.class);
                        assertThat(((FileOperationException) e).reason())
                                .isEqualTo(FileOperationException.Reason.TOO_LARGE);
                        assertThat(((FileOperationException) e).path()).isEqualTo("long");
                    })
                    .verify(WAIT);
        } finally {
            s.destroy().block(WAIT);
        }
    }
}
