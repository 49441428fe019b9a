package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxSession;
import dev.sandbox.TransferProgress;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * Directory upload and download ({@code upload}/{@code download} of a directory): trees with nested and empty
 * directories, symbolic links and the execute bit, both ways, and a download that refuses what a hostile sandbox
 * puts in its tree without touching anything outside the target.
 */
public interface DirectoryTransferConformance extends ConformanceBase {

    private static String sh(SandboxSession s, String script) {
        var r = s.run(ExecOptions.shell(script)).block(WAIT);
        assertThat(r.exitCode()).as("exit of: " + script + "\n" + r.stderr()).isZero();
        return r.stdout();
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A local tree: nested directories, an empty one, an executable, a relative link. */
    private static Path localTree(Path dir) throws IOException {
        Path root = Files.createDirectories(dir.resolve("tree"));
        Files.createDirectories(root.resolve("a/b"));
        Files.createDirectories(root.resolve("a/empty"));
        Files.writeString(root.resolve("a/b/c.txt"), "deep\n");
        Files.writeString(root.resolve("top.txt"), "top\n");
        Path run = Files.writeString(root.resolve("run.sh"), "#!/bin/sh\necho ran\n");
        Files.setPosixFilePermissions(run, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.createSymbolicLink(root.resolve("link"), Path.of("a/b/c.txt"));
        return root;
    }

    private static List<String> localListing(Path root) throws IOException {
        List<String> out = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(root)) {
            walk.filter(p -> !p.equals(root)).forEach(p -> {
                String kind = Files.isSymbolicLink(p) ? "l" : Files.isDirectory(p) ? "d" : "f";
                out.add(kind + " " + root.relativize(p));
            });
        }
        out.sort(null);
        return out;
    }

    /**
     * Required: Uploading a directory copies its tree (this failed with "no such file or directory" before).
     *
     * @throws IOException when the local tree cannot be made
     */
    @Test
    default void uploadingADirectoryCopiesItsTree() throws IOException {
        Path dir = Files.createTempDirectory("sandbox-kit-");
        try {
            Path root = localTree(dir);
            inSession(s -> {
                List<TransferProgress> seen = new CopyOnWriteArrayList<>();
                FileInfo up = s.files().upload(root, "up/tree", seen::add).block(WAIT);
                assertThat(up.type()).isEqualTo(FileInfo.Type.DIRECTORY);
                assertThat(sh(s, "cd up/tree && find . | sort"))
                        .isEqualTo(".\n./a\n./a/b\n./a/b/c.txt\n./a/empty\n./link\n./run.sh\n./top.txt\n");
                assertThat(sh(s, "cd up/tree && readlink link && cat link && ./run.sh && test -x run.sh && echo x"))
                        .isEqualTo("a/b/c.txt\ndeep\nran\nx\n");
                assertThat(sh(s, "cd up/tree && test -x top.txt || echo not-executable"))
                        .isEqualTo("not-executable\n");
                TransferProgress last = seen.get(seen.size() - 1);
                assertThat(last).isEqualTo(new TransferProgress(7, 5 + 4 + 19));
            });
        } finally {
            deleteTree(dir);
        }
    }

    /**
     * Required: Downloading a directory makes the tree the sandbox holds.
     *
     * @throws IOException when the local tree cannot be read
     */
    @Test
    default void downloadingADirectoryMakesTheTreeTheSandboxHolds() throws IOException {
        Path dir = Files.createTempDirectory("sandbox-kit-");
        try {
            Path target = dir.resolve("out");
            inSession(s -> {
                sh(
                        s,
                        "mkdir -p t/d/e t/empty && printf hi > t/d/e/f && printf '#!/bin/sh\\n' > t/x.sh"
                                + " && chmod 755 t/x.sh && ln -s d/e/f t/l");
                assertThat(s.files().download("t", target).block(WAIT)).isEqualTo(2 + 10);
            });
            assertThat(localListing(target)).containsExactly("d d", "d d/e", "d empty", "f d/e/f", "f x.sh", "l l");
            assertThat(Files.readString(target.resolve("d/e/f"))).isEqualTo("hi");
            assertThat(Files.readSymbolicLink(target.resolve("l"))).isEqualTo(Path.of("d/e/f"));
            assertThat(Files.readString(target.resolve("l"))).isEqualTo("hi");
            assertThat(Files.isExecutable(target.resolve("x.sh"))).isTrue();
            assertThat(Files.isExecutable(target.resolve("d/e/f"))).isFalse();
            try (Stream<Path> siblings = Files.list(dir)) {
                assertThat(siblings.map(p -> p.getFileName().toString())).containsExactly("out");
            }
        } finally {
            deleteTree(dir);
        }
    }

    /**
     * Required: A tree uploaded then downloaded comes back the same.
     *
     * @throws IOException when a local tree cannot be made or read
     */
    @Test
    default void aTreeUploadedThenDownloadedComesBackTheSame() throws IOException {
        Path dir = Files.createTempDirectory("sandbox-kit-");
        try {
            Path root = localTree(dir);
            Path back = dir.resolve("back");
            inSession(s -> {
                s.files().upload(root, "rt").block(WAIT);
                s.files().download("rt", back).block(WAIT);
            });
            assertThat(localListing(back)).isEqualTo(localListing(root));
            assertThat(Files.readString(back.resolve("a/b/c.txt"))).isEqualTo("deep\n");
            assertThat(Files.isExecutable(back.resolve("run.sh"))).isTrue();
            assertThat(Files.readSymbolicLink(back.resolve("link"))).isEqualTo(Path.of("a/b/c.txt"));
        } finally {
            deleteTree(dir);
        }
    }

    /**
     * Required: A download to a relative target, with {@code .} and {@code ..} segments, lands where the system
     * resolves it (against the working directory), and a hostile tree is still refused there. {@code ./out} failed
     * before with "entry 'a' refused: a name outside the target".
     *
     * @throws IOException when the local directories cannot be made or read
     */
    @Test
    default void aDownloadToARelativeTargetWithDotSegmentsLandsWhereItLeads() throws IOException {
        Path dir = Files.createTempDirectory("sandbox-kit-");
        try {
            Files.createDirectories(dir.resolve("a"));
            // this JVM's working directory cannot change: reach the temporary directory from it, relatively
            String rel = Path.of("")
                    .toAbsolutePath()
                    .toRealPath()
                    .relativize(dir.toRealPath())
                    .toString();
            inSession(s -> {
                sh(s, "mkdir -p t/d h/sub && printf 1 > t/f && printf 2 > t/d/g && ln -s ../.. h/sub/up");
                for (String form : List.of("./" + rel + "/out1", rel + "/./out2", rel + "/a/../out3")) {
                    assertThat(Path.of(form).isAbsolute()).isFalse();
                    assertThat(s.files().download("t", Path.of(form)).block(WAIT))
                            .as(form)
                            .isEqualTo(2);
                }
                assertThat(s.files()
                                .download("t/f", Path.of("./" + rel + "/a/../f.txt"))
                                .block(WAIT))
                        .isEqualTo(1);
                StepVerifier.create(s.files().download("h", Path.of("./" + rel + "/./evil")))
                        .expectErrorSatisfies(e -> {
                            assertThat(e).isInstanceOf(FileOperationException.class);
                            assertThat(((FileOperationException) e).reason())
                                    .isEqualTo(FileOperationException.Reason.PERMISSION_DENIED);
                            assertThat(e).hasMessageContaining("sub/up");
                        })
                        .verify(WAIT);
            });
            for (String out : List.of("out1", "out2", "out3")) {
                assertThat(localListing(dir.resolve(out))).as(out).containsExactly("d d", "f d/g", "f f");
                assertThat(Files.readString(dir.resolve(out).resolve("d/g"))).isEqualTo("2");
            }
            assertThat(Files.readString(dir.resolve("f.txt"))).isEqualTo("1");
            try (Stream<Path> left = Files.list(dir)) {
                assertThat(left.map(p -> p.getFileName().toString()))
                        .containsExactlyInAnyOrder("a", "out1", "out2", "out3", "f.txt");
            }
        } finally {
            deleteTree(dir);
        }
    }

    /**
     * Required: A download refuses a link that leads out of the tree, names it, and leaves nothing behind.
     *
     * @throws IOException when the canary cannot be made or read
     */
    @Test
    default void aDownloadRefusesALinkOutOfTheTreeAndLeavesNothingBehind() throws IOException {
        Path dir = Files.createTempDirectory("sandbox-kit-");
        try {
            Path canary = Files.writeString(dir.resolve("canary.txt"), "untouched");
            Path target = dir.resolve("out");
            inSession(s -> {
                // a link climbing out of the tree, then a file "through" it, and an absolute one
                sh(
                        s,
                        "mkdir -p h/sub && printf x > h/a.txt && ln -s ../.. h/sub/up && printf evil > h/sub/z"
                                + " && ln -s /etc h/zabs");
                StepVerifier.create(s.files().download("h", target))
                        .expectErrorSatisfies(e -> {
                            assertThat(e).isInstanceOf(FileOperationException.class);
                            assertThat(((FileOperationException) e).reason())
                                    .isEqualTo(FileOperationException.Reason.PERMISSION_DENIED);
                            assertThat(e).hasMessageContaining("sub/up");
                        })
                        .verify(WAIT);
            });
            assertThat(Files.exists(target, LinkOption.NOFOLLOW_LINKS)).isFalse();
            assertThat(Files.readString(canary)).isEqualTo("untouched");
            try (Stream<Path> left = Files.list(dir)) {
                assertThat(left.map(p -> p.getFileName().toString())).containsExactly("canary.txt");
            }
        } finally {
            deleteTree(dir);
        }
    }

    /**
     * Required: A download refuses names with control characters, and an existing target.
     *
     * @throws IOException when the local directories cannot be made
     */
    @Test
    default void aDownloadRefusesControlCharactersAndAnExistingTarget() throws IOException {
        Path dir = Files.createTempDirectory("sandbox-kit-");
        try {
            Path existing = Files.createDirectories(dir.resolve("existing"));
            inSession(s -> {
                sh(s, "mkdir -p n && printf x > \"n/bad$(printf '\\nname')\"");
                StepVerifier.create(s.files().download("n", dir.resolve("out")))
                        .expectErrorSatisfies(e -> {
                            assertThat(e).isInstanceOf(FileOperationException.class);
                            assertThat(e).hasMessageContaining("bad\\x0aname");
                        })
                        .verify(WAIT);
                sh(s, "mkdir -p ok");
                StepVerifier.create(s.files().download("ok", existing))
                        .expectErrorSatisfies(e -> assertThat(((FileOperationException) e).reason())
                                .isEqualTo(FileOperationException.Reason.ALREADY_EXISTS))
                        .verify(WAIT);
            });
            try (Stream<Path> left = Files.list(dir)) {
                assertThat(left.map(p -> p.getFileName().toString())).containsExactly("existing");
            }
        } finally {
            deleteTree(dir);
        }
    }
}
