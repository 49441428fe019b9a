package dev.sandbox.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.WriteOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The files API of a local session under attack from inside the session: paths swapped for symbolic links between
 * check and use, and hard links to files outside the root.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocalConfinementTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String OUTSIDE = "OUTSIDE-SECRET";

    private LocalSandboxProvider provider;

    @BeforeAll
    void start() {
        provider = LocalSandboxProvider.create();
    }

    @AfterAll
    void stop() {
        provider.close();
    }

    private static Path workdir(SandboxSession s) {
        return Path.of(s.files().stat(".").block(WAIT).path());
    }

    /** Swaps a directory and a file of the root for symbolic links to the outside, as fast as it can. */
    private static Thread swapper(Path root, Path outside, AtomicBoolean running, AtomicInteger swaps) {
        return Thread.ofPlatform().daemon().start(() -> {
            Path dir = root.resolve("d");
            Path dirAside = root.resolve("d.real");
            Path file = dir.resolve("f");
            Path fileAside = dir.resolve("f.real");
            while (running.get()) {
                try {
                    // the file's last component becomes a link out, then the file comes back
                    Files.move(file, fileAside, StandardCopyOption.ATOMIC_MOVE);
                    Files.createSymbolicLink(file, outside.resolve("f"));
                    Files.move(fileAside, file, StandardCopyOption.ATOMIC_MOVE); // replaces the link
                    // the directory becomes a link out, then comes back
                    Files.move(dir, dirAside, StandardCopyOption.ATOMIC_MOVE);
                    Files.createSymbolicLink(dir, outside);
                    Files.delete(dir);
                    Files.move(dirAside, dir, StandardCopyOption.ATOMIC_MOVE);
                    swaps.incrementAndGet();
                } catch (IOException e) {
                    throw new IllegalStateException("the swapper lost its files", e);
                }
            }
        });
    }

    /**
     * Swaps directory {@code d} of the root for a symbolic link to the outside and back, as fast as it can; when an
     * upload made {@code d} again in the gap, that copy is removed and the swapping goes on.
     */
    private static Thread dirSwapper(Path root, Path outside, AtomicBoolean running, AtomicInteger swaps) {
        return Thread.ofPlatform().daemon().start(() -> {
            Path dir = root.resolve("d");
            Path aside = root.resolve("d.real");
            while (running.get()) {
                try {
                    Files.move(dir, aside, StandardCopyOption.ATOMIC_MOVE);
                    Files.createSymbolicLink(dir, outside);
                    Files.delete(dir);
                    Files.move(aside, dir, StandardCopyOption.ATOMIC_MOVE);
                    swaps.incrementAndGet();
                } catch (IOException e) {
                    // an upload made d in the gap (and may still be writing into it): remove it until d.real fits
                    for (int k = 0; Files.exists(aside) && k < 10_000; k++) {
                        try (Stream<Path> made = Files.walk(dir)) { // not following links
                            made.sorted(java.util.Comparator.reverseOrder())
                                    .forEach(p -> p.toFile().delete());
                            Files.move(aside, dir, StandardCopyOption.ATOMIC_MOVE);
                        } catch (IOException | java.io.UncheckedIOException again) {
                            // raced again: next round
                        }
                    }
                    if (Files.exists(aside)) {
                        throw new IllegalStateException("the swapper lost its directory", e);
                    }
                }
            }
        });
    }

    @Test
    void symlinkSwapsBetweenCheckAndUseNeverReachOutsideTheRoot(@TempDir Path outside) throws Exception {
        Files.writeString(outside.resolve("f"), OUTSIDE);
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            Path root = workdir(s);
            Files.createDirectory(root.resolve("d"));
            Files.writeString(root.resolve("d/f"), "inside");
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicInteger swaps = new AtomicInteger();
            Thread racer = swapper(root, outside, running, swaps);
            int readEscapes = 0;
            int reads = 0;
            int writes = 0;
            // the operations go on until the swapper has swapped often enough among them: how fast it swaps next to
            // them depends on the scheduling (on two busy cores it may get a fifth of what it gets alone)
            long deadline = System.nanoTime() + WAIT.toNanos();
            try {
                for (int i = 0; i < 400 || (swaps.get() <= 50 && System.nanoTime() < deadline); i++) {
                    byte[] got = s.files()
                            .readAllBytes(i % 2 == 0 ? "d/f" : root + "/d/f", 1024)
                            .onErrorResume(e -> Mono.empty())
                            .block(WAIT);
                    if (got != null) {
                        reads++;
                        if (new String(got, StandardCharsets.UTF_8).equals(OUTSIDE)) {
                            readEscapes++;
                        }
                    }
                    String streamed = s.files()
                            .read("d/f")
                            .map(b -> StandardCharsets.UTF_8.decode(b).toString())
                            .reduce("", String::concat)
                            .onErrorResume(e -> Mono.empty())
                            .block(WAIT);
                    if (OUTSIDE.equals(streamed)) {
                        readEscapes++;
                    }
                }
                int before = swaps.get();
                for (int i = 0; i < 300 || (swaps.get() - before <= 50 && System.nanoTime() < deadline); i++) {
                    // parents not created: a write that made "d" while it is swapped out would stop the swapper
                    if (s.files()
                                    .write(
                                            "d/w" + i,
                                            "planted".getBytes(StandardCharsets.UTF_8),
                                            WriteOptions.defaults().withCreateParents(false))
                                    .onErrorResume(e -> Mono.empty())
                                    .block(WAIT)
                            != null) {
                        writes++;
                    }
                }
                assertThat(racer.isAlive()).as("the swapper kept running").isTrue();
            } finally {
                running.set(false);
                racer.join(WAIT.toMillis());
            }
            List<String> outsideNow;
            try (Stream<Path> list = Files.list(outside)) {
                outsideNow = list.map(p -> p.getFileName().toString()).toList();
            }
            System.out.printf(
                    "symlink race: %d swaps, %d reads and %d writes succeeded, %d read escapes, outside has %s%n",
                    swaps.get(), reads, writes, readEscapes, outsideNow);
            assertThat(swaps.get())
                    .as("swaps during the run (the operations wait for them)")
                    .isGreaterThan(100);
            assertThat(readEscapes).as("reads that returned the outside file").isZero();
            assertThat(outsideNow).as("files written outside the root").containsExactly("f");
            assertThat(outside.resolve("f")).hasContent(OUTSIDE);
            // how many succeeded mid-swap depends on the scheduling; once the swapper stops, both work
            s.files().write("d/after", new byte[] {1}).block(WAIT);
            assertThat(new String(s.files().readAllBytes("d/f", 100).block(WAIT), StandardCharsets.UTF_8))
                    .isEqualTo("inside");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aDirectoryUploadNeverFollowsTheSessionsLinksOutOfTheRoot(@TempDir Path outside, @TempDir Path local)
            throws Exception {
        Files.writeString(outside.resolve("f"), OUTSIDE);
        Path tree = Files.createDirectories(local.resolve("tree/d"));
        for (int i = 0; i < 5; i++) {
            Files.writeString(tree.resolve("u" + i + ".txt"), "planted");
        }
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            Path root = workdir(s);
            // planted links, absolute and climbing, where the tree's directory goes
            Files.createDirectories(root.resolve("abs"));
            Files.createSymbolicLink(root.resolve("abs/d"), outside);
            Files.createDirectories(root.resolve("up/rel"));
            Files.createSymbolicLink(root.resolve("up/rel/d"), Path.of("../../../../../../../../" + outside));
            for (String target : List.of("abs", "up/rel")) {
                StepVerifier.create(s.files().upload(local.resolve("tree"), target))
                        .expectError(dev.sandbox.InvalidArgumentException.class)
                        .verify(WAIT);
            }
            // and a link swapped in and out while trees are uploaded, as fast as the session can
            Files.createDirectory(root.resolve("d"));
            Files.writeString(root.resolve("d/f"), "inside");
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicInteger swaps = new AtomicInteger();
            Thread racer = dirSwapper(root, outside, running, swaps);
            long deadline = System.nanoTime() + WAIT.toNanos(); // uploads go on until the swapper swapped among them
            try {
                for (int i = 0; i < 100 || (swaps.get() <= 20 && System.nanoTime() < deadline); i++) {
                    s.files()
                            .upload(local.resolve("tree"), ".")
                            .onErrorResume(e -> Mono.empty())
                            .block(WAIT);
                }
                assertThat(racer.isAlive()).as("the swapper kept running").isTrue();
            } finally {
                running.set(false);
                racer.join(WAIT.toMillis());
            }
            assertThat(swaps.get()).as("swaps during the uploads").isGreaterThan(20);
            try (Stream<Path> list = Files.list(outside)) {
                assertThat(list.map(p -> p.getFileName().toString()))
                        .as("files written outside the root")
                        .containsExactly("f");
            }
            assertThat(outside.resolve("f")).hasContent(OUTSIDE);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void hardLinksToFilesOutsideTheRootAreRefused(@TempDir Path outside) throws Exception {
        Path secret = Files.writeString(outside.resolve("secret.txt"), OUTSIDE);
        SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            Path root = workdir(s);
            // what a sandboxed command could do with `ln /path/outside ./x`
            Files.createLink(root.resolve("x"), secret);
            expectRefused(s.files().readAllBytes("x", 1024), "x");
            expectRefused(s.files().read("x").then(), "x");
            expectRefused(s.files().download("x", outside.resolve("copy")), "x");
            assertThat(outside.resolve("copy")).doesNotExist();
            // a write replaces the directory entry: the outside file keeps its content
            s.files().write("x", "replaced".getBytes(StandardCharsets.UTF_8)).block(WAIT);
            assertThat(secret).hasContent(OUTSIDE);
            assertThat(new String(s.files().readAllBytes("x", 100).block(WAIT), StandardCharsets.UTF_8))
                    .isEqualTo("replaced");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    private static void expectRefused(Mono<?> op, String path) {
        StepVerifier.create(op)
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(FileOperationException.class);
                    FileOperationException f = (FileOperationException) e;
                    assertThat(f.path()).isEqualTo(path);
                    assertThat(f.reason()).isEqualTo(FileOperationException.Reason.PERMISSION_DENIED);
                    assertThat(f).hasMessageContaining(path).hasMessageContaining("hard link");
                })
                .verify(WAIT);
    }
}
