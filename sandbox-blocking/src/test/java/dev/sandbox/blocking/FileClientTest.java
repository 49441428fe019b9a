package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.FileOperationException.Reason;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.WriteOptions;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The files sub-client with real files of the local provider. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FileClientTest {
    private static final int MIB = 1024 * 1024;

    @TempDir
    Path tmp;

    private SandboxClient client;
    private FileClient files;

    @BeforeEach
    void open() {
        client = SandboxClient.builder().defaultTimeout(Duration.ofSeconds(30)).local();
        files = client.files();
    }

    @AfterEach
    void close() {
        client.close();
    }

    record Call(long done, long total) {}

    private static void randomFile(Path file, int mebibytes, long seed) throws IOException {
        Random random = new Random(seed);
        byte[] block = new byte[MIB];
        try (OutputStream out = Files.newOutputStream(file)) {
            for (int i = 0; i < mebibytes; i++) {
                random.nextBytes(block);
                out.write(block);
            }
        }
    }

    private static String sha256(InputStream in) throws IOException {
        try (DigestInputStream digest = new DigestInputStream(in, newDigest())) {
            digest.transferTo(OutputStream.nullOutputStream());
            return HexFormat.of().formatHex(digest.getMessageDigest().digest());
        }
    }

    private static String sha256(Path file) throws IOException {
        return sha256(Files.newInputStream(file));
    }

    private static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void assertProgress(List<Call> calls, long size) {
        assertThat(calls).isNotEmpty();
        assertThat(calls.getLast()).isEqualTo(new Call(size, size));
        // never more than one call per 64 KiB, and the counts only grow
        assertThat(calls.size()).isBetween(2, (int) (size / TransferListener.STEP_BYTES) + 1);
        for (int i = 1; i < calls.size(); i++) {
            assertThat(calls.get(i).done()).isGreaterThan(calls.get(i - 1).done());
        }
    }

    private static void assertFails(ThrowingCallable call, Reason reason, String path) {
        assertThatThrownBy(call).isInstanceOfSatisfying(FileOperationException.class, e -> {
            assertThat(e.reason()).isEqualTo(reason);
            assertThat(e.path()).isEqualTo(path);
            assertThat(e.getMessage()).contains(path);
        });
    }

    @Test
    void aSixtyFourMebibyteFileGoesUpAndComesBackUnchangedWithProgress() throws Exception {
        Path source = tmp.resolve("source.bin");
        randomFile(source, 64, 42);
        long size = 64L * MIB;

        List<Call> up = new ArrayList<>();
        FileInfo uploaded = files.upload(source, "big.bin", (done, total) -> up.add(new Call(done, total)));
        assertThat(uploaded.size()).isEqualTo(size);
        assertThat(uploaded.type()).isEqualTo(FileInfo.Type.FILE);
        assertThat(uploaded.name()).isEqualTo("big.bin");
        assertProgress(up, size);
        assertThat(up.getFirst().total()).isEqualTo(size);

        List<Call> down = new ArrayList<>();
        Path back = tmp.resolve("back.bin");
        assertThat(files.download("big.bin", back, (done, total) -> down.add(new Call(done, total))))
                .isEqualTo(size);
        assertProgress(down, size);
        assertThat(down.getFirst().total()).isEqualTo(size);

        String expected = sha256(source);
        assertThat(sha256(back)).isEqualTo(expected);
        try (InputStream in = files.read("big.bin")) {
            assertThat(sha256(in)).isEqualTo(expected);
        }
        // what the sandbox itself sees
        assertThat(client.process().run(ExecOptions.of("sha256sum", "big.bin")).stdout())
                .startsWith(expected);
        try (var left = Files.list(tmp)) {
            assertThat(left.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("source.bin", "back.bin");
        }
    }

    @Test
    void writingFromAStreamOfUnknownSizeReportsTheTotalAtTheEnd() throws Exception {
        byte[] data = new byte[3 * MIB + 123];
        new Random(7).nextBytes(data);
        List<Call> calls = new ArrayList<>();

        FileInfo info =
                files.write("streamed.bin", new ByteArrayInputStream(data), (d, t) -> calls.add(new Call(d, t)));

        assertThat(info.size()).isEqualTo(data.length);
        assertThat(calls.getLast()).isEqualTo(new Call(data.length, data.length));
        assertThat(calls.subList(0, calls.size() - 1))
                .allSatisfy(c -> assertThat(c.total()).isEqualTo(-1));
        assertProgress(calls, data.length);
        assertThat(files.readAllBytes("streamed.bin", data.length)).isEqualTo(data);
    }

    @Test
    void smallFilesDirectoriesAndMetadata() {
        assertThat(files.mkdir("a/b/c")).isTrue();
        assertThat(files.mkdir("a/b/c")).as("exists already: fine, and said").isFalse();
        FileInfo written = files.write("a/b/hello.txt", "hello\n".getBytes(StandardCharsets.UTF_8));
        assertThat(written.size()).isEqualTo(6);
        assertThat(new String(files.readAllBytes("a/b/hello.txt", 100), StandardCharsets.UTF_8))
                .isEqualTo("hello\n");

        assertThat(files.list("a/b"))
                .extracting(FileInfo::name, FileInfo::type)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("c", FileInfo.Type.DIRECTORY),
                        org.assertj.core.groups.Tuple.tuple("hello.txt", FileInfo.Type.FILE));

        client.process().run(ExecOptions.shell("ln -s hello.txt a/b/link; chmod 640 a/b/hello.txt"));
        FileInfo link = files.stat("a/b/link");
        assertThat(link.type()).isEqualTo(FileInfo.Type.SYMLINK);
        assertThat(link.symlinkTarget()).contains("hello.txt");
        assertThat(files.stat("a/b/hello.txt").mode()).isEqualTo(0640);

        files.move("a/b/hello.txt", "a/moved.txt");
        assertThat(files.exists("a/b/hello.txt")).isFalse();
        assertThat(files.exists("a/moved.txt")).isTrue();

        files.remove("a/moved.txt");
        assertThat(files.exists("a/moved.txt")).isFalse();
        files.remove("a", true);
        assertThat(files.exists("a")).isFalse();
    }

    @Test
    void errorsAreTypedAndNameThePath() throws Exception {
        files.write("file.txt", new byte[10]);
        files.mkdir("dir/sub");
        files.write("other.txt", new byte[1]);

        assertFails(() -> files.stat("missing.txt"), Reason.NOT_FOUND, "missing.txt");
        assertFails(() -> files.read("missing.txt"), Reason.NOT_FOUND, "missing.txt");
        assertFails(() -> files.read("dir"), Reason.IS_A_DIRECTORY, "dir");
        assertFails(() -> files.readAllBytes("file.txt", 9), Reason.TOO_LARGE, "file.txt");
        assertFails(() -> files.list("file.txt"), Reason.NOT_A_DIRECTORY, "file.txt");
        assertFails(() -> files.list("nowhere"), Reason.NOT_FOUND, "nowhere");
        assertFails(
                () -> files.write(
                        "no/such/dir/x.txt",
                        new byte[1],
                        WriteOptions.defaults().withCreateParents(false)),
                Reason.NOT_FOUND,
                "no/such/dir/x.txt");
        assertFails(() -> files.remove("dir"), Reason.DIRECTORY_NOT_EMPTY, "dir");
        files.remove("missing.txt", true); // not there: removed already, as rm -f
        files.remove("missing.txt");
        assertThat(files.exists("missing.txt")).isFalse();
        files.write("plain.txt", new byte[1]);
        assertFails(() -> files.mkdir("plain.txt"), Reason.ALREADY_EXISTS, "plain.txt");
        assertFails(() -> files.move("file.txt", "other.txt"), Reason.ALREADY_EXISTS, "other.txt");
        assertFails(() -> files.move("missing.txt", "x.txt"), Reason.NOT_FOUND, "missing.txt");
        assertFails(() -> files.watch("file.txt"), Reason.NOT_A_DIRECTORY, "file.txt");
        assertFails(() -> files.watch("nowhere"), Reason.NOT_FOUND, "nowhere");

        // the local side of a transfer names the local path
        Path missing = tmp.resolve("missing.bin");
        assertFails(() -> files.upload(missing, "x.bin"), Reason.NOT_FOUND, missing.toString());
        Path noDir = tmp.resolve("no/such/dir/out.bin");
        assertFails(() -> files.download("file.txt", noDir), Reason.NOT_FOUND, noDir.toString());

        assertThatThrownBy(() -> files.stat("../../etc/passwd"))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("../../etc/passwd");
        assertThat(files.exists("dir/sub")).isTrue(); // nothing above changed anything
        assertThat(files.stat("file.txt").size()).isEqualTo(10);
    }

    @Test
    void aDirectoryGoesUpAndComesBackWithProgressOnTheCallingThread() throws Exception {
        Path src = Files.createDirectories(tmp.resolve("src"));
        Files.createDirectories(src.resolve("a"));
        Files.createDirectories(src.resolve("e"));
        randomFile(src.resolve("a/b.bin"), 1, 7);
        Files.writeString(src.resolve("c.txt"), "see");
        Files.createSymbolicLink(src.resolve("l"), Path.of("c.txt"));
        Thread caller = Thread.currentThread();
        List<Call> bytes = new ArrayList<>();
        List<Call> entries = new ArrayList<>();
        TransferListener listener = new TransferListener() {
            @Override
            public void progress(long done, long total) {
                assertThat(Thread.currentThread()).isSameAs(caller);
                bytes.add(new Call(done, total));
            }

            @Override
            public void entries(long done, long total) {
                assertThat(Thread.currentThread()).isSameAs(caller);
                entries.add(new Call(done, total));
            }
        };

        FileInfo up = files.upload(src, "tree", listener);
        assertThat(up.type()).isEqualTo(FileInfo.Type.DIRECTORY);
        assertThat(bytes.get(bytes.size() - 1)).isEqualTo(new Call(MIB + 3, MIB + 3));
        assertThat(entries.get(entries.size() - 1)).isEqualTo(new Call(5, 5));
        assertThat(entries.get(0).total()).isEqualTo(5);
        assertThat(client.process()
                        .run(ExecOptions.shell("cd tree && find . | sort"))
                        .stdout())
                .isEqualTo(".\n./a\n./a/b.bin\n./c.txt\n./e\n./l\n");

        bytes.clear();
        entries.clear();
        Path back = tmp.resolve("back");
        assertThat(files.download("tree", back, listener)).isEqualTo(MIB + 3);
        assertThat(sha256(back.resolve("a/b.bin"))).isEqualTo(sha256(src.resolve("a/b.bin")));
        assertThat(Files.readSymbolicLink(back.resolve("l"))).isEqualTo(Path.of("c.txt"));
        assertThat(Files.isDirectory(back.resolve("e"))).isTrue();
        assertThat(bytes.get(bytes.size() - 1)).isEqualTo(new Call(MIB + 3, MIB + 3));
        assertThat(entries.get(entries.size() - 1)).isEqualTo(new Call(5, 5));

        // a listener that throws aborts the download: the exception, and no half tree
        Path aborted = tmp.resolve("aborted");
        assertThatThrownBy(() -> files.download("tree", aborted, (done, total) -> {
                    throw new IllegalStateException("stop at " + done);
                }))
                .isInstanceOf(IllegalStateException.class);
        try (var left = Files.list(tmp)) {
            assertThat(left.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("src", "back");
        }
    }

    @Test
    void anAbortedTransferLeavesNoFileBehind() throws Exception {
        Path source = tmp.resolve("source.bin");
        randomFile(source, 4, 1);
        files.mkdir("up");

        assertThatThrownBy(() -> files.upload(source, "up/target.bin", (done, total) -> {
                    throw new IllegalStateException("stop at " + done);
                }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("stop at ");
        assertThat(waitForEmpty("up")).isEmpty(); // neither the target nor its temporary file

        InputStream failing = new InputStream() {
            private int left = 200_000;

            @Override
            public int read() throws IOException {
                if (left <= 0) {
                    throw new IOException("source broke");
                }
                left--;
                return 'x';
            }
        };
        assertThatThrownBy(() -> files.write("up/target.bin", failing))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("source broke");
        assertThat(waitForEmpty("up")).isEmpty();
    }

    /** The entries of a directory once a cancelled write has cleaned up (which happens asynchronously). */
    private List<FileInfo> waitForEmpty(String dir) throws InterruptedException {
        List<FileInfo> entries = files.list(dir);
        for (int i = 0; i < 100 && !entries.isEmpty(); i++) {
            Thread.sleep(20);
            entries = files.list(dir);
        }
        return entries;
    }

    @Test
    void readingCanStopEarlyAndTheStreamIsThenClosed() throws Exception {
        files.write("data.txt", "0123456789".repeat(100_000).getBytes(StandardCharsets.US_ASCII));
        InputStream in = files.read("data.txt");
        byte[] head = in.readNBytes(10);
        assertThat(new String(head, StandardCharsets.US_ASCII)).isEqualTo("0123456789");
        in.close();
        assertThatThrownBy(in::read).isInstanceOf(IOException.class).hasMessageContaining("closed");
    }

    @Test
    void aWatchIsLiveWhenItReturns() {
        files.mkdir("inbox");
        for (int i = 0; i < 20; i++) {
            try (FileWatch watch = files.watch("inbox")) {
                // watch() returned once live: a write right after it is never missed, and READY is not an event
                files.write("inbox/file-" + i + ".txt", new byte[] {1});
                FileEvent next = watch.poll(Duration.ofSeconds(10));
                assertThat(next).isNotNull();
                assertThat(next.kind()).isEqualTo(FileEvent.Kind.CREATED);
                assertThat(next.path()).endsWith("/inbox/file-" + i + ".txt");
            }
        }
    }

    @Test
    void aRecursiveWatchSeesNestedFiles() {
        files.mkdir("tree");
        try (FileWatch watch = files.watch("tree", true)) {
            files.mkdir("tree/sub");
            FileEvent sub = watch.poll(Duration.ofSeconds(10));
            assertThat(sub).isNotNull();
            assertThat(sub.kind()).isEqualTo(FileEvent.Kind.CREATED);
            assertThat(sub.path()).endsWith("/tree/sub");
            files.write("tree/sub/f", new byte[] {1});
            FileEvent f = watch.poll(Duration.ofSeconds(10));
            assertThat(f).isNotNull();
            assertThat(f.kind()).isEqualTo(FileEvent.Kind.CREATED);
            assertThat(f.path()).endsWith("/tree/sub/f");
        }
    }

    @Test
    void aWatchIteratorEndsWhenClosedFromAnotherThread() throws Exception {
        files.mkdir("quiet");
        FileWatch watch = files.watch("quiet");
        Thread closer = new Thread(() -> {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                return;
            }
            watch.close();
        });
        closer.start();
        assertThat(watch.iterator().hasNext()).isFalse();
        closer.join(5000);
        assertThat(watch.poll(Duration.ofMillis(10))).isNull();
    }

    @Test
    void rangesDepthsParentsAndSeveralFilesAdaptTheReactiveApi() throws Exception {
        // parents created by default
        FileInfo deep = files.write("x/y/z.txt", "0123456789".getBytes(StandardCharsets.UTF_8));
        assertThat(deep.type()).isEqualTo(FileInfo.Type.FILE);
        long uid = Long.parseLong(
                client.process().run(ExecOptions.shell("id -u")).stdout().trim());
        assertThat(deep.uid()).isEqualTo(uid);
        assertThat(files.exists("x/y")).isTrue();
        assertThat(files.exists("x/nothing")).isFalse();
        assertThat(files.exists("x/y/z.txt/under-a-file")).isFalse();

        // ranged reads, as a stream and into memory
        try (InputStream in = files.read("x/y/z.txt", 3, 4)) {
            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("3456");
        }
        assertThat(new String(files.readAllBytes("x/y/z.txt", 8, 100), StandardCharsets.UTF_8))
                .isEqualTo("89");
        assertThat(files.readAllBytes("x/y/z.txt", 50, 10)).isEmpty();
        assertThatThrownBy(() -> files.read("x/y/z.txt", -1, 4))
                .isInstanceOf(InvalidArgumentException.class)
                .satisfies(
                        e -> assertThat(((InvalidArgumentException) e).field()).isEqualTo("offset"));
        assertThatThrownBy(() -> files.readAllBytes("x/y/z.txt", 0, -5))
                .isInstanceOf(InvalidArgumentException.class)
                .satisfies(
                        e -> assertThat(((InvalidArgumentException) e).field()).isEqualTo("length"));

        // a recursive list, depth 1 and unbounded
        assertThat(files.list("x", 1)).extracting(FileInfo::name).containsExactly("y");
        assertThat(files.list("x", Integer.MAX_VALUE))
                .extracting(FileInfo::name)
                .containsExactly("y", "z.txt");
        assertThatThrownBy(() -> files.list("x", 0))
                .isInstanceOf(InvalidArgumentException.class)
                .satisfies(
                        e -> assertThat(((InvalidArgumentException) e).field()).isEqualTo("depth"));

        // several files in one call, in order; the first failure names its path
        Map<String, byte[]> batch = new LinkedHashMap<>();
        batch.put("b/one.txt", "1".getBytes(StandardCharsets.UTF_8));
        batch.put("b/two/two.txt", "22".getBytes(StandardCharsets.UTF_8));
        assertThat(files.writeAll(batch)).extracting(FileInfo::name).containsExactly("one.txt", "two.txt");
        assertThat(new String(files.readAllBytes("b/two/two.txt", 10), StandardCharsets.UTF_8))
                .isEqualTo("22");
        Map<String, byte[]> bad = new LinkedHashMap<>();
        bad.put("b/three.txt", new byte[1]);
        bad.put("b/one.txt/under-a-file", new byte[1]);
        assertThatThrownBy(() -> files.writeAll(bad))
                .isInstanceOf(FileOperationException.class)
                .satisfies(e -> assertThat(((FileOperationException) e).path()).isEqualTo("b/one.txt/under-a-file"));
        assertThat(files.exists("b/three.txt")).isTrue();
    }
}
