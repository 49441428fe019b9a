package dev.sandbox.implementation.local;

import dev.sandbox.BackendException;
import dev.sandbox.FileEvent;
import dev.sandbox.implementation.files.LocalFileIo;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Schedulers;

/**
 * One {@link WatchService} for all watches of a provider, and one daemon thread that dispatches its events to the
 * subscribers of each watched directory. Each subscriber has a bounded queue; past it, events are replaced by one
 * {@link FileEvent.Kind#OVERFLOW}. Internal: not part of the public API.
 */
public final class LocalWatcher implements AutoCloseable {
    static final int MAX_QUEUED = 1024;

    private final Map<WatchKey, Set<Subscription>> byKey = new HashMap<>(); // guarded by this
    private WatchService service; // guarded by this
    private Thread dispatcher; // guarded by this

    /** A watcher with no watch yet; its service and thread start with the first watch. */
    public LocalWatcher() {}

    /**
     * Watches a directory.
     *
     * @param registered the path to register, e.g. {@code /proc/self/fd/N} of a directory already resolved
     * @param dir the directory as events name it
     * @param shownPath the path to name in errors
     * @param registeredOnce run once the registration is done or failed (frees what {@code registered} names)
     */
    Flux<FileEvent> watch(Path registered, Path dir, String shownPath, Runnable registeredOnce) {
        return Flux.create(sink -> {
            Subscription sub = new Subscription(sink, dir);
            WatchKey key;
            try {
                key = register(registered, sub);
            } catch (IOException e) {
                sink.error(LocalFileIo.failure(shownPath, e));
                return;
            } finally {
                registeredOnce.run();
            }
            sink.onRequest(n -> sub.drain());
            // cancelling a key waits for the watch service's own thread: never on the subscriber's thread
            sink.onDispose(() -> Schedulers.boundedElastic().schedule(() -> unregister(key, sub)));
        });
    }

    private synchronized WatchKey register(Path dir, Subscription sub) throws IOException {
        if (service == null) {
            service = FileSystems.getDefault().newWatchService();
            WatchService s = service;
            dispatcher = Thread.ofPlatform().daemon().name("sandbox-watch").start(() -> dispatch(s));
        }
        WatchKey key = dir.register(
                service,
                StandardWatchEventKinds.ENTRY_CREATE,
                StandardWatchEventKinds.ENTRY_MODIFY,
                StandardWatchEventKinds.ENTRY_DELETE);
        byKey.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(sub);
        return key;
    }

    private synchronized void unregister(WatchKey key, Subscription sub) {
        Set<Subscription> subs = byKey.get(key);
        if (subs != null && subs.remove(sub) && subs.isEmpty()) {
            byKey.remove(key);
            key.cancel();
        }
    }

    private void dispatch(WatchService s) {
        while (true) {
            WatchKey key;
            try {
                key = s.take();
            } catch (InterruptedException | ClosedWatchServiceException e) {
                return;
            }
            Set<Subscription> subs;
            synchronized (this) {
                Set<Subscription> current = byKey.get(key);
                subs = current == null ? Set.of() : Set.copyOf(current);
            }
            for (WatchEvent<?> event : key.pollEvents()) {
                for (Subscription sub : subs) {
                    sub.offer(map(sub.dir, event)); // each as its subscriber named the directory
                }
            }
            key.reset();
        }
    }

    private static FileEvent map(Path dir, WatchEvent<?> event) {
        WatchEvent.Kind<?> kind = event.kind();
        if (kind == StandardWatchEventKinds.OVERFLOW) {
            return new FileEvent(FileEvent.Kind.OVERFLOW, dir.toString());
        }
        Path name = (Path) event.context();
        FileEvent.Kind k = kind == StandardWatchEventKinds.ENTRY_CREATE
                ? FileEvent.Kind.CREATED
                : kind == StandardWatchEventKinds.ENTRY_DELETE ? FileEvent.Kind.DELETED : FileEvent.Kind.MODIFIED;
        return new FileEvent(k, dir.resolve(name).toString());
    }

    @Override
    public synchronized void close() {
        if (service != null) {
            try {
                service.close();
            } catch (IOException e) {
                throw new BackendException("cannot close the file watcher", e);
            }
            dispatcher.interrupt();
            service = null;
        }
    }

    /** One subscriber's bounded queue, drained as it requests. */
    private static final class Subscription {
        private final FluxSink<FileEvent> sink;
        private final Path dir;
        private final Deque<FileEvent> queue = new ArrayDeque<>(); // guarded by itself
        private final AtomicInteger wip = new AtomicInteger();
        private boolean overflowed; // guarded by queue

        Subscription(FluxSink<FileEvent> sink, Path dir) {
            this.sink = sink;
            this.dir = dir;
        }

        void offer(FileEvent event) {
            synchronized (queue) {
                if (queue.size() >= MAX_QUEUED) {
                    overflowed = true;
                } else {
                    queue.add(event);
                }
            }
            drain();
        }

        void drain() {
            if (wip.getAndIncrement() != 0) {
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
                            next = new FileEvent(FileEvent.Kind.OVERFLOW, dir.toString());
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
