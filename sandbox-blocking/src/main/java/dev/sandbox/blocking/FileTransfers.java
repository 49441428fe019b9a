package dev.sandbox.blocking;

import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.TransferProgress;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
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
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;

/**
 * The transfers of a {@link FileClient} (streamed writes, uploads, downloads, directory trees), driven from the
 * calling thread: split from it by job, it holds no state of its own.
 */
final class FileTransfers {
    private static final int CHUNK = SandboxFiles.CHUNK_SIZE;

    private final ClientCore core;
    private final FileClient client;

    FileTransfers(ClientCore core, FileClient client) {
        this.core = core;
        this.client = client;
    }

    private SandboxFiles files(String method) {
        return client.files(method);
    }

    /** {@link FileClient#upload(Path, String, TransferListener)}. */
    FileInfo upload(Path local, String path, @Nullable TransferListener listener) {
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

    /** {@link FileClient#download(String, Path, TransferListener)}. */
    long download(String path, Path local, @Nullable TransferListener listener) {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(local, "local");
        FileInfo info = client.stat(path);
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
        try (FileReadStream in = client.openRead(path, "FileClient.download")) {
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

    /**
     * Feeds {@code in} to a reactive write from the calling thread, one chunk per unit of demand, then waits for the
     * file to be committed.
     */
    FileInfo pump(
            String path,
            InputStream in,
            long total,
            @Nullable TransferListener listener,
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
            throw Blocking.rethrow(Blocking.causeOf(e), operation);
        }
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
            @Nullable TransferListener listener,
            long totalBytes,
            long totalEntries,
            String operation,
            java.util.function.BiFunction<SandboxFiles, Consumer<TransferProgress>, reactor.core.publisher.Mono<T>>
                    start,
            @Nullable Runnable undo) {
        SandboxFiles files = files("FileClient." + operation.substring(0, operation.indexOf(' ')));
        Blocking.checkNotInterrupted(operation);
        Duration timeout = core.defaultTimeout;
        // read by this thread only after the signal; the first value is a real one, so it is never null
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
                TransferProgress p = Objects.requireNonNull(latest.get());
                long before = progress.done();
                if (listener != null && p.entries() != entriesReported) {
                    entriesReported = p.entries();
                    listener.entries(p.entries(), totalEntries);
                }
                progress.advance(p.bytes() - before);
            }
            T value = awaitResult(result, timeout, operation);
            TransferProgress last = Objects.requireNonNull(latest.get());
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
}
