package dev.sandbox.blocking;

import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.WriteOptions;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The files of the client's session, by blocking calls; get it from {@link SandboxClient#files()}. Relative paths
 * resolve against the session's workdir. Contents are streamed in chunks of 64 KiB with a few chunks in flight, never
 * held whole in memory (except by {@link #readAllBytes} and {@link #write(String, byte[])}, which you size). Writes go
 * to a temporary file that is renamed into place, so a reader never sees half a file; an aborted write leaves the old
 * file, if any, as it was; missing parent directories are created unless {@link WriteOptions} says not to. Each
 * method has the name of the {@link SandboxFiles} method it adapts and means the same.
 *
 * <p>Failures are {@link FileOperationException}s that name the path and give a {@link
 * FileOperationException.Reason} (for the local side of {@link #upload} and {@link #download}, the local path); a path
 * the provider does not allow is a {@link dev.sandbox.InvalidArgumentException}. Single operations wait at most for
 * the client's default timeout; transfers ({@link #read}, {@link #upload}, {@link #download}, {@link
 * #write(String, InputStream)}) have no limit on their total time, but each chunk must move within it, or the transfer
 * is cancelled and {@link SandboxTimeoutException} is thrown. The facade's other rules apply: {@link
 * SandboxInterruptedException} on interrupt (the operation cancelled), {@link IllegalStateException} on a Reactor
 * non-blocking thread.
 *
 * <pre>{@code
 * FileClient files = client.files();
 * files.mkdir("data");
 * files.upload(Path.of("input.csv"), "data/input.csv");
 * client.process().run(ExecOptions.shell("sort data/input.csv > data/sorted.csv"));
 * files.download("data/sorted.csv", Path.of("sorted.csv"));
 * }</pre>
 */
public final class FileClient {
    private static final int WATCH_PREFETCH = 32;

    private final ClientCore core;
    private final FileTransfers transfers;

    FileClient(ClientCore core) {
        this.core = core;
        this.transfers = new FileTransfers(core, this);
    }

    SandboxFiles files(String method) {
        Blocking.checkCanBlock(method);
        core.ensureOpen();
        return core.session.files();
    }

    /** Waits for an operation that answers a value (see {@link Blocking#awaitValue}). */
    private <T> T await(reactor.core.publisher.Mono<T> mono, String method, String operation) {
        return Blocking.awaitValue(mono, core.defaultTimeout, method, operation);
    }

    /** Waits for an operation that answers nothing. */
    private void awaitDone(reactor.core.publisher.Mono<Void> mono, String method, String operation) {
        Blocking.await(mono, core.defaultTimeout, method, operation);
    }

    /**
     * Opens a file for reading as a stream of its bytes, read from the sandbox as fast as you read, a few chunks
     * ahead. Errors of the SDK are thrown unchanged by the stream's methods (they are unchecked); a missing file fails
     * here already. Close the stream to stop reading.
     *
     * <pre>{@code
     * try (InputStream in = client.files().read("out/report.csv");
     *         BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
     *     lines.lines().forEach(System.out::println);
     * }
     * }</pre>
     *
     * @param path the file
     * @return the file's content
     * @throws FileOperationException when the file does not exist, is a directory or cannot be read
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public InputStream read(String path) {
        return openRead(path, "FileClient.read");
    }

    /**
     * Opens a range of a file for reading: at most {@code length} bytes from byte {@code offset}; a range past the end
     * stops at the end, an offset at or past the end gives an empty stream. Adapts {@link SandboxFiles#read(String,
     * long, long)}.
     *
     * <pre>{@code
     * try (InputStream tail = client.files().read("app.log", size - 4096, 4096)) {
     *     tail.transferTo(System.out);
     * }
     * }</pre>
     *
     * @param path the file
     * @param offset the first byte, {@code >= 0}
     * @param length how many bytes at most, {@code >= 0}; {@link Long#MAX_VALUE} for the rest of the file
     * @return the range's bytes
     * @throws dev.sandbox.InvalidArgumentException naming {@code offset} or {@code length} when negative
     * @throws FileOperationException when the file does not exist, is a directory or cannot be read
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public InputStream read(String path, long offset, long length) {
        SandboxFiles files = files("FileClient.read");
        String operation = "read of " + path;
        Blocking.checkNotInterrupted(operation);
        return FileReadStream.open(files.read(path, offset, length), core.defaultTimeout, operation);
    }

    /**
     * Reads a range of a file into memory: at most {@code length} bytes from byte {@code offset}. Adapts {@link
     * SandboxFiles#readAllBytes(String, long, long)}.
     *
     * <pre>{@code
     * byte[] magic = client.files().readAllBytes("image.png", 0, 8);
     * }</pre>
     *
     * @param path the file
     * @param offset the first byte, {@code >= 0}
     * @param length how many bytes at most
     * @return the bytes, fewer than {@code length} when the file ends first
     * @throws dev.sandbox.InvalidArgumentException naming {@code offset} or {@code length} when out of range
     * @throws FileOperationException when the file does not exist or cannot be read
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public byte[] readAllBytes(String path, long offset, long length) {
        return await(
                files("FileClient.readAllBytes").readAllBytes(path, offset, length),
                "FileClient.readAllBytes",
                "read of " + path);
    }

    FileReadStream openRead(String path, String method) {
        SandboxFiles files = files(method);
        String operation = "read of " + path;
        Blocking.checkNotInterrupted(operation);
        return FileReadStream.open(files.read(path), core.defaultTimeout, operation);
    }

    /**
     * Reads a whole file into memory, refusing one larger than {@code maxBytes}.
     *
     * <pre>{@code
     * String config = new String(client.files().readAllBytes("config.json", 1 << 20), StandardCharsets.UTF_8);
     * }</pre>
     *
     * @param path the file
     * @param maxBytes the largest size accepted
     * @return the content
     * @throws FileOperationException with {@link FileOperationException.Reason#TOO_LARGE} when the file is larger
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public byte[] readAllBytes(String path, long maxBytes) {
        return await(
                files("FileClient.readAllBytes").readAllBytes(path, maxBytes),
                "FileClient.readAllBytes",
                "read of " + path);
    }

    /**
     * Writes a file from bytes, replacing it if it exists; missing parent directories are created.
     *
     * <pre>{@code
     * client.files().write("main.py", "print('hi')\n".getBytes(StandardCharsets.UTF_8));
     * }</pre>
     *
     * @param path the file
     * @param content the bytes
     * @return the new file's info
     * @throws FileOperationException when the parent does not exist, the path is a directory, or writing fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public FileInfo write(String path, byte[] content) {
        return write(path, content, WriteOptions.defaults());
    }

    /**
     * Writes a file from bytes, replacing it if it exists, with options. Adapts {@link SandboxFiles#write(String,
     * byte[], WriteOptions)}.
     *
     * <pre>{@code
     * client.files().write("existing/dir/x.txt", bytes, WriteOptions.defaults().withCreateParents(false));
     * }</pre>
     *
     * @param path the file
     * @param content the bytes
     * @param options whether missing parent directories are created
     * @return the new file's info
     * @throws FileOperationException when the parent does not exist (and is not to be created), the path is a
     *     directory, or writing fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public FileInfo write(String path, byte[] content, WriteOptions options) {
        Objects.requireNonNull(content, "content");
        Objects.requireNonNull(options, "options");
        return await(files("FileClient.write").write(path, content, options), "FileClient.write", "write of " + path);
    }

    /**
     * Writes several files in one call, in the map's order, each atomically, parents created. Adapts {@link
     * SandboxFiles#writeAll(Map)}: the first file that cannot be written fails the call with its {@link
     * FileOperationException}; the files before it are written, those after it may be.
     *
     * <pre>{@code
     * Map<String, byte[]> files = new LinkedHashMap<>();
     * files.put("app/main.py", mainPy);
     * files.put("app/requirements.txt", requirements);
     * client.files().writeAll(files);
     * }</pre>
     *
     * @param files path to content
     * @return the new files' infos, in the map's order
     * @throws FileOperationException naming the first path that could not be written
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public List<FileInfo> writeAll(Map<String, byte[]> files) {
        Objects.requireNonNull(files, "files");
        return List.copyOf(await(
                files("FileClient.writeAll").writeAll(files),
                "FileClient.writeAll",
                "write of " + files.size() + " files"));
    }

    /**
     * Writes a file from a stream, read on the calling thread up to its end, replacing the file if it exists. The
     * stream is not closed.
     *
     * <pre>{@code
     * try (InputStream in = request.getInputStream()) {
     *     client.files().write("upload.bin", in);
     * }
     * }</pre>
     *
     * @param path the file
     * @param content the bytes to write
     * @return the new file's info
     * @throws UncheckedIOException when reading {@code content} fails; nothing is written
     * @throws FileOperationException when the parent does not exist, the path is a directory, or writing fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public FileInfo write(String path, InputStream content) {
        return write(path, content, null);
    }

    /**
     * Writes a file from a stream, reporting progress; see {@link #write(String, InputStream)}. The size is unknown
     * until the stream ends, so the listener gets a total of -1 until its last call.
     *
     * <pre>{@code
     * client.files().write("dump.sql", in, (done, total) -> log.info("{} bytes written", done));
     * }</pre>
     *
     * @param path the file
     * @param content the bytes to write
     * @param listener hears the progress, or {@code null}
     * @return the new file's info
     * @throws UncheckedIOException when reading {@code content} fails; nothing is written
     * @throws FileOperationException when the parent does not exist, the path is a directory, or writing fails
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public FileInfo write(String path, InputStream content, @Nullable TransferListener listener) {
        Objects.requireNonNull(content, "content");
        return transfers.pump(
                path, content, -1, listener, "FileClient.write", "write of " + path, UncheckedIOException::new);
    }

    /**
     * Copies a file or a directory tree from this machine into the sandbox, as {@link SandboxFiles#upload(Path,
     * String)} does: a file replaces the target; a directory becomes the directory {@code path} (made when missing,
     * merged into when it exists) with its files, subdirectories, symbolic links (as links) and permission bits.
     *
     * <pre>{@code
     * client.files().upload(Path.of("build/app.jar"), "app.jar");
     * }</pre>
     *
     * @param local a regular file or a directory on this machine
     * @param path where to put it in the sandbox
     * @return the new file's info
     * @throws FileOperationException naming the local path when it is missing or unreadable, or the sandbox path
     *     when it cannot be written
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public FileInfo upload(Path local, String path) {
        return upload(local, path, null);
    }

    /**
     * Copies a file or a directory tree from this machine into the sandbox, reporting progress against the local
     * file's size (for a directory: the size of its files, and its entries through {@link
     * TransferListener#entries}).
     *
     * <pre>{@code
     * client.files().upload(Path.of("dataset.parquet"), "data/dataset.parquet",
     *         (done, total) -> bar.update(100 * done / Math.max(1, total)));
     * }</pre>
     *
     * @param local a regular file or a directory on this machine
     * @param path where to put it in the sandbox
     * @param listener hears the progress, or {@code null}
     * @return the new file's info
     * @throws FileOperationException naming the local path when it is missing or unreadable, or the sandbox path
     *     when it cannot be written
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public FileInfo upload(Path local, String path, @Nullable TransferListener listener) {
        return transfers.upload(local, path, listener);
    }

    /**
     * Copies a file or a directory tree from the sandbox to this machine, replacing the local file if it exists. The
     * bytes go to a temporary file beside {@code local} that is renamed into place at the end, so {@code local} never
     * holds half a file. A directory becomes the new local directory {@code local} (which must not exist), built
     * beside it and renamed into place once complete, checked as {@link SandboxFiles#download(String, Path)} says:
     * nothing is written outside it, entries with climbing or absolute names, links leading out of the tree, hard
     * links and devices fail the download, naming the entry, and leave nothing behind.
     *
     * <pre>{@code
     * long bytes = client.files().download("out/model.bin", Path.of("model.bin"));
     * }</pre>
     *
     * @param path the file in the sandbox
     * @param local where to put it on this machine; its directory must exist
     * @return the number of bytes copied
     * @throws FileOperationException naming the sandbox path when it cannot be read, or the local path when it cannot
     *     be written
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public long download(String path, Path local) {
        return download(path, local, null);
    }

    /**
     * Copies a file or a directory tree from the sandbox to this machine, reporting progress against the file's size
     * when the transfer started (for a directory the total is unknown, -1, until the last call; entries are reported
     * through {@link TransferListener#entries}); see {@link #download(String, Path)}.
     *
     * <pre>{@code
     * client.files().download("logs.tar.gz", Path.of("logs.tar.gz"), (done, total) -> System.out.print("."));
     * }</pre>
     *
     * @param path the file in the sandbox
     * @param local where to put it on this machine; its directory must exist
     * @param listener hears the progress, or {@code null}
     * @return the number of bytes copied
     * @throws FileOperationException naming the sandbox path when it cannot be read, or the local path when it cannot
     *     be written
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public long download(String path, Path local, @Nullable TransferListener listener) {
        return transfers.download(path, local, listener);
    }

    /**
     * Lists a directory's entries (not recursively), in name order.
     *
     * <pre>{@code
     * for (FileInfo entry : client.files().list("out")) {
     *     System.out.println(entry.type() + " " + entry.name() + " " + entry.size());
     * }
     * }</pre>
     *
     * @param path the directory
     * @return one info per entry
     * @throws FileOperationException when it does not exist or is not a directory
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public List<FileInfo> list(String path) {
        return list(path, 1);
    }

    /**
     * Lists a directory and its subdirectories to a depth, in pre-order (each directory before its entries, entries
     * sorted by name), symbolic links not followed. Adapts {@link SandboxFiles#list(String, int)}.
     *
     * <pre>{@code
     * for (FileInfo f : client.files().list("src", Integer.MAX_VALUE)) {
     *     System.out.println(f.path());
     * }
     * }</pre>
     *
     * @param path the directory
     * @param depth 1 for its entries, 2 with theirs, ...; capped at {@link SandboxFiles#LIST_MAX_DEPTH}
     * @return the entries
     * @throws dev.sandbox.InvalidArgumentException naming {@code depth} when below 1
     * @throws FileOperationException when it does not exist, is not a directory, or has more than {@link
     *     SandboxFiles#LIST_MAX_ENTRIES} entries ({@link FileOperationException.Reason#TOO_LARGE})
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public List<FileInfo> list(String path, int depth) {
        return List.copyOf(await(
                files("FileClient.list").list(path, depth).collectList(), "FileClient.list", "listing of " + path));
    }

    /**
     * Describes a path, without following a final symbolic link.
     *
     * <pre>{@code
     * FileInfo info = client.files().stat("out/report.csv");
     * System.out.printf("%d bytes, mode %o, modified %s%n", info.size(), info.mode(), info.modifiedAt());
     * }</pre>
     *
     * @param path the path
     * @return its info
     * @throws FileOperationException with {@link FileOperationException.Reason#NOT_FOUND} when it does not exist
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public FileInfo stat(String path) {
        return await(files("FileClient.stat").stat(path), "FileClient.stat", "stat of " + path);
    }

    /**
     * Whether a path exists (a dangling symbolic link counts: it is there).
     *
     * <pre>{@code
     * if (!client.files().exists("venv")) client.process().run(ExecOptions.shell("python3 -m venv venv"));
     * }</pre>
     *
     * @param path the path
     * @return whether it exists; adapts {@link SandboxFiles#exists(String)}
     * @throws FileOperationException for failures other than not found, such as permission denied
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public boolean exists(String path) {
        return await(files("FileClient.exists").exists(path), "FileClient.exists", "exists of " + path);
    }

    /**
     * Creates a directory and any missing parents, and says whether this call created it, as {@link
     * SandboxFiles#mkdir} does: {@code false} when a directory (or a link to one) was there already, as E2B's
     * {@code make_dir} answers; at most one of two racing calls gets {@code true}.
     *
     * <pre>{@code
     * if (!client.files().mkdir("out/frames")) {
     *     log.info("out/frames was there already");
     * }
     * }</pre>
     *
     * @param path the directory
     * @return {@code true} when this call created it, {@code false} when it was a directory already
     * @throws FileOperationException with {@link FileOperationException.Reason#ALREADY_EXISTS} when something other
     *     than a directory is there, {@link FileOperationException.Reason#NOT_A_DIRECTORY} when a parent is not a
     *     directory
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public boolean mkdir(String path) {
        return await(files("FileClient.mkdir").mkdir(path), "FileClient.mkdir", "mkdir of " + path);
    }

    /**
     * Removes a file, a symbolic link (not its target) or an empty directory; a path that is not there is no error
     * (see {@link #remove(String, boolean)}).
     *
     * <pre>{@code
     * client.files().remove("tmp.txt");
     * }</pre>
     *
     * @param path the path
     * @throws FileOperationException with {@link FileOperationException.Reason#DIRECTORY_NOT_EMPTY}
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void remove(String path) {
        remove(path, false);
    }

    /**
     * Removes a path; with {@code recursive}, a directory and everything in it. As {@link SandboxFiles#remove(String,
     * boolean)} does, and like {@code rm -f} and E2B's {@code remove}, a path that is not there ({@link #exists} says
     * {@code false}) is removed already: the call returns, so a retry or a cleanup that races another succeeds; ask
     * {@link #exists} first to know whether it was there.
     *
     * <pre>{@code
     * client.files().remove("build", true);
     * }</pre>
     *
     * @param path the path
     * @param recursive whether a non-empty directory is removed with its content
     * @throws FileOperationException with {@link FileOperationException.Reason#DIRECTORY_NOT_EMPTY} when not recursive,
     *     or another reason when the path is there but cannot be removed
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void remove(String path, boolean recursive) {
        awaitDone(files("FileClient.remove").remove(path, recursive), "FileClient.remove", "removal of " + path);
    }

    /**
     * Moves or renames a path; the target must not exist.
     *
     * <pre>{@code
     * client.files().move("out/tmp.csv", "out/final.csv");
     * }</pre>
     *
     * @param from the path to move
     * @param to its new path
     * @throws FileOperationException with {@link FileOperationException.Reason#NOT_FOUND} for {@code from} or {@link
     *     FileOperationException.Reason#ALREADY_EXISTS} for {@code to}
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void move(String from, String to) {
        awaitDone(files("FileClient.move").move(from, to), "FileClient.move", "move of " + from + " to " + to);
    }

    /**
     * Watches a directory, not recursively: the same as {@link #watch(String, boolean) watch(path, false)}.
     *
     * <pre>{@code
     * try (FileWatch watch = client.files().watch("inbox")) {
     *     for (FileEvent event : watch) {
     *         if (event.kind() == FileEvent.Kind.CREATED) process(event.path());
     *     }
     * }
     * }</pre>
     *
     * @param path the directory
     * @return the watch, live
     * @throws FileOperationException when the path does not exist or is not a directory
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public FileWatch watch(String path) {
        return watch(path, false);
    }

    /**
     * Watches a directory for created, modified and deleted entries, with {@code recursive} its subdirectories at any
     * depth too, until the returned watch is closed. Returns once the watch is live: every change made after it
     * returned is reported, with the events of {@link SandboxFiles#watch(String, boolean)}'s table (the
     * {@link dev.sandbox.FileEvent.Kind#READY} is consumed here). Iterating waits for each change at most for the client's default
     * timeout.
     *
     * <pre>{@code
     * try (FileWatch watch = client.files().watch("out", true)) {
     *     client.process().run(ExecOptions.shell("mkdir -p out/a/b && echo x > out/a/b/f"));
     *     FileEvent event = watch.poll(Duration.ofSeconds(5)); // CREATED .../out/a
     * }
     * }</pre>
     *
     * @param path the directory
     * @param recursive whether to watch its subdirectories too
     * @return the watch, live
     * @throws FileOperationException when the path does not exist or is not a directory
     * @throws dev.sandbox.SandboxTimeoutException when the watch is not live within the client's default timeout
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public FileWatch watch(String path, boolean recursive) {
        FileInfo info = stat(path); // fails here, rather than at the first read, when there is nothing to watch
        if (info.type() == FileInfo.Type.FILE || info.type() == FileInfo.Type.OTHER) {
            throw new FileOperationException(
                    path, FileOperationException.Reason.NOT_A_DIRECTORY, path + ": not a directory", null);
        }
        String operation = "watch of " + path;
        Blocking.checkNotInterrupted(operation);
        return FileWatch.open(
                files("FileClient.watch").watch(path, recursive), core.defaultTimeout, WATCH_PREFETCH, operation);
    }
}
