package dev.sandbox.implementation.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.FileEvent;
import dev.sandbox.FileEvent.Kind;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.Disposable;

/**
 * The local watcher reads inotify itself: the events of a watch come in the order of the changes even when its
 * dispatcher falls behind (the JDK's watch service folded a rewrite of a file into an earlier pending one of the same
 * file, so a file rewritten after another changed was reported before that change).
 */
class LocalWatcherTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void eventsKeepTheOrderOfTheChangesWhileTheDispatcherIsBehind(@TempDir Path tmp) throws Exception {
        Path dir = tmp.toRealPath();
        LocalWatcher watcher = new LocalWatcher();
        BlockingQueue<FileEvent> events = new LinkedBlockingQueue<>();
        try (SessionRoot root = new SessionRoot(dir)) {
            Disposable watch = watcher.watch(root, root.openDirectory("path", ".", ""), "", ".", false)
                    .subscribe(events::add);
            try {
                assertThat(events.poll(WAIT.toSeconds(), TimeUnit.SECONDS))
                        .isEqualTo(new FileEvent(Kind.READY, dir.toString()));
                // the dispatcher takes the watcher's lock for every event: holding it, every change below waits in
                // the kernel's queue until all of them are made
                synchronized (watcher) {
                    Files.writeString(dir.resolve("b"), "x");
                    Thread.sleep(100); // the dispatcher now waits for the lock with the first event in hand
                    Files.writeString(dir.resolve("a"), "1");
                    Files.writeString(dir.resolve("b"), "y", StandardOpenOption.TRUNCATE_EXISTING);
                    Files.delete(dir.resolve("a"));
                }
                List<FileEvent> seen = new ArrayList<>();
                FileEvent last = new FileEvent(Kind.DELETED, dir + "/a");
                while (seen.isEmpty() || !seen.getLast().equals(last)) {
                    FileEvent e = events.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                    assertThat(e).as("events so far: %s", seen).isNotNull();
                    seen.add(e);
                }
                assertThat(collapsed(seen))
                        .containsExactly(
                                new FileEvent(Kind.CREATED, dir + "/b"),
                                new FileEvent(Kind.MODIFIED, dir + "/b"),
                                new FileEvent(Kind.CREATED, dir + "/a"),
                                new FileEvent(Kind.MODIFIED, dir + "/a"),
                                new FileEvent(Kind.MODIFIED, dir + "/b"), // after a's: it came after
                                new FileEvent(Kind.DELETED, dir + "/a"));
            } finally {
                watch.dispose();
                watcher.close();
            }
        }
    }

    @Test
    void aClosedWatcherStopsItsThreadAndAWatchAfterwardsStartsAnother(@TempDir Path tmp) throws Exception {
        Path dir = tmp.toRealPath();
        LocalWatcher watcher = new LocalWatcher();
        try (SessionRoot root = new SessionRoot(dir)) {
            for (int round = 0; round < 3; round++) {
                Set<Thread> before = watchThreads();
                BlockingQueue<FileEvent> events = new LinkedBlockingQueue<>();
                Disposable watch = watcher.watch(root, root.openDirectory("path", ".", ""), "", ".", false)
                        .subscribe(events::add);
                assertThat(events.poll(WAIT.toSeconds(), TimeUnit.SECONDS))
                        .extracting(FileEvent::kind)
                        .isEqualTo(Kind.READY);
                Files.writeString(dir.resolve("f" + round), "x");
                assertThat(events.poll(WAIT.toSeconds(), TimeUnit.SECONDS))
                        .isEqualTo(new FileEvent(Kind.CREATED, dir + "/f" + round));
                Set<Thread> started = watchThreads();
                started.removeAll(before);
                assertThat(started).as("the watcher's own thread").hasSize(1);
                watch.dispose();
                watcher.close();
                started.iterator().next().join(WAIT);
                assertThat(started.iterator().next().isAlive())
                        .as("its thread after close")
                        .isFalse();
            }
        }
    }

    @Test
    void partsOfEventsAndBadLengthsAreNotReadPastTheirEnd() {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.nativeOrder());
        b.putInt(7).putInt(Inotify.IN_CREATE).putInt(0).putInt(8).put("name\0\0\0\0".getBytes(StandardCharsets.UTF_8));
        b.putInt(7).putInt(Inotify.IN_DELETE).putInt(0).putInt(1000); // longer than what was read
        List<Inotify.Event> out = new ArrayList<>();
        Inotify.parse(b.array(), b.position(), out::add);
        assertThat(out).containsExactly(new Inotify.Event(7, Inotify.IN_CREATE, "name"));
        out.clear();
        Inotify.parse(b.array(), 10, out::add); // less than a header
        assertThat(out).isEmpty();
    }

    private static Set<Thread> watchThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("sandbox-watch") && t.isAlive())
                .collect(Collectors.toCollection(HashSet::new));
    }

    private static List<FileEvent> collapsed(List<FileEvent> events) {
        List<FileEvent> out = new ArrayList<>();
        for (FileEvent e : events) {
            if (e.kind() == Kind.MODIFIED && !out.isEmpty() && out.getLast().equals(e)) {
                continue;
            }
            out.add(e);
        }
        return out;
    }
}
