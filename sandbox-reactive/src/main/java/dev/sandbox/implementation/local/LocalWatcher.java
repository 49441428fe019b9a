package dev.sandbox.implementation.local;

import dev.sandbox.FileEvent;
import dev.sandbox.FileOperationException;
import dev.sandbox.implementation.files.LocalFileIo;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * One inotify instance ({@link Inotify}) for all watches of a provider, and one daemon thread that reads it and
 * dispatches its events, in the kernel's order, to the subscribers of each watched directory. Internal: not part of
 * the public API.
 *
 * <p>Each subscription emits {@link FileEvent.Kind#READY} first, once its directories are registered (the inotify
 * watch exists when {@code register} returns). It hides the SDK's temporary files
 * ({@link LocalFileIo#TEMP_PREFIX}); the rename of one onto its target (a delete of the temporary name followed at once
 * by a create in the same directory) is one {@code MODIFIED} or {@code CREATED} of the target, by the temporary name's
 * marker letter, as the Docker agent does. A recursive subscription registers each subdirectory (not following links)
 * and, for one that appears while it runs, reports what it holds by then as {@code CREATED}, remembering those paths
 * and their files' identity (a bounded map) so that the inotify event of the same creation is not reported again. Each subscriber has a bounded
 * queue; past it, events are replaced by one {@link FileEvent.Kind#OVERFLOW}. Consecutive equal {@code MODIFIED} are
 * coalesced while queued.
 */
public final class LocalWatcher implements AutoCloseable {
    static final int MAX_QUEUED = 1024;

    /** Directories one watch registers at most. */
    static final int MAX_DIRS = 65_536;

    /** Levels below the watched directory a recursive watch goes at most. */
    static final int MAX_DEPTH = 128;

    /** Paths a recursive watch remembers as reported by a scan. */
    static final int MAX_SCANNED = 4096;

    private final Map<Integer, Set<Subscription>> byWd = new HashMap<>(); // guarded by this
    private Inotify inotify; // guarded by this

    /** A watcher with no watch yet; its service and thread start with the first watch. */
    public LocalWatcher() {}

    /**
     * Watches a directory.
     *
     * @param root the session's root, which opens subdirectories beneath it
     * @param fd a descriptor of the watched directory, already resolved; closed once registered
     * @param rel the watched directory relative to the root
     * @param shownPath the path to name in errors
     * @param recursive whether to watch subdirectories too
     */
    Flux<FileEvent> watch(SessionRoot root, int fd, String rel, String shownPath, boolean recursive) {
        return Flux.create(sink -> {
            Subscription sub = new Subscription(sink, root, rel, recursive);
            try {
                register(SessionRoot.proc(fd), sub, rel);
            } catch (IOException e) {
                sink.error(LocalFileIo.failure(shownPath, e));
                return;
            } finally {
                Sys.close(fd);
            }
            sink.onRequest(n -> sub.drain());
            sink.onDispose(sub::close);
            if (recursive && !sub.addTree(rel, 0, false)) {
                sink.error(new FileOperationException(
                        shownPath,
                        FileOperationException.Reason.IO_ERROR,
                        shownPath + ": too many directories to watch (at most " + MAX_DIRS + ", " + MAX_DEPTH
                                + " levels deep, within the system's inotify limit)",
                        null));
                return;
            }
            sub.live();
        });
    }

    /**
     * Registers a directory for a subscription. Holding this lock throughout makes the dispatcher, which takes it to
     * find a watch's subscriptions, see the subscription and its directory before any event of the new watch, and
     * keeps a watch from being removed by one subscription while another adds itself to it.
     */
    private synchronized void register(Path dir, Subscription sub, String rel) throws IOException {
        if (inotify == null) {
            Inotify in = Inotify.open();
            inotify = in;
            Thread.ofPlatform().daemon().name("sandbox-watch").start(() -> in.readUntilClosed(e -> dispatch(e)));
        }
        int wd = inotify.add(dir);
        byWd.computeIfAbsent(wd, k -> ConcurrentHashMap.newKeySet()).add(sub);
        sub.add(wd, rel);
    }

    private synchronized void unregister(int wd, Subscription sub) {
        Set<Subscription> subs = byWd.get(wd);
        if (subs != null && subs.remove(sub) && subs.isEmpty()) {
            byWd.remove(wd);
            if (inotify != null) {
                inotify.remove(wd);
            }
        }
    }

    /** One event, on the reading thread. */
    private void dispatch(Inotify.Event event) {
        if (event.is(Inotify.IN_Q_OVERFLOW)) { // the kernel's queue was full: events of every watch lost
            List<Subscription> all;
            synchronized (this) {
                all = byWd.values().stream().flatMap(Set::stream).distinct().toList();
            }
            all.forEach(Subscription::lost);
            return;
        }
        Set<Subscription> subs;
        synchronized (this) {
            Set<Subscription> current = byWd.get(event.wd());
            subs = current == null ? Set.of() : Set.copyOf(current);
            if (event.is(Inotify.IN_IGNORED)) { // the directory is gone, or the watch was removed: it ended
                byWd.remove(event.wd());
            }
        }
        for (Subscription sub : subs) {
            try {
                if (event.is(Inotify.IN_IGNORED)) {
                    sub.forget(event.wd());
                } else {
                    sub.handle(event);
                }
            } catch (RuntimeException e) {
                sub.sink.error(e); // never lose the dispatcher thread to one subscription
            }
        }
    }

    @Override
    public synchronized void close() {
        if (inotify != null) {
            inotify.close();
            inotify = null;
            byWd.clear();
        }
    }

    /** One subscriber: its directories, its bounded queue, drained as it requests. */
    private final class Subscription {
        private final FluxSink<FileEvent> sink;
        private final SessionRoot root;
        private final String rootRel;
        private final Path rootDir;
        private final boolean recursive;
        private final Map<Integer, String> dirs = new HashMap<>(); // watch descriptor -> rel; guarded by this
        private final Map<Integer, Character> tempMoved = new HashMap<>(); // dispatcher thread only
        private final Map<String, Object> scanned = new LinkedHashMap<>(); // path -> identity; dispatcher thread only
        private final Deque<FileEvent> queue = new ArrayDeque<>(); // guarded by itself
        private final AtomicInteger wip = new AtomicInteger();
        private boolean overflowed; // guarded by queue
        private volatile boolean live;
        private volatile boolean closed;

        Subscription(FluxSink<FileEvent> sink, SessionRoot root, String rel, boolean recursive) {
            this.sink = sink;
            this.root = root;
            this.rootRel = rel;
            this.rootDir = root.display(rel);
            this.recursive = recursive;
            queue.add(new FileEvent(FileEvent.Kind.READY, rootDir.toString()));
        }

        synchronized void add(int wd, String rel) {
            if (closed) {
                LocalWatcher.this.unregister(wd, this);
            } else {
                dirs.put(wd, rel);
            }
        }

        synchronized String dir(int wd) {
            return dirs.get(wd);
        }

        synchronized void forget(int wd) {
            dirs.remove(wd);
        }

        /** Stops watching a directory moved away or deleted, and everything below it. */
        void forgetTree(String rel) {
            List<Integer> gone = new ArrayList<>();
            synchronized (this) {
                dirs.entrySet().removeIf(e -> {
                    boolean below = e.getValue().equals(rel) || e.getValue().startsWith(rel + "/");
                    if (below) {
                        gone.add(e.getKey());
                    }
                    return below;
                });
            }
            for (int wd : gone) {
                LocalWatcher.this.unregister(wd, this);
            }
        }

        void close() {
            List<Integer> wds;
            synchronized (this) {
                closed = true;
                wds = new ArrayList<>(dirs.keySet());
                dirs.clear();
            }
            for (int wd : wds) {
                LocalWatcher.this.unregister(wd, this);
            }
        }

        /**
         * Registers the directories below {@code rel} (not {@code rel} itself), reporting what they hold when
         * {@code report}.
         *
         * @return false when a bound was passed: not everything is watched
         */
        boolean addTree(String rel, int depth, boolean report) {
            if (depth >= MAX_DEPTH) {
                return false;
            }
            int fd;
            try {
                // the watched directory itself may be a link (followed, as for any watch); below it, none is
                fd = depth == 0 ? root.openDirectory("path", rel, rel) : root.openSubdirectory(rel);
            } catch (RuntimeException e) {
                fd = -1;
            }
            if (fd < 0) {
                return true; // gone or replaced meanwhile
            }
            List<String> subdirs = new ArrayList<>();
            boolean complete = true;
            Path shown = root.display(rel);
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(SessionRoot.proc(fd))) {
                for (Path entry : entries) {
                    String name = entry.getFileName().toString();
                    boolean isDir;
                    try {
                        isDir = Files.readAttributes(entry, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                                .isDirectory();
                    } catch (IOException e) {
                        continue; // gone meanwhile
                    }
                    if (!isDir && LocalFileIo.isTempName(name)) {
                        continue;
                    }
                    if (report) {
                        String path = shown.resolve(name).toString();
                        remember(path, identity(entry));
                        offer(new FileEvent(FileEvent.Kind.CREATED, path));
                    }
                    if (isDir) {
                        subdirs.add(rel.isEmpty() ? name : rel + "/" + name);
                    }
                }
            } catch (IOException e) {
                return true; // gone meanwhile
            } finally {
                Sys.close(fd);
            }
            for (String sub : subdirs) {
                complete &= addDir(sub, depth + 1, report);
            }
            return complete;
        }

        /** Registers one directory, then (already watched) scans it. */
        boolean addDir(String rel, int depth, boolean report) {
            synchronized (this) {
                if (closed) {
                    return true;
                }
                if (dirs.size() >= MAX_DIRS) {
                    return false;
                }
            }
            int fd = root.openSubdirectory(rel);
            if (fd < 0) {
                return true;
            }
            try {
                register(SessionRoot.proc(fd), this, rel);
            } catch (IOException e) {
                // the directory went away (fine), or the system's inotify limit was reached (not everything watched)
                return !Files.isDirectory(root.display(rel), LinkOption.NOFOLLOW_LINKS);
            } finally {
                Sys.close(fd);
            }
            return addTree(rel, depth, report);
        }

        private void remember(String path, Object identity) {
            if (identity == null) {
                return; // gone already: its create, if it comes, is reported
            }
            if (scanned.size() >= MAX_SCANNED) {
                scanned.remove(scanned.keySet().iterator().next());
            }
            scanned.put(path, identity);
        }

        /**
         * Whether the create of a path is the one a scan reported already: the same file (inode and birth time, so
         * that a reused inode is another file) still under that name, or the name gone again. A rename onto a
         * name is a create too ({@code IN_MOVED_TO}): a file renamed over a scanned name is another file, reported.
         */
        private boolean seenByScan(String path, Path file) {
            Object was = scanned.remove(path);
            if (was == null) {
                return false;
            }
            Object now = identity(file);
            return now == null || now.equals(was);
        }

        /** Forgets what a scan reported at or below a path deleted or moved out. */
        private void forgetScanned(String path) {
            scanned.keySet().removeIf(p -> p.equals(path) || p.startsWith(path + "/"));
        }

        private static Object identity(Path file) {
            try {
                BasicFileAttributes a =
                        Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                return List.of(String.valueOf(a.fileKey()), a.creationTime());
            } catch (IOException e) {
                return null;
            }
        }

        private int depthOf(String rel) {
            if (rel.length() <= rootRel.length()) {
                return 0;
            }
            String below = rootRel.isEmpty() ? rel : rel.substring(rootRel.length() + 1);
            return (int) below.chars().filter(c -> c == '/').count() + 1;
        }

        /** Events were lost (the kernel's queue overflowed): what a rename or a scan left pending is stale too. */
        void lost() {
            tempMoved.clear();
            scanned.clear(); // deletes may be lost
            overflow();
        }

        void handle(Inotify.Event event) {
            String rel = dir(event.wd());
            if (rel == null) {
                return; // forgotten, or not yet added
            }
            boolean created = event.is(Inotify.IN_CREATE | Inotify.IN_MOVED_TO);
            boolean deleted = event.is(Inotify.IN_DELETE | Inotify.IN_MOVED_FROM);
            if (event.name().isEmpty() || !(created || deleted || event.is(Inotify.IN_MODIFY | Inotify.IN_ATTRIB))) {
                return; // about the directory itself
            }
            Path dir = root.display(rel);
            String name = event.name();
            Path path = dir.resolve(name);
            String childRel = rel.isEmpty() ? name : rel + "/" + name;
            Character marker = tempMoved.remove(event.wd());
            if (LocalFileIo.isTempName(name) && !Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                if (deleted) {
                    // maybe renamed onto its target: the create of the target comes next in this directory
                    tempMoved.put(event.wd(), LocalFileIo.markerOf(name));
                }
                return;
            }
            if (created) {
                if (marker != null && marker == LocalFileIo.OVERWRITE) {
                    offer(new FileEvent(FileEvent.Kind.MODIFIED, path.toString()));
                    return;
                }
                if (!scanned.isEmpty() && seenByScan(path.toString(), path)) {
                    return; // reported (and, a directory, watched) by a scan already
                }
                offer(new FileEvent(FileEvent.Kind.CREATED, path.toString()));
                if (recursive && Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
                    if (!addDir(childRel, depthOf(childRel), true)) {
                        overflow();
                    }
                }
            } else if (deleted) {
                if (!scanned.isEmpty()) {
                    forgetScanned(path.toString());
                }
                offer(new FileEvent(FileEvent.Kind.DELETED, path.toString()));
                if (recursive) {
                    forgetTree(childRel);
                }
            } else {
                offer(new FileEvent(FileEvent.Kind.MODIFIED, path.toString()));
            }
        }

        void overflow() {
            synchronized (queue) {
                overflowed = true;
            }
            drain();
        }

        void offer(FileEvent event) {
            synchronized (queue) {
                if (overflowed) {
                    return; // dropped: the overflow event says so
                }
                FileEvent last = queue.peekLast();
                if (event.kind() == FileEvent.Kind.MODIFIED && event.equals(last)) {
                    return; // coalesced
                }
                if (queue.size() >= MAX_QUEUED) {
                    overflowed = true;
                } else {
                    queue.add(event);
                }
            }
            drain();
        }

        void live() {
            live = true;
            drain();
        }

        void drain() {
            if (!live || wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                while (sink.requestedFromDownstream() > 0 && !sink.isCancelled()) {
                    FileEvent next;
                    synchronized (queue) {
                        next = queue.poll();
                        if (next == null && overflowed) {
                            overflowed = false;
                            next = new FileEvent(FileEvent.Kind.OVERFLOW, rootDir.toString());
                        }
                    }
                    if (next == null) {
                        break;
                    }
                    sink.next(next);
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }
    }
}
