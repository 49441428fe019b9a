package dev.sandbox.implementation.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.implementation.files.LocalFileIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

/**
 * The session root's resolution, with {@code openat2} and with the component-by-component fallback (forced here, as
 * on a kernel before 5.6): the same rules for links, and no escape under a racing swap.
 */
class SessionRootTest {
    private static final String OUTSIDE = "OUTSIDE-SECRET";

    @AfterEach
    void restore() {
        SessionRoot.forceFallback = false;
    }

    private static String read(SessionRoot root, String path) throws IOException {
        try (FileChannel ch = root.openRead("path", path, root.relative("path", path))) {
            ByteBuffer buf = ByteBuffer.allocate(1024);
            ch.read(buf);
            return new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8);
        }
    }

    @ParameterizedTest(name = "fallback={0}")
    @ValueSource(booleans = {false, true})
    void linksAreFollowedOnlyWhileTheyStayBeneathTheRoot(boolean fallback, @TempDir Path tmp) throws IOException {
        System.out.println("openat2 available: " + SessionRoot.OPENAT2);
        SessionRoot.forceFallback = fallback;
        Path dir = Files.createDirectory(tmp.resolve("root")).toRealPath();
        Path outside = Files.writeString(tmp.resolve("secret.txt"), OUTSIDE);
        Files.writeString(dir.resolve("a.txt"), "in");
        Files.createDirectory(dir.resolve("sub"));
        Files.createSymbolicLink(dir.resolve("alias"), Path.of("a.txt"));
        Files.createSymbolicLink(dir.resolve("sub/up"), Path.of("../a.txt"));
        Files.createSymbolicLink(dir.resolve("sub/dirlink"), Path.of(".."));
        Files.createSymbolicLink(dir.resolve("sub/out"), Path.of("../../secret.txt"));
        Files.createSymbolicLink(dir.resolve("abs"), dir.resolve("a.txt"));
        Files.createSymbolicLink(dir.resolve("loop"), Path.of("loop"));
        Files.createSymbolicLink(dir.resolve("outdir"), tmp);
        Files.createSymbolicLink(dir.resolve("updir"), Path.of(".."));
        try (SessionRoot root = new SessionRoot(dir)) {
            assertThat(read(root, "a.txt")).isEqualTo("in");
            assertThat(read(root, "alias")).isEqualTo("in");
            assertThat(read(root, "sub/up")).isEqualTo("in");
            assertThat(read(root, "sub/dirlink/sub/dirlink/a.txt")).isEqualTo("in");
            assertThat(read(root, dir + "/sub/../a.txt")).isEqualTo("in");
            for (String escaping : List.of("sub/out", "abs", "../secret.txt", outside.toString())) {
                assertThatThrownBy(() -> read(root, escaping))
                        .as(escaping)
                        .isInstanceOf(InvalidArgumentException.class)
                        .hasMessageContaining("outside the session root");
            }
            assertThatThrownBy(() -> read(root, "loop"))
                    .isInstanceOf(FileOperationException.class)
                    .hasMessageContaining("loop");
            assertThatThrownBy(() -> read(root, "sub"))
                    .isInstanceOf(FileOperationException.class)
                    .extracting(e -> ((FileOperationException) e).reason())
                    .isEqualTo(FileOperationException.Reason.IS_A_DIRECTORY);
            assertThatThrownBy(() -> read(root, "a.txt/x"))
                    .isInstanceOf(FileOperationException.class)
                    .extracting(e -> ((FileOperationException) e).reason())
                    .isEqualTo(FileOperationException.Reason.NOT_A_DIRECTORY);
            assertThatThrownBy(() -> read(root, "nope"))
                    .isInstanceOf(FileOperationException.class)
                    .extracting(e -> ((FileOperationException) e).reason())
                    .isEqualTo(FileOperationException.Reason.NOT_FOUND);
            // writing through a directory link that points out is refused too
            assertThatThrownBy(() -> root.destination("path", "outdir/x", root.relative("path", "outdir/x")))
                    .isInstanceOf(InvalidArgumentException.class);
            assertThatThrownBy(() -> root.destination("path", "updir/x", root.relative("path", "updir/x")))
                    .isInstanceOf(InvalidArgumentException.class);
        }
    }

    @ParameterizedTest(name = "fallback={0}")
    @ValueSource(booleans = {false, true})
    void swapsRacingReadsAndWritesNeverReachOutside(boolean fallback, @TempDir Path tmp) throws Exception {
        SessionRoot.forceFallback = fallback;
        Path dir = Files.createDirectory(tmp.resolve("root")).toRealPath();
        Path outside = Files.createDirectory(tmp.resolve("outside"));
        Files.writeString(outside.resolve("f"), OUTSIDE);
        Files.createDirectory(dir.resolve("d"));
        Files.writeString(dir.resolve("d/f"), "inside");
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger swaps = new AtomicInteger();
        Thread racer = Thread.ofPlatform().daemon().start(() -> {
            Path d = dir.resolve("d");
            Path aside = dir.resolve("d.real");
            while (running.get()) {
                try {
                    Files.move(d.resolve("f"), d.resolve("f.real"), StandardCopyOption.ATOMIC_MOVE);
                    Files.createSymbolicLink(d.resolve("f"), outside.resolve("f"));
                    Files.move(d.resolve("f.real"), d.resolve("f"), StandardCopyOption.ATOMIC_MOVE);
                    Files.move(d, aside, StandardCopyOption.ATOMIC_MOVE);
                    Files.createSymbolicLink(d, outside);
                    Files.delete(d);
                    Files.move(aside, d, StandardCopyOption.ATOMIC_MOVE);
                    swaps.incrementAndGet();
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        });
        int escapes = 0;
        int reads = 0;
        int writes = 0;
        // the operations go on until the swapper has swapped among them, however the two cores are shared
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        try (SessionRoot root = new SessionRoot(dir)) {
            for (int i = 0; i < 400 || (swaps.get() <= 50 && System.nanoTime() < deadline); i++) {
                try {
                    String got = read(root, "d/f");
                    reads++;
                    if (got.equals(OUTSIDE)) {
                        escapes++;
                    }
                } catch (InvalidArgumentException | FileOperationException expected) {
                    // refused or missing mid-swap: fine
                }
            }
            int before = swaps.get();
            for (int i = 0; i < 300 || (swaps.get() - before <= 50 && System.nanoTime() < deadline); i++) {
                String path = "d/w" + i;
                try {
                    LocalFileIo.writeAtomically(
                                    () -> root.destination("path", path, root.relative("path", path)),
                                    path,
                                    Mono.just(ByteBuffer.wrap(new byte[] {1})))
                            .block(Duration.ofSeconds(10));
                    writes++;
                } catch (InvalidArgumentException | FileOperationException expected) {
                    // refused or missing mid-swap: fine
                }
            }
            assertThat(racer.isAlive()).as("the swapper kept running").isTrue();
        } finally {
            running.set(false);
            racer.join(10_000);
        }
        List<String> outsideNow;
        try (Stream<Path> list = Files.list(outside)) {
            outsideNow = list.map(p -> p.getFileName().toString()).toList();
        }
        System.out.printf(
                "fallback=%s: %d swaps, %d reads, %d writes, %d escapes%n",
                fallback, swaps.get(), reads, writes, escapes);
        assertThat(swaps.get()).isGreaterThan(100);
        assertThat(escapes).isZero();
        assertThat(outsideNow).containsExactly("f");
        // how many succeeded mid-swap depends on the scheduling; once the swapper stops, both work
        try (SessionRoot root = new SessionRoot(dir)) {
            assertThat(read(root, "d/f")).isEqualTo("inside");
            assertThat(root.list("path", "d", "d")).extracting(f -> f.name()).contains("f");
        }
    }
}
