package dev.sandbox.implementation.files;

import dev.sandbox.FileOperationException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Directory trees on this machine: {@link #read} walks a local directory (trusted: it is the user's) into {@link
 * TreeItem}s; {@link #write} makes a local directory from items that come from a sandbox (hostile).
 *
 * <p>A write never touches anything outside a new directory it creates: the items go into a hidden temporary
 * directory beside the target ({@code .<name>.part-<random>}, mode 0700), which is renamed to the target only when
 * the whole tree arrived; on any failure it is removed and the target does not exist. Inside it, every name passes
 * {@link TreeNames#check}; files are created exclusively ({@code O_CREAT|O_EXCL|O_NOFOLLOW}) under directories this
 * write made; symbolic links are checked by {@link TreeNames#checkLink} and made only after every file and
 * directory, so nothing is ever written through one; a name that exists already (a duplicate, or an entry beneath a
 * link or a file) fails the write. Permission bits are applied without setuid, setgid or sticky bits;
 * directories keep read, write and search for their owner. Limits: {@link TreeNames}.
 */
public final class LocalTree {
    private LocalTree() {}

    // ------------------------------------------------------------------ reading the user's tree

    /** One entry of a local tree found by the walk. */
    private record Found(Path path, TreeItem.Entry entry) {}

    /**
     * Walks a local directory, not following symbolic links, directories before their content, names sorted.
     * Sockets, FIFOs and devices are skipped.
     *
     * @param dir the directory
     * @return the tree (the directory itself is not an entry)
     */
    public static Flux<TreeItem> read(Path dir) {
        return Mono.fromCallable(() -> walk(dir))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMapMany(Flux::fromIterable)
                .concatMap(
                        f -> f.entry().kind() != TreeItem.Kind.FILE
                                ? Mono.just(f.entry())
                                : Flux.concat(
                                        Mono.just(f.entry()),
                                        exactly(
                                                LocalFileIo.read(
                                                        f.path(), f.path().toString()),
                                                f.entry().size(),
                                                f.path().toString())),
                        1);
    }

    /**
     * Content as {@link TreeItem.Data}, failing when it is not exactly {@code size} bytes (the file changed).
     *
     * @param content the bytes
     * @param size the size announced
     * @param shown the path to name in errors
     * @return the items
     */
    public static Flux<TreeItem> exactly(Flux<ByteBuffer> content, long size, String shown) {
        return Flux.defer(() -> {
            long[] seen = {0};
            return content.<TreeItem>map(b -> {
                        seen[0] += b.remaining();
                        if (seen[0] > size) {
                            throw changed(shown);
                        }
                        return new TreeItem.Data(b);
                    })
                    .concatWith(Mono.defer(() -> seen[0] == size ? Mono.empty() : Mono.error(changed(shown))));
        });
    }

    private static FileOperationException changed(String shown) {
        return new FileOperationException(
                shown,
                FileOperationException.Reason.IO_ERROR,
                shown + ": the file changed size while it was transferred",
                null);
    }

    private static List<Found> walk(Path dir) throws IOException {
        List<Found> out = new ArrayList<>();
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                if (!d.equals(dir)) {
                    add(d, TreeItem.Kind.DIRECTORY, 0, "");
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                if (attrs.isSymbolicLink()) {
                    add(f, TreeItem.Kind.SYMLINK, 0, Files.readSymbolicLink(f).toString());
                } else if (attrs.isRegularFile()) {
                    add(f, TreeItem.Kind.FILE, attrs.size(), "");
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                throw e;
            }

            private void add(Path p, TreeItem.Kind kind, long size, String link) throws IOException {
                String name = dir.relativize(p).toString();
                int mode = kind == TreeItem.Kind.SYMLINK ? 0777 : mode(p);
                out.add(new Found(p, new TreeItem.Entry(name, kind, mode, size, link)));
                if (out.size() > TreeNames.MAX_ENTRIES) {
                    throw TreeNames.tooLarge(name, "more than " + TreeNames.MAX_ENTRIES + " entries");
                }
            }
        });
        // walkFileTree gives no order: sort by name components, so that a directory comes before its content
        out.sort((a, b) -> compare(a.entry().name(), b.entry().name()));
        return out;
    }

    private static int compare(String a, String b) {
        String[] x = a.split("/");
        String[] y = b.split("/");
        for (int i = 0; i < Math.min(x.length, y.length); i++) {
            int c = x[i].compareTo(y[i]);
            if (c != 0) {
                return c;
            }
        }
        return Integer.compare(x.length, y.length);
    }

    private static int mode(Path p) throws IOException {
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS);
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

    private static Set<PosixFilePermission> permissions(int mode) {
        Set<PosixFilePermission> out = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] all = {
            PosixFilePermission.OTHERS_EXECUTE,
            PosixFilePermission.OTHERS_WRITE,
            PosixFilePermission.OTHERS_READ,
            PosixFilePermission.GROUP_EXECUTE,
            PosixFilePermission.GROUP_WRITE,
            PosixFilePermission.GROUP_READ,
            PosixFilePermission.OWNER_EXECUTE,
            PosixFilePermission.OWNER_WRITE,
            PosixFilePermission.OWNER_READ
        };
        for (int i = 0; i < all.length; i++) {
            if ((mode & (1 << i)) != 0) {
                out.add(all[i]);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ writing a sandbox's tree

    /**
     * Makes {@code target} from the items, as the class describes; {@code target} must not exist.
     *
     * @param items the tree, from a sandbox
     * @param target the local directory to create
     * @param progress hears entries and bytes written, or {@code null}
     * @return the content bytes written
     */
    public static Mono<Long> write(Publisher<TreeItem> items, Path target, Consumer<TreeProgress> progress) {
        return Mono.defer(() -> {
            Path abs = target.toAbsolutePath();
            // the partial tree is removed on a blocking-capable thread, before an error is passed on
            return Mono.usingWhen(
                    Mono.fromSupplier(() -> new Writer(abs, progress)), // touches nothing until the first item
                    w -> Flux.from(items)
                            .publishOn(Schedulers.boundedElastic(), 4)
                            .doOnNext(w::accept)
                            .then(Mono.fromCallable(w::commit).subscribeOn(Schedulers.boundedElastic())),
                    w -> Mono.empty(),
                    (w, error) -> abort(w, false),
                    w -> abort(w, true));
        });
    }

    /**
     * Removes the partial tree: at once on a thread that may block (a cancel from a blocking caller then returns
     * with nothing left behind), else on a bounded-elastic thread.
     */
    private static Mono<Void> abort(Writer w, boolean cancelled) {
        Mono<Void> remove = Mono.fromRunnable(() -> w.abort(cancelled));
        return Schedulers.isInNonBlockingThread() ? remove.subscribeOn(Schedulers.boundedElastic()) : remove;
    }

    /**
     * Counts of a transfer so far, for progress.
     *
     * @param entries entries written
     * @param bytes content bytes written
     */
    public record TreeProgress(long entries, long bytes) {}

    /** The writer behind {@link #write}; its methods are synchronized, since a cancel may race the last item. */
    static final class Writer {
        private Path target; // as given (absolute) until start() resolves its parent
        private Path temp; // made at the first item or the commit
        private final Consumer<TreeProgress> progress;
        private final Set<String> names = new HashSet<>();
        private final List<TreeItem.Entry> links = new ArrayList<>();
        private final List<TreeItem.Entry> dirs = new ArrayList<>();
        private FileChannel open;
        private TreeItem.Entry openEntry;
        private long openRemaining;
        private long entries;
        private long bytes;
        private boolean committed;
        private boolean closed;

        Writer(Path target, Consumer<TreeProgress> progress) {
            this.target = target;
            this.progress = progress;
        }

        /** Checks the target and makes the temporary directory, once, on a thread that may block. */
        private void start() {
            if (temp != null) {
                return;
            }
            target = resolved(target);
            Path parent = target.getParent();
            if (!Files.isDirectory(parent)) {
                throw LocalFileIo.failure(target.toString(), FileOperationException.Reason.NOT_FOUND, null);
            }
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                throw LocalFileIo.failure(target.toString(), FileOperationException.Reason.ALREADY_EXISTS, null);
            }
            Path made = parent.resolve("." + target.getFileName() + ".part-" + UUID.randomUUID());
            try {
                Files.createDirectory(made);
                this.temp = made;
                Files.setPosixFilePermissions(temp, permissions(0700));
            } catch (IOException e) {
                throw LocalFileIo.failure(target.toString(), e);
            }
        }

        /**
         * The target as the system would find it: its parent's real path (any {@code .}, {@code ..} and links in it
         * resolved as {@code mkdir} would) and its own name, which is never followed. Without this, a target such as
         * {@code ./out} had a temporary directory whose name kept the {@code .}, and every entry, once normalized,
         * seemed to be outside it. A target whose last segment is {@code .} or {@code ..} (or the root) names an
         * existing directory or nothing.
         */
        private static Path resolved(Path abs) {
            Path name = abs.getFileName();
            if (name == null || name.toString().equals(".") || name.toString().equals("..")) {
                FileOperationException.Reason reason = Files.exists(abs)
                        ? FileOperationException.Reason.ALREADY_EXISTS
                        : FileOperationException.Reason.NOT_FOUND;
                throw LocalFileIo.failure(abs.toString(), reason, null);
            }
            try {
                return abs.getParent().toRealPath().resolve(name);
            } catch (IOException e) { // NoSuchFileException: NOT_FOUND
                throw LocalFileIo.failure(abs.toString(), e);
            }
        }

        synchronized void accept(TreeItem item) {
            if (closed) {
                throw new IllegalStateException("the tree writer is closed");
            }
            start();
            try {
                if (item instanceof TreeItem.Data d) {
                    data(d.bytes());
                } else if (item instanceof TreeItem.Entry e) {
                    entry(e);
                }
            } catch (IOException e) {
                throw LocalFileIo.failure(openEntry == null ? target.toString() : shown(openEntry.name()), e);
            }
        }

        private String shown(String name) {
            return target.resolve(TreeNames.printable(name)).toString();
        }

        private void data(ByteBuffer b) throws IOException {
            int n = b.remaining();
            if (open == null || n > openRemaining) {
                throw new FileOperationException(
                        openEntry == null ? target.toString() : shown(openEntry.name()),
                        FileOperationException.Reason.IO_ERROR,
                        "content beyond the size of entry '"
                                + (openEntry == null ? "" : TreeNames.printable(openEntry.name())) + "'",
                        null);
            }
            while (b.hasRemaining()) {
                open.write(b);
            }
            openRemaining -= n;
            bytes += n;
            if (openRemaining == 0) {
                closeOpen();
            }
            report();
        }

        private void closeOpen() throws IOException {
            if (open != null) {
                open.close();
                open = null;
            }
        }

        private void entry(TreeItem.Entry e) throws IOException {
            if (open != null) {
                throw new FileOperationException(
                        shown(openEntry.name()),
                        FileOperationException.Reason.IO_ERROR,
                        "entry '" + TreeNames.printable(openEntry.name()) + "' ended before its size",
                        null);
            }
            String name = TreeNames.check(e.name());
            if (++entries > TreeNames.MAX_ENTRIES) {
                throw TreeNames.tooLarge(name, "more than " + TreeNames.MAX_ENTRIES + " entries");
            }
            if (!names.add(name)) {
                throw TreeNames.refused(name, "a second entry of the same name");
            }
            Path path = temp.resolve(name);
            if (!path.normalize().startsWith(temp)) { // TreeNames.check already refuses this; a second guard
                throw TreeNames.refused(name, "a name outside the target");
            }
            switch (e.kind()) {
                case DIRECTORY -> {
                    parents(name, path);
                    Files.createDirectory(path);
                    dirs.add(e);
                }
                case SYMLINK -> {
                    TreeNames.checkLink(name, e.linkTarget());
                    parents(name, path);
                    links.add(e); // made last: nothing is written through a link
                }
                case FILE -> {
                    if (e.size() < 0 || e.size() > TreeNames.MAX_TOTAL_BYTES - bytes) {
                        throw TreeNames.tooLarge(
                                name, "more than " + TreeNames.MAX_TOTAL_BYTES + " bytes of content in all");
                    }
                    parents(name, path);
                    open = FileChannel.open(
                            path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
                    Files.setPosixFilePermissions(path, permissions(0600));
                    fileModes.put(name, e.mode());
                    openEntry = e;
                    openRemaining = e.size();
                    if (openRemaining == 0) {
                        closeOpen();
                    }
                }
            }
            report();
        }

        /** The entry's parent directories must be directories this writer made (or the root). */
        private void parents(String name, Path path) {
            Path parent = path.getParent();
            if (parent.equals(temp)) {
                return;
            }
            String parentName = temp.relativize(parent).toString();
            if (!names.contains(parentName) || !Files.isDirectory(parent, LinkOption.NOFOLLOW_LINKS)) {
                throw TreeNames.refused(
                        name, "its parent '" + TreeNames.printable(parentName) + "' is not a directory of the tree");
            }
        }

        private void report() {
            if (progress != null) {
                progress.accept(new TreeProgress(entries, bytes));
            }
        }

        synchronized long commit() throws IOException {
            if (closed) {
                throw new IllegalStateException("the tree writer is closed");
            }
            start();
            if (open != null) {
                throw new FileOperationException(
                        shown(openEntry.name()),
                        FileOperationException.Reason.IO_ERROR,
                        "the tree ended inside entry '" + TreeNames.printable(openEntry.name()) + "'",
                        null);
            }
            for (TreeItem.Entry link : links) {
                Path path = temp.resolve(link.name());
                try {
                    Files.createSymbolicLink(path, Path.of(link.linkTarget()));
                } catch (java.nio.file.FileAlreadyExistsException x) {
                    throw TreeNames.refused(link.name(), "a symbolic link over an entry of the same name");
                }
            }
            // files first, then directories deepest first (a directory keeps its owner's rights, so it can be removed)
            for (String name : names) {
                Path p = temp.resolve(name);
                if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    Files.setPosixFilePermissions(p, permissions(modeOf(name) & 0777));
                }
            }
            for (int i = dirs.size() - 1; i >= 0; i--) {
                TreeItem.Entry d = dirs.get(i);
                Files.setPosixFilePermissions(temp.resolve(d.name()), permissions((d.mode() & 0777) | 0700));
            }
            Files.setPosixFilePermissions(temp, permissions(0755));
            try {
                Files.move(temp, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } catch (java.nio.file.FileAlreadyExistsException x) {
                throw LocalFileIo.failure(target.toString(), FileOperationException.Reason.ALREADY_EXISTS, null);
            }
            committed = true;
            closed = true;
            return bytes;
        }

        private final java.util.Map<String, Integer> fileModes = new java.util.HashMap<>();

        private int modeOf(String name) {
            return fileModes.getOrDefault(name, 0644);
        }

        /**
         * Removes the partial tree; on a cancel that came after the commit, before its result was delivered, the
         * committed tree too (whoever cancelled never learns that it was made).
         */
        synchronized void abort(boolean cancelled) {
            closed = true;
            if (committed) {
                if (cancelled) {
                    delete(target);
                }
                return;
            }
            try {
                closeOpen();
            } catch (IOException ignored) {
                // removed below
            }
            if (temp != null) {
                delete(temp);
            }
        }
    }

    /** Removes a tree without following symbolic links (best effort). */
    static void delete(Path root) {
        try {
            if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                    Files.setPosixFilePermissions(d, permissions(0700));
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(f);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path f, IOException e) {
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException ignored) {
            // best effort: the name is hidden and unique
        }
    }
}
