package dev.sandbox.implementation.files;

import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.TransferProgress;
import dev.sandbox.UnsupportedFeatureException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Directory transfers composed of a provider's own file operations, shared by the providers: a sandbox directory
 * read as {@link TreeItem}s ({@link #read}, by {@code list} and {@code read}), and items written into a sandbox
 * directory ({@link #write}, by {@code mkdir}, {@code write} and the provider's {@link TreeTarget}); plus {@link
 * #upload} and {@link #download}, which every provider's {@code upload}/{@code download} of a directory is.
 */
public final class SandboxTree {
    private SandboxTree() {}

    /**
     * Reads a sandbox directory as a tree: directories before their content, sockets, FIFOs and devices skipped.
     * Names the sandbox gives are checked ({@link TreeNames}); a file whose size changes while it is read fails the
     * read.
     *
     * @param files the session's files
     * @param root the directory
     * @return the tree (the root itself is not an entry)
     */
    public static Flux<TreeItem> read(SandboxFiles files, String root) {
        return Flux.defer(() -> {
            long[] count = {0};
            return dir(files, root, "", 1, count);
        });
    }

    private static Flux<TreeItem> dir(SandboxFiles files, String path, String rel, int depth, long[] count) {
        if (depth > TreeNames.MAX_DEPTH) {
            return Flux.error(TreeNames.tooLarge(rel, "nested deeper than " + TreeNames.MAX_DEPTH + " levels"));
        }
        return files.list(path)
                .take(TreeNames.MAX_ENTRIES + 1L)
                .collectList()
                .flatMapMany(Flux::fromIterable)
                .concatMap(
                        info -> {
                            String name = info.name();
                            String childRel = rel.isEmpty() ? name : rel + "/" + name;
                            // only what keeps the walk inside the directory is checked here; the receiving end
                            // (LocalTree, TarCodec) checks the names in full, and names the entry it refuses
                            if (name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0) {
                                return Flux.error(TreeNames.refused(childRel, "a listed name that is not one name"));
                            }
                            if (++count[0] > TreeNames.MAX_ENTRIES) {
                                return Flux.error(TreeNames.tooLarge(
                                        childRel, "more than " + TreeNames.MAX_ENTRIES + " entries"));
                            }
                            String childPath = TreeNames.join(path, name);
                            int mode = info.mode() & 07777;
                            return switch (info.type()) {
                                case DIRECTORY ->
                                    Flux.concat(
                                            Mono.just(
                                                    new TreeItem.Entry(childRel, TreeItem.Kind.DIRECTORY, mode, 0, "")),
                                            dir(files, childPath, childRel, depth + 1, count));
                                case FILE ->
                                    Flux.concat(
                                            Mono.just(new TreeItem.Entry(
                                                    childRel, TreeItem.Kind.FILE, mode, info.size(), "")),
                                            LocalTree.exactly(files.read(childPath), info.size(), childPath));
                                case SYMLINK ->
                                    Mono.just(new TreeItem.Entry(
                                            childRel,
                                            TreeItem.Kind.SYMLINK,
                                            0777,
                                            0,
                                            info.symlinkTarget().orElse("")));
                                case OTHER -> Flux.empty();
                            };
                        },
                        1);
    }

    /**
     * Writes a tree into a sandbox directory, made with its parents when missing; entries replace files of the same
     * name, directories merge. Symbolic links and permission bits need the provider's {@link TreeTarget}.
     *
     * @param files the session's files
     * @param items the tree
     * @param root the directory
     * @param progress hears entries and bytes written, or {@code null}
     * @return the root's info once everything is written
     */
    public static Mono<FileInfo> write(
            SandboxFiles files, Publisher<TreeItem> items, String root, Consumer<TransferProgress> progress) {
        return Mono.defer(() -> {
            TreeTarget target = files instanceof TreeTarget t ? t : null;
            long[] counts = {0, 0};
            List<TreeItem.Entry> dirs = new ArrayList<>();
            Runnable report = () -> {
                if (progress != null) {
                    progress.accept(new TransferProgress(counts[0], counts[1]));
                }
            };
            Flux<Void> steps = Flux.from(items)
                    .windowUntil(i -> i instanceof TreeItem.Entry, true, 8) // a few chunks ahead, no more
                    .concatMap(
                            window -> window.switchOnFirst((first, all) -> {
                                if (!first.hasValue()) {
                                    return all.then();
                                }
                                if (!(first.get() instanceof TreeItem.Entry e)) {
                                    return Mono.error(new IllegalStateException("tree content before an entry"));
                                }
                                String path = TreeNames.join(root, e.name());
                                Mono<Void> step = switch (e.kind()) {
                                    case DIRECTORY ->
                                        all.then(files.mkdir(path)).then(Mono.fromRunnable(() -> dirs.add(e)));
                                    case SYMLINK ->
                                        all.then(
                                                target != null
                                                        ? target.symlink(path, e.linkTarget())
                                                        : Mono.error(new UnsupportedFeatureException(
                                                                files.getClass().getSimpleName(),
                                                                "symbolic links in a directory upload")));
                                    case FILE ->
                                        files.write(path, all.skip(1).map(d -> {
                                                    ByteBuffer b = ((TreeItem.Data) d).bytes();
                                                    counts[1] += b.remaining();
                                                    report.run();
                                                    return b;
                                                }))
                                                .flatMap(info ->
                                                        target == null || (info.mode() & 07777) == (e.mode() & 07777)
                                                                ? Mono.<Void>empty()
                                                                : target.chmod(path, e.mode() & 07777));
                                };
                                return step.then(Mono.fromRunnable(() -> {
                                    counts[0]++;
                                    report.run();
                                }));
                            }),
                            1);
            return files.mkdir(root)
                    .thenMany(steps)
                    .then(Mono.defer(() -> {
                        if (target == null) {
                            return Mono.empty();
                        }
                        List<TreeItem.Entry> deepestFirst = new ArrayList<>(dirs);
                        java.util.Collections.reverse(deepestFirst);
                        return Flux.fromIterable(deepestFirst)
                                .concatMap(d -> target.chmod(TreeNames.join(root, d.name()), d.mode() & 07777))
                                .then();
                    }))
                    .then(files.stat(root));
        });
    }

    /**
     * An upload as every provider does it: a local directory becomes the sandbox directory {@code path} ({@link
     * #write}); a regular file is written to {@code path}.
     *
     * @param files the session's files
     * @param local a local directory or regular file
     * @param path where it goes in the sandbox
     * @param progress hears progress, or {@code null}
     * @return the info of what {@code path} now is
     */
    public static Mono<FileInfo> upload(
            SandboxFiles files, Path local, String path, Consumer<TransferProgress> progress) {
        return localKind(local).flatMap(kind -> {
            if (kind == LocalKind.DIRECTORY) {
                return write(files, LocalTree.read(local), path, progress);
            }
            if (kind == LocalKind.MISSING) {
                return Mono.error(LocalFileIo.failure(local.toString(), FileOperationException.Reason.NOT_FOUND, null));
            }
            long[] bytes = {0};
            Flux<ByteBuffer> content = LocalFileIo.read(local, local.toString()).doOnNext(b -> {
                bytes[0] += b.remaining();
                if (progress != null) {
                    progress.accept(new TransferProgress(0, bytes[0]));
                }
            });
            return files.write(path, content).doOnSuccess(x -> {
                if (progress != null) {
                    progress.accept(new TransferProgress(1, bytes[0]));
                }
            });
        });
    }

    /**
     * A download as every provider does it: a sandbox directory becomes the new local directory {@code local} ({@link
     * LocalTree#write}, which must not exist); a file replaces {@code local} atomically.
     *
     * @param files the session's files
     * @param path the sandbox path
     * @param local where it goes on this machine
     * @param progress hears progress, or {@code null}
     * @return the content bytes copied
     */
    public static Mono<Long> download(
            SandboxFiles files, String path, Path local, Consumer<TransferProgress> progress) {
        return files.stat(path).flatMap(info -> {
            if (info.type() == FileInfo.Type.DIRECTORY) {
                return download(read(files, path), local, progress);
            }
            Path target = local.toAbsolutePath();
            long[] bytes = {0};
            Flux<ByteBuffer> content = files.read(path).doOnNext(b -> {
                bytes[0] += b.remaining();
                if (progress != null) {
                    progress.accept(new TransferProgress(0, bytes[0]));
                }
            });
            return LocalFileIo.writeAtomically(target, target.toString(), content)
                    .doOnSuccess(n -> {
                        if (progress != null) {
                            progress.accept(new TransferProgress(1, n));
                        }
                    });
        });
    }

    /**
     * A directory download from a tree: {@link LocalTree#write}.
     *
     * @param items the sandbox directory's tree
     * @param local the local directory to create
     * @param progress hears progress, or {@code null}
     * @return the content bytes copied
     */
    public static Mono<Long> download(Publisher<TreeItem> items, Path local, Consumer<TransferProgress> progress) {
        return LocalTree.write(
                items,
                local,
                progress == null ? null : p -> progress.accept(new TransferProgress(p.entries(), p.bytes())));
    }

    /** What a local path is. */
    public enum LocalKind {
        /** A directory (not a link to one). */
        DIRECTORY,
        /** Anything else that exists. */
        OTHER,
        /** Nothing. */
        MISSING
    }

    /**
     * What a local path is, checked off the caller's thread.
     *
     * @param local the path
     * @return its kind
     */
    public static Mono<LocalKind> localKind(Path local) {
        return Mono.fromCallable(() -> Files.isDirectory(local, LinkOption.NOFOLLOW_LINKS)
                        ? LocalKind.DIRECTORY
                        : Files.isRegularFile(local) ? LocalKind.OTHER : LocalKind.MISSING)
                .subscribeOn(Schedulers.boundedElastic());
    }
}
