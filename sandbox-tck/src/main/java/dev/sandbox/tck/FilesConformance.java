package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.WriteOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/** The files API: streaming reads and writes, transfers, listing, errors that name the path, watch. */
public interface FilesConformance extends ConformanceBase {

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void expectFailure(Mono<?> op, FileOperationException.Reason reason, String path) {
        StepVerifier.create(op)
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(FileOperationException.class);
                    assertThat(((FileOperationException) e).reason()).isEqualTo(reason);
                    assertThat(((FileOperationException) e).path()).isEqualTo(path);
                    assertThat(e).hasMessageContaining(path);
                })
                .verify(WAIT);
    }

    /** Required: Write then read resolves relative paths against the workdir. */
    @Test
    default void writeThenReadResolvesRelativePathsAgainstTheWorkdir() {
        inSession(s -> {
            SandboxFiles files = s.files();
            FileInfo written = files.write("notes.txt", "hello files\n".getBytes(StandardCharsets.UTF_8))
                    .block(WAIT);
            assertThat(written.type()).isEqualTo(FileInfo.Type.FILE);
            assertThat(written.size()).isEqualTo(12);
            assertThat(written.name()).isEqualTo("notes.txt");
            // the command sees the same file in its working directory
            assertThat(s.run(ExecOptions.of("cat", "notes.txt")).block(WAIT).stdout())
                    .isEqualTo("hello files\n");
            String workdir = s.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim();
            // a workdir of "/" (an image without WORKDIR) gives "/notes.txt", not "//notes.txt"
            assertThat(written.path()).isEqualTo((workdir.equals("/") ? "" : workdir) + "/notes.txt");
            assertThat(text(files.readAllBytes(workdir + "/notes.txt", 1024).block(WAIT)))
                    .isEqualTo("hello files\n");
            // a streamed write from many buffers, read back in chunks
            Flux<ByteBuffer> parts = Flux.range(0, 100).map(i -> ByteBuffer.wrap(("part " + i + "\n").getBytes()));
            files.write("parts.txt", parts).block(WAIT);
            String back = files.read("parts.txt")
                    .reduce(new StringBuilder(), (sb, b) -> sb.append(StandardCharsets.UTF_8.decode(b)))
                    .block(WAIT)
                    .toString();
            assertThat(back).startsWith("part 0\npart 1\n").endsWith("part 99\n");
            assertThat(s.run(ExecOptions.shell("ls -a | grep -c '[.]tmp' || true"))
                            .block(WAIT)
                            .stdout()
                            .trim())
                    // hidden temporary files, not a /tmp directory when the workdir is the root
                    .as("no temporary files left behind")
                    .isEqualTo("0");
        });
    }

    /** Required: Directories list, stat, move and remove. */
    @Test
    default void directoriesListStatMoveAndRemove() {
        inSession(s -> {
            SandboxFiles files = s.files();
            assertThat(files.mkdir("a/b/c").block(WAIT)).isTrue();
            assertThat(files.mkdir("a/b/c").block(WAIT))
                    .as("exists already: fine, and said")
                    .isFalse();
            files.write("a/b/two.txt", new byte[2]).block(WAIT);
            files.write("a/b/one.txt", new byte[1]).block(WAIT);
            List<FileInfo> entries = files.list("a/b").collectList().block(WAIT);
            assertThat(entries).extracting(FileInfo::name).containsExactly("c", "one.txt", "two.txt");
            assertThat(entries)
                    .extracting(FileInfo::type)
                    .containsExactly(FileInfo.Type.DIRECTORY, FileInfo.Type.FILE, FileInfo.Type.FILE);

            s.run(ExecOptions.shell("chmod 750 a/b/one.txt; ln -s one.txt a/b/link"))
                    .block(WAIT);
            assertThat(files.stat("a/b/one.txt").block(WAIT).mode()).isEqualTo(0750);
            FileInfo link = files.stat("a/b/link").block(WAIT);
            assertThat(link.type()).isEqualTo(FileInfo.Type.SYMLINK);
            assertThat(link.symlinkTarget()).contains("one.txt");

            files.move("a/b/two.txt", "a/moved.txt").block(WAIT);
            assertThat(files.stat("a/moved.txt").block(WAIT).size()).isEqualTo(2);
            expectFailure(files.stat("a/b/two.txt"), FileOperationException.Reason.NOT_FOUND, "a/b/two.txt");
            expectFailure(
                    files.move("a/b/one.txt", "a/moved.txt"),
                    FileOperationException.Reason.ALREADY_EXISTS,
                    "a/moved.txt");

            expectFailure(files.remove("a/b"), FileOperationException.Reason.DIRECTORY_NOT_EMPTY, "a/b");
            files.remove("a/moved.txt").block(WAIT);
            files.remove("a", true).block(WAIT);
            expectFailure(files.stat("a"), FileOperationException.Reason.NOT_FOUND, "a");
            files.remove("a").block(WAIT); // not there: removed already
        });
    }

    /**
     * Required: {@code mkdir} says whether it made the directory ({@code false} for a directory, or a link to one,
     * that was there: E2B's {@code make_dir}), fails naming the path when something else is in the way, and of calls
     * racing for one directory exactly one gets {@code true}.
     */
    @Test
    default void mkdirSaysWhetherItMadeTheDirectory() {
        inSession(s -> {
            SandboxFiles files = s.files();
            assertThat(files.mkdir("m/n").block(WAIT))
                    .as("made, with its parent")
                    .isTrue();
            assertThat(files.mkdir("m/n").block(WAIT)).as("there already").isFalse();
            assertThat(files.mkdir("m").block(WAIT)).as("a parent made before").isFalse();
            assertThat(files.mkdir("m/n/o").block(WAIT)).isTrue();
            assertThat(s.run(ExecOptions.shell("ln -s m/n link && test -d m/n/o && echo ok"))
                            .block(WAIT)
                            .stdout())
                    .isEqualTo("ok\n");
            assertThat(files.mkdir("link").block(WAIT))
                    .as("a link to a directory, as mkdir -p")
                    .isFalse();
            assertThat(files.stat("link").block(WAIT).type()).isEqualTo(FileInfo.Type.SYMLINK);
            files.write("f", new byte[1]).block(WAIT);
            expectFailure(files.mkdir("f"), FileOperationException.Reason.ALREADY_EXISTS, "f");
            expectFailure(files.mkdir("f/x"), FileOperationException.Reason.NOT_A_DIRECTORY, "f/x");
            assertThat(files.stat("f").block(WAIT).type()).isEqualTo(FileInfo.Type.FILE);

            // eight calls at once for one directory whose parents are missing: one made it, seven found it
            for (String dir : List.of("race/a/b", "race/a/c")) {
                List<Boolean> answers = Flux.range(0, 8)
                        .flatMap(i -> files.mkdir(dir), 8)
                        .collectList()
                        .block(WAIT);
                assertThat(answers).as(dir).hasSize(8).containsOnlyOnce(true);
            }
            assertThat(files.stat("race/a/b").block(WAIT).type()).isEqualTo(FileInfo.Type.DIRECTORY);
        });
    }

    /**
     * Required: removing a path that is not there succeeds (idempotent, like {@code rm -f} and E2B's {@code
     * remove}): missing, beneath a missing directory, beneath a regular file, or removed a moment ago; a path that is
     * there but cannot be removed still fails.
     */
    @Test
    default void removingAPathThatIsNotThereSucceeds() {
        inSession(s -> {
            SandboxFiles files = s.files();
            files.remove("missing").block(WAIT);
            files.remove("missing", true).block(WAIT);
            files.remove("no/such/dir/f").block(WAIT);
            files.write("f", new byte[1]).block(WAIT);
            files.remove("f/beneath").block(WAIT);
            files.remove("f").block(WAIT);
            assertThat(files.exists("f").block(WAIT)).isFalse();
            files.remove("f").block(WAIT); // a second time, as a retry after a lost reply would
            files.write("d/x", new byte[1]).block(WAIT);
            expectFailure(files.remove("d"), FileOperationException.Reason.DIRECTORY_NOT_EMPTY, "d");
            files.remove("d", true).block(WAIT);
            files.remove("d", true).block(WAIT);
            assertThat(files.exists("d").block(WAIT)).isFalse();
        });
    }

    /** Required: Errors name the path and the reason. */
    @Test
    default void errorsNameThePathAndTheReason() {
        inSession(s -> {
            SandboxFiles files = s.files();
            expectFailure(
                    files.readAllBytes("missing.txt", 10), FileOperationException.Reason.NOT_FOUND, "missing.txt");
            expectFailure(files.read("missing.txt").then(), FileOperationException.Reason.NOT_FOUND, "missing.txt");
            files.mkdir("dir").block(WAIT);
            expectFailure(files.read("dir").then(), FileOperationException.Reason.IS_A_DIRECTORY, "dir");
            expectFailure(
                    files.write(
                            "no/such/dir/f.txt",
                            new byte[1],
                            WriteOptions.defaults().withCreateParents(false)),
                    FileOperationException.Reason.NOT_FOUND,
                    "no/such/dir/f.txt");
            files.write("big.bin", new byte[2048]).block(WAIT);
            expectFailure(files.readAllBytes("big.bin", 1024), FileOperationException.Reason.TOO_LARGE, "big.bin");
            expectFailure(files.list("big.bin").then(), FileOperationException.Reason.NOT_A_DIRECTORY, "big.bin");
        });
    }

    /**
     * Required: Upload and download keep every byte.
     *
     * @throws IOException when a host file cannot be made or read
     */
    @Test
    default void uploadAndDownloadKeepEveryByte() throws IOException {
        Path dir = Files.createTempDirectory("sandbox-kit-");
        try {
            Path source = dir.resolve("source.bin");
            byte[] block = new byte[1024 * 1024];
            new Random(42).nextBytes(block);
            try (var out = Files.newOutputStream(source)) {
                for (int i = 0; i < 8; i++) {
                    out.write(block);
                }
            }
            Path back = dir.resolve("back.bin");
            inSession(s -> {
                FileInfo up = s.files().upload(source, "copy.bin").block(WAIT);
                assertThat(up.size()).isEqualTo(8L * block.length);
                assertThat(s.run(ExecOptions.of("wc", "-c", "copy.bin"))
                                .block(WAIT)
                                .stdout())
                        .contains(Long.toString(8L * block.length));
                assertThat(s.files().download("copy.bin", back).block(WAIT)).isEqualTo(8L * block.length);
            });
            assertThat(sha256(back)).isEqualTo(sha256(source));
        } finally {
            try (var walk = Files.walk(dir)) {
                walk.sorted(java.util.Comparator.reverseOrder())
                        .forEach(p -> p.toFile().delete());
            }
        }
    }

    /**
     * Required: Replacing a file leaves the new content and no temporary files.
     *
     * @throws IOException when a host file cannot be made or read
     */
    @Test
    default void replacingAFileLeavesTheNewContentAndNoTemporaryFiles() throws IOException {
        Path dir = Files.createTempDirectory("sandbox-kit-");
        try {
            byte[] newer = new byte[3 * 1024 * 1024 + 17];
            new Random(11).nextBytes(newer);
            Path source = Files.write(dir.resolve("newer.bin"), newer);
            inSession(s -> {
                s.files().mkdir("replaced").block(WAIT);
                s.files().write("replaced/f.bin", new byte[2 * 1024 * 1024]).block(WAIT);
                FileInfo up = s.files().upload(source, "replaced/f.bin").block(WAIT);
                assertThat(up.size()).isEqualTo(newer.length);
                assertThat(s.files()
                                .readAllBytes("replaced/f.bin", Long.MAX_VALUE)
                                .block(WAIT))
                        .isEqualTo(newer);
                s.files()
                        .write("replaced/f.bin", "small".getBytes(StandardCharsets.UTF_8))
                        .block(WAIT);
                assertThat(text(s.files().readAllBytes("replaced/f.bin", 100).block(WAIT)))
                        .isEqualTo("small");
                // what a provider frees after answering (the replaced content) is gone soon after
                List<String> names = List.of();
                for (long end = System.nanoTime() + Duration.ofSeconds(10).toNanos(); System.nanoTime() < end; ) {
                    names = s.files()
                            .list("replaced")
                            .map(FileInfo::name)
                            .collectList()
                            .block(WAIT);
                    if (names.equals(List.of("f.bin"))) {
                        break;
                    }
                    sleep(100);
                }
                assertThat(names).containsExactly("f.bin");
            });
        } finally {
            try (var walk = Files.walk(dir)) {
                walk.sorted(java.util.Comparator.reverseOrder())
                        .forEach(p -> p.toFile().delete());
            }
        }
    }

    /** Required: Watch sees created, modified and deleted entries. */
    @Test
    default void watchSeesCreatedModifiedAndDeletedEntries() {
        inSession(s -> {
            s.files().mkdir("watched").block(WAIT);
            StepVerifier.create(s.files().watch("watched"))
                    .expectNextMatches(e -> e.kind() == FileEvent.Kind.READY) // live: no change is missed from now
                    // the actions run on the thread that delivered the last event: start them, don't wait
                    .then(() ->
                            s.run(ExecOptions.shell("echo x > watched/new.txt")).subscribe())
                    .expectNextMatches(
                            e -> e.kind() == FileEvent.Kind.CREATED && e.path().endsWith("/watched/new.txt"))
                    .then(() -> s.run(ExecOptions.shell("echo y >> watched/new.txt"))
                            .subscribe())
                    .expectNextMatches(e -> e.kind() == FileEvent.Kind.MODIFIED)
                    .then(() -> s.run(ExecOptions.shell("rm watched/new.txt")).subscribe())
                    // the write shows as one or more modifications before the deletion
                    .thenConsumeWhile(e -> e.kind() == FileEvent.Kind.MODIFIED)
                    .expectNextMatches(
                            e -> e.kind() == FileEvent.Kind.DELETED && e.path().endsWith("/watched/new.txt"))
                    .thenCancel()
                    .verify(WAIT);
            expectFailure(s.files().watch("not-there").then(), FileOperationException.Reason.NOT_FOUND, "not-there");
        });
    }

    private static String sha256(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[64 * 1024];
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A short pause the watch tests use; exposed for providers whose watch polls.
     *
     * @return the pause
     */
    default Duration watchSettle() {
        return Duration.ofMillis(300);
    }
}
