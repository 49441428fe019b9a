package dev.sandbox.implementation.local;

import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.WriteOptions;
import dev.sandbox.implementation.files.FileArguments;
import dev.sandbox.implementation.files.LocalFileIo;
import dev.sandbox.implementation.files.Removal;
import dev.sandbox.implementation.files.SandboxTree;
import dev.sandbox.implementation.files.TreeTarget;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Callable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The files of a local session: file I/O on bounded-elastic threads, every path resolved beneath the session root's
 * open descriptor (see {@link SessionRoot}), never checked and then re-resolved.
 */
final class LocalFiles implements SandboxFiles, TreeTarget {
    private final SessionRoot root;
    private final Runnable guard;
    private final LocalWatcher watcher;
    private final Scheduler io = Schedulers.boundedElastic();

    LocalFiles(SessionRoot root, Runnable guard, LocalWatcher watcher) {
        this.root = root;
        this.guard = guard;
        this.watcher = watcher;
    }

    /** Runs a step with the root open: checks the session, then holds the root descriptor while the step runs. */
    private <T> T rooted(Callable<T> step) throws Exception {
        guard.run();
        if (!root.acquire()) {
            guard.run(); // the session ended: its typed error
            throw new IllegalStateException("the session root is closed");
        }
        try {
            return step.call();
        } finally {
            root.release();
        }
    }

    private <T> T rootedUnchecked(Callable<T> step) {
        try {
            return rooted(step);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private <T> Mono<T> blocking(String path, Callable<T> body) {
        return Mono.fromCallable(() -> {
                    try {
                        return rooted(body);
                    } catch (UncheckedIOException e) {
                        throw LocalFileIo.failure(path, e.getCause());
                    } catch (IOException e) {
                        throw LocalFileIo.failure(path, e);
                    }
                })
                .subscribeOn(io);
    }

    private FileChannel openRead(String path) {
        return rootedUnchecked(() -> root.openRead("path", path, root.relative("path", path)));
    }

    @Override
    public Flux<ByteBuffer> read(String path) {
        return LocalFileIo.read(() -> openRead(path), path);
    }

    @Override
    public Flux<ByteBuffer> read(String path, long offset, long length) {
        return Flux.defer(() -> {
            FileArguments.checkRange(offset, length);
            return LocalFileIo.read(
                    () -> {
                        FileChannel channel = openRead(path);
                        try {
                            channel.position(offset);
                        } catch (IOException e) {
                            channel.close();
                            throw LocalFileIo.failure(path, e);
                        }
                        return channel;
                    },
                    path,
                    length);
        });
    }

    @Override
    public Mono<byte[]> readAllBytes(String path, long maxBytes) {
        return blocking(path, () -> {
            try (FileChannel channel = root.openRead("path", path, root.relative("path", path))) {
                long size = channel.size();
                if (size > maxBytes) {
                    throw tooLarge(path, size, maxBytes);
                }
                // the file may grow while it is read: never more than the cap
                ByteBuffer buf =
                        ByteBuffer.allocate((int) Math.min(Math.min(size, maxBytes) + 1, Integer.MAX_VALUE - 8));
                while (buf.hasRemaining() && channel.read(buf) >= 0) {
                    // read until the end or one byte past the cap
                }
                if (buf.position() > maxBytes) {
                    throw tooLarge(path, buf.position(), maxBytes);
                }
                return Arrays.copyOf(buf.array(), buf.position());
            }
        });
    }

    private static FileOperationException tooLarge(String path, long size, long maxBytes) {
        return new FileOperationException(
                path,
                FileOperationException.Reason.TOO_LARGE,
                path + ": " + size + " bytes is over the cap of " + maxBytes,
                null);
    }

    @Override
    public Mono<FileInfo> write(String path, Publisher<ByteBuffer> content, WriteOptions options) {
        boolean parents = options.createParents();
        return LocalFileIo.writeAtomically(
                        () -> rooted(() -> {
                            String rel = root.relative("path", path);
                            int slash = rel.lastIndexOf('/');
                            if (parents && slash > 0) {
                                root.mkdirs("path", path, rel.substring(0, slash));
                            }
                            return root.destination("path", path, rel);
                        }),
                        path,
                        content)
                .then(stat(path))
                .subscribeOn(io);
    }

    @Override
    public Mono<FileInfo> upload(Path local, String path) {
        return SandboxTree.upload(this, local, path, null);
    }

    @Override
    public Mono<Long> download(String path, Path local) {
        return SandboxTree.download(this, path, local, null);
    }

    @Override
    public Mono<Void> symlink(String path, String target) {
        return blocking(path, () -> {
                    root.symlink("path", path, root.relative("path", path), target);
                    return path;
                })
                .then();
    }

    @Override
    public Mono<Void> chmod(String path, int mode) {
        return blocking(path, () -> {
                    root.chmod("path", path, root.relative("path", path), mode);
                    return path;
                })
                .then();
    }

    @Override
    public Flux<FileInfo> list(String path, int depth) {
        return Mono.fromSupplier(() -> FileArguments.depth(depth))
                .flatMap(d -> blocking(path, () -> root.list("path", path, root.relative("path", path), d)))
                .flatMapIterable(list -> list);
    }

    @Override
    public Mono<Boolean> exists(String path) {
        return blocking(path, () -> root.exists("path", path, root.relative("path", path)));
    }

    @Override
    public Mono<FileInfo> stat(String path) {
        return blocking(path, () -> root.info("path", path, root.relative("path", path)));
    }

    @Override
    public Mono<Boolean> mkdir(String path) {
        return blocking(path, () -> root.mkdirs("path", path, root.relative("path", path)));
    }

    @Override
    public Mono<Void> remove(String path) {
        return remove(path, false);
    }

    @Override
    public Mono<Void> remove(String path, boolean recursive) {
        return Removal.idempotent(blocking(path, () -> {
                    root.remove("path", path, root.relative("path", path), recursive);
                    return path;
                })
                .then());
    }

    @Override
    public Mono<Void> move(String from, String to) {
        return blocking(from, () -> {
                    root.move(from, root.relative("from", from), to, root.relative("to", to));
                    return to;
                })
                .then();
    }

    @Override
    public Flux<FileEvent> watch(String path, boolean recursive) {
        return Flux.defer(() -> {
                    String rel = rootedUnchecked(() -> root.relative("path", path));
                    int fd = rootedUnchecked(() -> root.openDirectory("path", path, rel));
                    // registered through the descriptor: the watch is on the directory that was resolved
                    return watcher.watch(root, fd, rel, path, recursive);
                })
                .subscribeOn(io)
                .publishOn(Schedulers.parallel(), 32);
    }
}
