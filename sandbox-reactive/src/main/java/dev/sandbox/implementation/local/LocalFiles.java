package dev.sandbox.implementation.local;

import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.implementation.files.LocalFileIo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Comparator;
import java.util.Optional;
import java.util.Set;
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
                        throw LocalFileIo.failure(path, e.getCause());
                    } catch (IOException e) {
                        throw LocalFileIo.failure(path, e);
                    }
                })
                .subscribeOn(io);
    }

    @Override
    public Flux<ByteBuffer> read(String path) {
        return Flux.defer(() -> {
                    guard.run();
                    Path p = paths.resolve("path", path, true);
                    return LocalFileIo.read(p, path);
                })
                .subscribeOn(io);
    }

    @Override
    public Mono<byte[]> readAllBytes(String path, long maxBytes) {
        return blocking(path, () -> {
            Path p = paths.resolve("path", path, true);
            if (Files.isDirectory(p)) {
                throw LocalFileIo.failure(path, FileOperationException.Reason.IS_A_DIRECTORY, null);
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
                    return LocalFileIo.writeAtomically(target, path, content)
                            .then(Mono.fromCallable(() -> stat(target, path)));
                })
                .subscribeOn(io);
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
                                LocalFileIo.failure(local.toString(), FileOperationException.Reason.NOT_FOUND, null));
                    }
                    return write(path, LocalFileIo.read(local, local.toString()));
                })
                .subscribeOn(io);
    }

    @Override
    public Mono<Long> download(String path, Path local) {
        return Mono.defer(() -> {
                    guard.run();
                    Path source = paths.resolve("path", path, true);
                    Path target = local.toAbsolutePath();
                    return LocalFileIo.writeAtomically(target, target.toString(), LocalFileIo.read(source, path));
                })
                .subscribeOn(io);
    }

    @Override
    public Flux<FileInfo> list(String path) {
        return blocking(path, () -> {
                    Path dir = paths.resolve("path", path, true);
                    if (!Files.exists(dir)) {
                        throw LocalFileIo.failure(path, FileOperationException.Reason.NOT_FOUND, null);
                    }
                    if (!Files.isDirectory(dir)) {
                        throw LocalFileIo.failure(path, FileOperationException.Reason.NOT_A_DIRECTORY, null);
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
            throw LocalFileIo.failure(shownPath, e);
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
                        throw LocalFileIo.failure(path, FileOperationException.Reason.ALREADY_EXISTS, null);
                    }
                    try {
                        Files.createDirectories(dir);
                    } catch (FileAlreadyExistsException e) {
                        throw LocalFileIo.failure(path, FileOperationException.Reason.NOT_A_DIRECTORY, e);
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
                        throw LocalFileIo.failure(path, FileOperationException.Reason.NOT_FOUND, null);
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
                        throw LocalFileIo.failure(from, FileOperationException.Reason.NOT_FOUND, null);
                    }
                    if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                        throw LocalFileIo.failure(to, FileOperationException.Reason.ALREADY_EXISTS, null);
                    }
                    try {
                        return Files.move(source, target);
                    } catch (IOException e) {
                        throw LocalFileIo.failure(to, e);
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
                        return Flux.error(LocalFileIo.failure(
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
