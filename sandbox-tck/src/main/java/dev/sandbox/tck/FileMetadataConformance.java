package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxSession;
import dev.sandbox.WriteOptions;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * File metadata and the file operations beyond the basics: listing empty and dotfile-only directories, the full mode
 * (setuid, setgid, sticky) and the owner, {@code exists}, ranged reads, recursive listings, parents created on write,
 * and several files written in one call.
 */
public interface FileMetadataConformance extends ConformanceBase {

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static ExecResult sh(SandboxSession s, String script) {
        ExecResult r = s.run(ExecOptions.shell(script)).block(WAIT);
        assertThat(r.exitCode()).as(script + ": " + r.stderr()).isZero();
        return r;
    }

    private static void expectInvalid(Flux<?> op, String field) {
        StepVerifier.create(op)
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(InvalidArgumentException.class);
                    assertThat(((InvalidArgumentException) e).field()).isEqualTo(field);
                })
                .verify(WAIT);
    }

    private static void expectFailure(Mono<?> op, FileOperationException.Reason reason, String path) {
        StepVerifier.create(op)
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(FileOperationException.class);
                    assertThat(((FileOperationException) e).reason()).isEqualTo(reason);
                    assertThat(((FileOperationException) e).path()).isEqualTo(path);
                })
                .verify(WAIT);
    }

    /** Paths of a listing relative to the listed directory. */
    private static List<String> relative(List<FileInfo> entries, String dir) {
        return entries.stream().map(f -> f.path().substring(dir.length() + 1)).toList();
    }

    /** Required: An empty directory and one with only dotfiles list without error (issue 14, defect 5). */
    @Test
    default void emptyAndDotfileOnlyDirectoriesList() {
        inSession(s -> {
            SandboxFiles files = s.files();
            files.mkdir("empty").block(WAIT);
            assertThat(files.list("empty").collectList().block(WAIT)).isEmpty();
            assertThat(files.list("empty", 3).collectList().block(WAIT)).isEmpty();
            sh(s, "mkdir dots && touch dots/.hidden dots/.a");
            assertThat(files.list("dots").collectList().block(WAIT))
                    .extracting(FileInfo::name)
                    .containsExactly(".a", ".hidden");
        });
    }

    /** Required: The mode keeps setuid, setgid and sticky; the owner and group are the session user's ids. */
    @Test
    default void modeKeepsSpecialBitsAndOwnerIsTheSessionUser() {
        inSession(s -> {
            SandboxFiles files = s.files();
            FileInfo written = files.write("prog", bytes("#!/bin/sh\n")).block(WAIT);
            String[] ids = sh(
                            s,
                            "chmod 4755 prog && mkdir shared && chmod 1777 shared && touch grp && chmod 2750 grp"
                                    + " && id -u && id -g")
                    .stdout()
                    .trim()
                    .split("\\s+");
            long uid = Long.parseLong(ids[0]);
            long gid = Long.parseLong(ids[1]);

            FileInfo prog = files.stat("prog").block(WAIT);
            assertThat(prog.mode()).isEqualTo(04755);
            assertThat(prog.modeString()).isEqualTo("-rwsr-xr-x");
            FileInfo shared = files.stat("shared").block(WAIT);
            assertThat(shared.mode()).isEqualTo(01777);
            assertThat(shared.modeString()).isEqualTo("drwxrwxrwt");
            FileInfo grp = files.stat("grp").block(WAIT);
            assertThat(grp.mode()).isEqualTo(02750);
            assertThat(grp.modeString()).isEqualTo("-rwxr-s---");

            // the file the session wrote, and the one its command made, belong to the session's user
            assertThat(written.uid()).isEqualTo(uid);
            assertThat(written.gid()).isEqualTo(gid);
            assertThat(prog.uid()).isEqualTo(uid);
            assertThat(grp.gid()).isEqualTo(gid);
            // a listing says the same as stat
            assertThat(files.list(".").collectList().block(WAIT))
                    .filteredOn(f -> f.name().equals("prog"))
                    .singleElement()
                    .satisfies(f -> {
                        assertThat(f.mode()).isEqualTo(04755);
                        assertThat(f.uid()).isEqualTo(uid);
                        assertThat(f.gid()).isEqualTo(gid);
                    });
            // names, where given, are the ones the sandbox's user has
            if (prog.owner().isPresent()) {
                String name = sh(s, "id -un 2>/dev/null || true").stdout().trim();
                if (!name.isEmpty()) {
                    assertThat(prog.owner()).contains(name);
                }
            }
        });
    }

    /** Required: exists is true for files, directories and dangling links, false for missing paths. */
    @Test
    default void existsTellsWhetherAPathIsThere() {
        inSession(s -> {
            SandboxFiles files = s.files();
            files.write("here.txt", bytes("x")).block(WAIT);
            sh(s, "mkdir d && ln -s nowhere dangling");
            assertThat(files.exists("here.txt").block(WAIT)).isTrue();
            assertThat(files.exists("d").block(WAIT)).isTrue();
            assertThat(files.exists("dangling").block(WAIT)).isTrue();
            assertThat(files.exists("missing.txt").block(WAIT)).isFalse();
            assertThat(files.exists("d/missing/deeper").block(WAIT)).isFalse();
            assertThat(files.exists("here.txt/under-a-file").block(WAIT)).isFalse();
        });
    }

    /** Required: A ranged read gives the bytes of the range, stops at the end, and refuses negative values. */
    @Test
    default void rangedReadsStopAtTheEnd() {
        inSession(s -> {
            SandboxFiles files = s.files();
            files.write("digits.txt", bytes("0123456789")).block(WAIT);
            assertThat(text(files.readAllBytes("digits.txt", 3, 4).block(WAIT))).isEqualTo("3456");
            assertThat(text(files.readAllBytes("digits.txt", 8, 100).block(WAIT)))
                    .isEqualTo("89");
            assertThat(files.readAllBytes("digits.txt", 10, 5).block(WAIT)).isEmpty();
            assertThat(files.readAllBytes("digits.txt", 500, 5).block(WAIT)).isEmpty();
            assertThat(files.readAllBytes("digits.txt", 2, 0).block(WAIT)).isEmpty();
            String rest = files.read("digits.txt", 7, Long.MAX_VALUE)
                    .map(b -> StandardCharsets.UTF_8.decode(b).toString())
                    .collectList()
                    .map(l -> String.join("", l))
                    .block(WAIT);
            assertThat(rest).isEqualTo("789");

            // across chunks: a range of a larger file
            byte[] big = new byte[200_000];
            for (int i = 0; i < big.length; i++) {
                big[i] = (byte) (i * 31);
            }
            files.write("big.bin", big).block(WAIT);
            byte[] part = files.readAllBytes("big.bin", 65_000, 70_000).block(WAIT);
            assertThat(part).hasSize(70_000);
            assertThat(ByteBuffer.wrap(part)).isEqualTo(ByteBuffer.wrap(big, 65_000, 70_000));

            expectInvalid(files.read("digits.txt", -1, 4), "offset");
            expectInvalid(files.read("digits.txt", 0, -4), "length");
            expectFailure(
                    files.readAllBytes("missing.txt", 0, 4), FileOperationException.Reason.NOT_FOUND, "missing.txt");
        });
    }

    /** Required: A recursive list goes to its depth in pre-order, names sorted, links to directories not followed. */
    @Test
    default void recursiveListsGoToTheirDepthWithoutFollowingLinks() {
        inSession(s -> {
            SandboxFiles files = s.files();
            sh(
                    s,
                    "mkdir -p t/b/d && echo a > t/a.txt && echo c > t/b/c.txt && echo e > t/b/d/e.txt"
                            + " && ln -s b t/link && mkdir t/b/d/.dot");
            String dir = files.stat("t").block(WAIT).path();
            assertThat(relative(files.list("t", 1).collectList().block(WAIT), dir))
                    .containsExactly("a.txt", "b", "link");
            assertThat(relative(files.list("t", 2).collectList().block(WAIT), dir))
                    .containsExactly("a.txt", "b", "b/c.txt", "b/d", "link");
            List<FileInfo> all =
                    files.list("t", Integer.MAX_VALUE).collectList().block(WAIT);
            assertThat(relative(all, dir))
                    .containsExactly("a.txt", "b", "b/c.txt", "b/d", "b/d/.dot", "b/d/e.txt", "link");
            assertThat(all).last().satisfies(link -> {
                assertThat(link.type()).isEqualTo(FileInfo.Type.SYMLINK);
                assertThat(link.name()).isEqualTo("link");
            });
            assertThat(all)
                    .filteredOn(f -> f.name().equals("e.txt"))
                    .singleElement()
                    .satisfies(f -> assertThat(f.size()).isEqualTo(2));
            expectInvalid(files.list("t", 0), "depth");
        });
    }

    /** Required: A write creates missing parents by default, and fails naming the path when asked not to. */
    @Test
    default void writesCreateMissingParentsUnlessAskedNot() {
        inSession(s -> {
            SandboxFiles files = s.files();
            FileInfo deep = files.write("p/q/r.txt", bytes("deep")).block(WAIT);
            assertThat(deep.name()).isEqualTo("r.txt");
            assertThat(files.stat("p/q").block(WAIT).type()).isEqualTo(FileInfo.Type.DIRECTORY);
            assertThat(sh(s, "cat p/q/r.txt").stdout()).isEqualTo("deep");
            files.write("p/streamed/x.txt", Flux.just(ByteBuffer.wrap(bytes("s"))))
                    .block(WAIT);
            assertThat(files.exists("p/streamed/x.txt").block(WAIT)).isTrue();
            expectFailure(
                    files.write("s/t.txt", bytes("no"), WriteOptions.defaults().withCreateParents(false)),
                    FileOperationException.Reason.NOT_FOUND,
                    "s/t.txt");
            assertThat(files.exists("s").block(WAIT)).isFalse();
        });
    }

    /** Required: Several files are written in one call, in order; a failure names the first path that failed. */
    @Test
    default void severalFilesAreWrittenInOneCall() {
        inSession(s -> {
            SandboxFiles files = s.files();
            Map<String, byte[]> batch = new LinkedHashMap<>();
            batch.put("w/one.txt", bytes("1"));
            batch.put("w/sub/two.txt", bytes("22"));
            batch.put("w/three.txt", new byte[0]);
            List<FileInfo> written = files.writeAll(batch).block(WAIT);
            assertThat(written).extracting(FileInfo::name).containsExactly("one.txt", "two.txt", "three.txt");
            assertThat(written).extracting(FileInfo::size).containsExactly(1L, 2L, 0L);
            assertThat(sh(s, "cat w/one.txt w/sub/two.txt").stdout()).isEqualTo("122");
            assertThat(files.writeAll(Map.of()).block(WAIT)).isEmpty();

            Map<String, byte[]> bad = new LinkedHashMap<>();
            bad.put("w/four.txt", bytes("4"));
            bad.put("w/one.txt/not-a-dir.txt", bytes("x"));
            bad.put("w/sub", bytes("a directory"));
            StepVerifier.create(files.writeAll(bad))
                    .expectErrorSatisfies(e -> {
                        assertThat(e).isInstanceOf(FileOperationException.class);
                        assertThat(((FileOperationException) e).path()).isEqualTo("w/one.txt/not-a-dir.txt");
                    })
                    .verify(WAIT);
            assertThat(text(files.readAllBytes("w/four.txt", 10).block(WAIT))).isEqualTo("4");
        });
    }
}
