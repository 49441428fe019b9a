package dev.sandbox.blocking;

import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.TransferProgress;
import dev.sandbox.WriteOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import reactor.core.Disposable;

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
    private static final int CHUNK = SandboxFiles.CHUNK_SIZE;
    private static final int WATCH_PREFETCH = 32;

    private final ClientCore core;

    FileClient(ClientCore core) {
        this.core = core;
    }

    private SandboxFiles files(String method) {
        Blocking.checkCanBlock(method);
        core.ensureOpen();
        return core.session.files();
    }

    private <T> T await(reactor.core.publisher.Mono<T> mono, String method, String operation) {
        return Blocking.await(mono, core.defaultTimeout, method, operation);
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

    private FileReadStream openRead(String path, String method) {
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
    public FileInfo write(String path, InputStream content, TransferListener listener) {
        Objects.requireNonNull(content, "content");
        return pump(path, content, -1, listener, "FileClient.write", "write of " + path, UncheckedIOException::new);
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
    public FileInfo upload(Path local, String path, TransferListener listener) {
        Objects.requireNonNull(local, "local");
        Objects.requireNonNull(path, "path");
        Blocking.checkCanBlock("FileClient.upload");
        core.ensureOpen();
        if (Files.isDirectory(local, LinkOption.NOFOLLOW_LINKS)) {
            long[] totals = localTotals(local);
            return tree(
                    listener,
                    totals[1],
                    totals[0],
                    "upload of " + local + " to " + path,
                    (f, progress) -> f.upload(local, path, progress),
                    null);
        }
        try (InputStream in = Files.newInputStream(local)) {
            long total = Files.size(local);
            return pump(
                    path,
                    in,
                    total,
                    listener,
                    "FileClient.upload",
                    "upload of " + local + " to " + path,
                    e -> LocalIo.failure(local, e));
        } catch (IOException e) {
            throw LocalIo.failure(local, e);
        }
    }

    /**
     * Feeds {@code in} to a reactive write from the calling thread, one chunk per unit of demand, then waits for the
     * file to be committed.
     */
    private FileInfo pump(
            String path,
            InputStream in,
            long total,
            TransferListener listener,
            String method,
            String operation,
            Function<IOException, RuntimeException> readFailure) {
        SandboxFiles files = files(method);
        Blocking.checkNotInterrupted(operation);
        Duration timeout = core.defaultTimeout;
        ContentPump content = new ContentPump();
        CompletableFuture<FileInfo> result = new CompletableFuture<>();
        Disposable subscription = Blocking.withCallerContext(files.write(path, content))
                .subscribe(result::complete, result::completeExceptionally);
        result.whenComplete((info, error) -> content.stop());
        Progress progress = new Progress(listener, total);
        boolean done = false;
        try {
            while (true) {
                ContentPump.Wait wait = content.awaitDemand(Blocking.nanos(timeout));
                if (wait == ContentPump.Wait.TIMEOUT) {
                    throw new SandboxTimeoutException("sending the next bytes of the " + operation, timeout);
                }
                if (wait == ContentPump.Wait.STOPPED) {
                    break; // the write ended early: its result says why
                }
                if (Thread.currentThread().isInterrupted()) {
                    throw new SandboxInterruptedException(operation, null);
                }
                byte[] chunk = new byte[CHUNK];
                int n;
                try {
                    n = in.readNBytes(chunk, 0, CHUNK);
                } catch (IOException e) {
                    throw readFailure.apply(e);
                }
                if (n == 0) {
                    content.complete();
                    break;
                }
                content.emit(ByteBuffer.wrap(chunk, 0, n));
                progress.advance(n);
            }
            FileInfo info = awaitResult(result, timeout, operation);
            progress.finish();
            done = true;
            return info;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxInterruptedException(operation, e);
        } finally {
            if (!done) {
                subscription.dispose(); // cancels the write: the temporary file is removed
            }
        }
    }

    private static <T> T awaitResult(CompletableFuture<T> result, Duration timeout, String operation)
            throws InterruptedException {
        try {
            return result.get(Blocking.nanos(timeout), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new SandboxTimeoutException("completing the " + operation, timeout);
        } catch (ExecutionException e) {
            throw Blocking.rethrow(e.getCause(), operation);
        }
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
    public long download(String path, Path local, TransferListener listener) {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(local, "local");
        FileInfo info = stat(path);
        if (info.type() == FileInfo.Type.DIRECTORY) {
            return tree(
                    listener,
                    -1,
                    -1,
                    "download of " + path + " to " + local,
                    (f, progress) -> f.download(path, local, progress),
                    () -> LocalIo.deleteTree(local)); // made by this call: a listener that throws undoes it
        }
        long total = info.type() == FileInfo.Type.FILE ? info.size() : -1;
        Path target = local.toAbsolutePath();
        Path parent = target.getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw LocalIo.failure(target, FileOperationException.Reason.NOT_FOUND, null);
        }
        if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
            throw LocalIo.failure(target, FileOperationException.Reason.IS_A_DIRECTORY, null);
        }
        Path temp = parent.resolve("." + target.getFileName() + ".part-" + UUID.randomUUID());
        Progress progress = new Progress(listener, total);
        boolean moved = false;
        try (FileReadStream in = openRead(path, "FileClient.download")) {
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                for (ByteBuffer chunk = in.nextChunk(); chunk != null; chunk = in.nextChunk()) {
                    int n = chunk.remaining();
                    while (chunk.hasRemaining()) {
                        out.write(chunk);
                    }
                    progress.advance(n);
                }
            }
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
            moved = true;
        } catch (IOException e) {
            throw LocalIo.failure(target, e);
        } finally {
            if (!moved) {
                try {
                    Files.deleteIfExists(temp);
                } catch (IOException ignored) {
                    // best effort: the temporary file has a unique, hidden name
                }
            }
        }
        progress.finish();
        return progress.done();
    }

    /** Entries ([0]) and content bytes ([1]) of a local tree, as a directory upload counts them. */
    private static long[] localTotals(Path dir) {
        long[] totals = {0, 0};
        try {
            Files.walkFileTree(dir, new java.nio.file.SimpleFileVisitor<>() {
                @Override
                public java.nio.file.FileVisitResult preVisitDirectory(
                        Path d, java.nio.file.attribute.BasicFileAttributes attrs) {
                    if (!d.equals(dir)) {
                        totals[0]++;
                    }
                    return java.nio.file.FileVisitResult.CONTINUE;
                }

                @Override
                public java.nio.file.FileVisitResult visitFile(
                        Path f, java.nio.file.attribute.BasicFileAttributes attrs) {
                    if (attrs.isRegularFile() || attrs.isSymbolicLink()) {
                        totals[0]++;
                        totals[1] += attrs.isRegularFile() ? attrs.size() : 0;
                    }
                    return java.nio.file.FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw LocalIo.failure(dir, e);
        }
        return totals;
    }

    /**
     * Runs a directory transfer of the reactive API, telling the listener on this thread how far it came; the
     * transfer must move within the default timeout between two reports, or it is cancelled. A listener that throws
     * cancels it (a download's partial tree is removed); if the transfer had already ended, {@code undo} (when given)
     * removes its result.
     */
    private <T> T tree(
            TransferListener listener,
            long totalBytes,
            long totalEntries,
            String operation,
            java.util.function.BiFunction<SandboxFiles, Consumer<TransferProgress>, reactor.core.publisher.Mono<T>>
                    start,
            Runnable undo) {
        SandboxFiles files = files("FileClient." + operation.substring(0, operation.indexOf(' ')));
        Blocking.checkNotInterrupted(operation);
        Duration timeout = core.defaultTimeout;
        AtomicReference<TransferProgress> latest = new AtomicReference<>(new TransferProgress(0, 0));
        Semaphore signal = new Semaphore(0);
        CompletableFuture<T> result = new CompletableFuture<>();
        Disposable subscription = Blocking.withCallerContext(start.apply(files, p -> {
                    latest.set(p);
                    signal.release();
                }))
                .subscribe(result::complete, result::completeExceptionally);
        result.whenComplete((x, e) -> signal.release());
        Progress progress = new Progress(listener, totalBytes);
        long entriesReported = -1;
        boolean done = false;
        try {
            while (!result.isDone()) {
                if (!signal.tryAcquire(Blocking.nanos(timeout), TimeUnit.NANOSECONDS)) {
                    throw new SandboxTimeoutException("moving the next entry of the " + operation, timeout);
                }
                signal.drainPermits();
                TransferProgress p = latest.get();
                long before = progress.done();
                if (listener != null && p.entries() != entriesReported) {
                    entriesReported = p.entries();
                    listener.entries(p.entries(), totalEntries);
                }
                progress.advance(p.bytes() - before);
            }
            T value = awaitResult(result, timeout, operation);
            TransferProgress last = latest.get();
            progress.advance(last.bytes() - progress.done());
            if (listener != null) {
                listener.entries(last.entries(), last.entries());
            }
            progress.finish();
            done = true;
            return value;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxInterruptedException(operation, e);
        } finally {
            if (!done) {
                subscription.dispose();
                if (undo != null && result.isDone() && !result.isCompletedExceptionally()) {
                    undo.run(); // the transfer ended before the failure here could stop it: its result goes too
                }
            }
        }
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
     * Creates a directory and any missing parents; succeeds if it exists already as a directory.
     *
     * <pre>{@code
     * client.files().mkdir("out/frames");
     * }</pre>
     *
     * @param path the directory
     * @throws FileOperationException when the path, or one of its parents, exists and is not a directory
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void mkdir(String path) {
        await(files("FileClient.mkdir").mkdir(path), "FileClient.mkdir", "mkdir of " + path);
    }

    /**
     * Removes a file, a symbolic link (not its target) or an empty directory.
     *
     * <pre>{@code
     * client.files().remove("tmp.txt");
     * }</pre>
     *
     * @param path the path
     * @throws FileOperationException with {@link FileOperationException.Reason#NOT_FOUND} or {@link
     *     FileOperationException.Reason#DIRECTORY_NOT_EMPTY}
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void remove(String path) {
        remove(path, false);
    }

    /**
     * Removes a path; with {@code recursive}, a directory and everything in it.
     *
     * <pre>{@code
     * client.files().remove("build", true);
     * }</pre>
     *
     * @param path the path
     * @param recursive whether a non-empty directory is removed with its content
     * @throws FileOperationException with {@link FileOperationException.Reason#NOT_FOUND}, or {@link
     *     FileOperationException.Reason#DIRECTORY_NOT_EMPTY} when not recursive
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void remove(String path, boolean recursive) {
        await(files("FileClient.remove").remove(path, recursive), "FileClient.remove", "removal of " + path);
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
        await(files("FileClient.move").move(from, to), "FileClient.move", "move of " + from + " to " + to);
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
