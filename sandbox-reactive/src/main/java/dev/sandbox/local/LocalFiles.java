package dev.sandbox.local;

import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Comparator;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** The files of a local session: plain file I/O on bounded-elastic threads, confined to the session root. */
final class LocalFiles implements SandboxFiles {
    private final PathPolicy paths;
    private final Runnable guard;
    private final LocalWatcher watcher;
    private final Scheduler io = Schedulers.boundedElastic();

    LocalFiles(PathPolicy paths, Runnable guard, LocalWatcher watcher) {
        this.paths = paths;
        this.guard = guard;
        this.watcher = watcher;
    }

    private <T> Mono<T> blocking(String path, Callable<T> body) {
        return Mono.fromCallable(() -> {
                    guard.run();
                    try {
                        return body.call();
                    } catch (UncheckedIOException e) {
                        throw PathPolicy.failure(path, e.getCause());
                    } catch (IOException e) {
                        throw PathPolicy.failure(path, e);
                    }
                })
                .subscribeOn(io);
    }

    @Override
    public Flux<ByteBuffer> read(String path) {
        return Flux.defer(() -> {
                    guard.run();
                    Path p = paths.resolve("path", path, true);
                    return readFile(p, path);
                })
                .subscribeOn(io);
    }

    /** Streams a file in chunks, one read per request; runs on the caller's (blocking-capable) thread. */
    static Flux<ByteBuffer> readFile(Path p, String shownPath) {
        return Flux.using(
                () -> {
                    if (Files.isDirectory(p)) {
                        throw PathPolicy.failure(shownPath, FileOperationException.Reason.IS_A_DIRECTORY, null);
                    }
                    try {
                        return FileChannel.open(p, StandardOpenOption.READ);
                    } catch (IOException e) {
                        throw PathPolicy.failure(shownPath, e);
                    }
                },
                channel -> Flux.<ByteBuffer>generate(sink -> {
                    ByteBuffer buf = ByteBuffer.allocate(CHUNK_SIZE);
                    try {
                        int n = channel.read(buf);
                        if (n < 0) {
                            sink.complete();
                        } else {
                            sink.next(buf.flip());
                        }
                    } catch (IOException e) {
                        sink.error(PathPolicy.failure(shownPath, e));
                    }
                }),
                channel -> {
                    try {
                        channel.close();
                    } catch (IOException ignored) {
                        // nothing was written
                    }
                });
    }

    @Override
    public Mono<byte[]> readAllBytes(String path, long maxBytes) {
        return blocking(path, () -> {
            Path p = paths.resolve("path", path, true);
            if (Files.isDirectory(p)) {
                throw PathPolicy.failure(path, FileOperationException.Reason.IS_A_DIRECTORY, null);
            }
            long size = Files.size(p);
            if (size > maxBytes) {
                throw new FileOperationException(
                        path,
                        FileOperationException.Reason.TOO_LARGE,
                        path + ": " + size + " bytes is over the cap of " + maxBytes,
                        null);
            }
            return Files.readAllBytes(p);
        });
    }

    @Override
    public Mono<FileInfo> write(String path, Publisher<ByteBuffer> content) {
        return Mono.defer(() -> {
                    guard.run();
                    Path target = paths.resolve("path", path, false);
                    return writeFile(target, path, content).then(Mono.fromCallable(() -> stat(target, path)));
                })
                .subscribeOn(io);
    }

    /**
     * Writes to a temporary file beside the target and renames it into place, so readers never see half a file.
     */
    static Mono<Void> writeFile(Path target, String shownPath, Publisher<ByteBuffer> content) {
        Scheduler io = Schedulers.boundedElastic();
        return Mono.usingWhen(
                Mono.fromCallable(() -> {
                            Path parent = target.getParent();
                            if (parent == null || !Files.isDirectory(parent)) {
                                throw PathPolicy.failure(
                                        shownPath,
                                        FileOperationException.Reason.NOT_FOUND,
                                        new NoSuchFileException(
                                                String.valueOf(parent), null, "parent directory does not exist"));
                            }
                            if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
                                throw PathPolicy.failure(shownPath, FileOperationException.Reason.IS_A_DIRECTORY, null);
                            }
                            Path temp = parent.resolve("." + target.getFileName() + ".tmp-" + UUID.randomUUID());
                            try {
                                return new TempFile(
                                        temp,
                                        FileChannel.open(
                                                temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE));
                            } catch (IOException e) {
                                throw PathPolicy.failure(shownPath, e);
                            }
                        })
                        .subscribeOn(io),
                temp -> Flux.from(content)
                        .publishOn(io, 2)
                        .doOnNext(buf -> temp.write(buf, shownPath))
                        .then(Mono.fromRunnable(() -> temp.commit(target, shownPath))),
                temp -> Mono.fromRunnable(temp::discard).subscribeOn(io),
                (temp, error) -> Mono.fromRunnable(temp::discard).subscribeOn(io),
                temp -> Mono.fromRunnable(temp::discard).subscribeOn(io));
    }

    private static final class TempFile {
        private final Path path;
        private final FileChannel channel;
        private boolean committed;

        TempFile(Path path, FileChannel channel) {
            this.path = path;
            this.channel = channel;
        }

        void write(ByteBuffer buf, String shownPath) {
            ByteBuffer b = buf.duplicate();
            try {
                while (b.hasRemaining()) {
                    channel.write(b);
                }
            } catch (IOException e) {
                throw PathPolicy.failure(shownPath, e);
            }
        }

        synchronized void commit(Path target, String shownPath) {
            try {
                channel.close();
                try {
                    Files.move(path, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(path, target, StandardCopyOption.REPLACE_EXISTING);
                }
                committed = true;
            } catch (IOException e) {
                throw PathPolicy.failure(shownPath, e);
            }
        }

        synchronized void discard() {
            try {
                channel.close();
                if (!committed) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException ignored) {
                // best effort: the temp file has a unique, hidden name
            }
        }
    }

    @Override
    public Mono<FileInfo> write(String path, byte[] content) {
        byte[] copy = content.clone();
        return write(path, Mono.fromSupplier(() -> ByteBuffer.wrap(copy)));
    }

    @Override
    public Mono<FileInfo> upload(Path local, String path) {
        return Mono.defer(() -> {
                    if (!Files.isRegularFile(local)) {
                        return Mono.error(
                                PathPolicy.failure(local.toString(), FileOperationException.Reason.NOT_FOUND, null));
                    }
                    return write(path, readFile(local, local.toString()).subscribeOn(io));
                })
                .subscribeOn(io);
    }

    @Override
    public Mono<Long> download(String path, Path local) {
        return Mono.defer(() -> {
                    guard.run();
                    Path source = paths.resolve("path", path, true);
                    Path target = local.toAbsolutePath();
                    long[] count = new long[1];
                    Flux<ByteBuffer> content = readFile(source, path).doOnNext(b -> count[0] += b.remaining());
                    return writeFile(target, target.toString(), content).then(Mono.fromSupplier(() -> count[0]));
                })
                .subscribeOn(io);
    }

    @Override
    public Flux<FileInfo> list(String path) {
        return blocking(path, () -> {
                    Path dir = paths.resolve("path", path, true);
                    if (!Files.exists(dir)) {
                        throw PathPolicy.failure(path, FileOperationException.Reason.NOT_FOUND, null);
                    }
                    if (!Files.isDirectory(dir)) {
                        throw PathPolicy.failure(path, FileOperationException.Reason.NOT_A_DIRECTORY, null);
                    }
                    try (Stream<Path> entries = Files.list(dir)) {
                        return entries.sorted(Comparator.comparing(
                                        p -> p.getFileName().toString()))
                                .map(p -> {
                                    try {
                                        return stat(p, p.toString());
                                    } catch (IOException e) {
                                        throw new UncheckedIOException(e);
                                    }
                                })
                                .toList();
                    }
                })
                .flatMapIterable(list -> list);
    }

    @Override
    public Mono<FileInfo> stat(String path) {
        return blocking(path, () -> stat(paths.resolve("path", path, false), path));
    }

    static FileInfo stat(Path p, String shownPath) throws IOException {
        PosixFileAttributes attrs;
        try {
            attrs = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw PathPolicy.failure(shownPath, e);
        }
        FileInfo.Type type = attrs.isSymbolicLink()
                ? FileInfo.Type.SYMLINK
                : attrs.isDirectory()
                        ? FileInfo.Type.DIRECTORY
                        : attrs.isRegularFile() ? FileInfo.Type.FILE : FileInfo.Type.OTHER;
        Optional<String> target =
                attrs.isSymbolicLink() ? Optional.of(Files.readSymbolicLink(p).toString()) : Optional.empty();
        Path name = p.getFileName();
        return new FileInfo(
                p.toString(),
                name == null ? "/" : name.toString(),
                type,
                attrs.size(),
                mode(attrs.permissions()),
                attrs.lastModifiedTime().toInstant(),
                target);
    }

    private static int mode(Set<PosixFilePermission> perms) {
        int mode = 0;
        for (PosixFilePermission perm : perms) {
            mode |= switch (perm) {
                case OWNER_READ -> 0400;
                case OWNER_WRITE -> 0200;
                case OWNER_EXECUTE -> 0100;
                case GROUP_READ -> 040;
                case GROUP_WRITE -> 020;
                case GROUP_EXECUTE -> 010;
                case OTHERS_READ -> 04;
                case OTHERS_WRITE -> 02;
                case OTHERS_EXECUTE -> 01;
            };
        }
        return mode;
    }

    @Override
    public Mono<Void> mkdir(String path) {
        return blocking(path, () -> {
                    Path dir = paths.resolve("path", path, false);
                    if (Files.exists(dir, LinkOption.NOFOLLOW_LINKS) && !Files.isDirectory(dir)) {
                        throw PathPolicy.failure(path, FileOperationException.Reason.ALREADY_EXISTS, null);
                    }
                    try {
                        Files.createDirectories(dir);
                    } catch (FileAlreadyExistsException e) {
                        throw PathPolicy.failure(path, FileOperationException.Reason.NOT_A_DIRECTORY, e);
                    }
                    return dir;
                })
                .then();
    }

    @Override
    public Mono<Void> remove(String path) {
        return remove(path, false);
    }

    @Override
    public Mono<Void> remove(String path, boolean recursive) {
        return blocking(path, () -> {
                    Path p = paths.resolve("path", path, false);
                    if (p.equals(paths.root())) {
                        throw new dev.sandbox.InvalidArgumentException(
                                "path", "path '" + path + "' is the session root, which cannot be removed");
                    }
                    if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
                        throw PathPolicy.failure(path, FileOperationException.Reason.NOT_FOUND, null);
                    }
                    if (recursive && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                        try (Stream<Path> walk = Files.walk(p)) {
                            for (Path each :
                                    walk.sorted(Comparator.reverseOrder()).toList()) {
                                Files.deleteIfExists(each);
                            }
                        }
                    } else {
                        Files.delete(p);
                    }
                    return p;
                })
                .then();
    }

    @Override
    public Mono<Void> move(String from, String to) {
        return blocking(from, () -> {
                    Path source = paths.resolve("from", from, false);
                    Path target = paths.resolve("to", to, false);
                    if (!Files.exists(source, LinkOption.NOFOLLOW_LINKS)) {
                        throw PathPolicy.failure(from, FileOperationException.Reason.NOT_FOUND, null);
                    }
                    if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                        throw PathPolicy.failure(to, FileOperationException.Reason.ALREADY_EXISTS, null);
                    }
                    try {
                        return Files.move(source, target);
                    } catch (IOException e) {
                        throw PathPolicy.failure(to, e);
                    }
                })
                .then();
    }

    @Override
    public Flux<FileEvent> watch(String path) {
        return Flux.defer(() -> {
                    guard.run();
                    Path dir = paths.resolve("path", path, true);
                    if (!Files.isDirectory(dir)) {
                        return Flux.error(PathPolicy.failure(
                                path,
                                Files.exists(dir)
                                        ? FileOperationException.Reason.NOT_A_DIRECTORY
                                        : FileOperationException.Reason.NOT_FOUND,
                                null));
                    }
                    return watcher.watch(dir, path);
                })
                .subscribeOn(io)
                .publishOn(Schedulers.parallel(), 32);
    }
}
