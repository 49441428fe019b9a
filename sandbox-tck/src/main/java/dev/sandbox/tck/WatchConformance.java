package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.FileEvent;
import dev.sandbox.FileEvent.Kind;
import dev.sandbox.SandboxFiles;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Watches: the READY signal, the SDK's temporary files hidden, the same events for the same change on every provider
 * (the table on {@link SandboxFiles#watch(String, boolean)}), recursive watches.
 */
public interface WatchConformance extends ConformanceBase {

    /** How long one watch event may take to arrive. */
    Duration EVENT = Duration.ofSeconds(10);

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static FileEvent ev(Kind kind, String path) {
        return new FileEvent(kind, path);
    }

    /** Required: READY comes first, naming the directory, and a write made right after it is always seen. */
    @Test
    default void readyComesFirstAndAChangeRightAfterItIsNeverMissed() {
        inSession(s -> {
            SandboxFiles files = s.files();
            files.mkdir("ready").block(WAIT);
            String dir = files.stat("ready").block(WAIT).path();
            for (int i = 0; i < 20; i++) {
                try (WatchEvents watch = new WatchEvents(files.watch("ready"))) {
                    assertThat(watch.ready(EVENT)).isEqualTo(dir);
                    files.write("ready/f" + i, bytes("x")).block(WAIT);
                    assertThat(watch.next(EVENT)).isEqualTo(ev(Kind.CREATED, dir + "/f" + i));
                }
            }
        });
    }

    /** Required: an atomic write is one event for its target (CREATED, then MODIFIED); its temporary file never shows. */
    @Test
    default void anAtomicWriteIsOneEventForItsTargetAndNoneForItsTemporaryFile() {
        inSession(s -> {
            SandboxFiles files = s.files();
            files.mkdir("atomic").block(WAIT);
            String dir = files.stat("atomic").block(WAIT).path();
            try (WatchEvents watch = new WatchEvents(files.watch("atomic"))) {
                watch.ready(EVENT);
                files.write("atomic/a.txt", bytes("one")).block(WAIT);
                files.write("atomic/a.txt", bytes("two, longer")).block(WAIT);
                files.write("atomic/b.txt", new byte[100_000]).block(WAIT);
                files.mkdir("atomic/end").block(WAIT);
                List<FileEvent> events = watch.until(e -> e.path().endsWith("/end"), EVENT);
                assertThat(events)
                        .containsExactly(
                                ev(Kind.CREATED, dir + "/a.txt"),
                                ev(Kind.MODIFIED, dir + "/a.txt"),
                                ev(Kind.CREATED, dir + "/b.txt"),
                                ev(Kind.CREATED, dir + "/end"));
            }
        });
    }

    /**
     * Required: the same changes give the same events on every provider: create, overwrite (by the SDK and in place
     * by a program), remove, move, mkdir.
     */
    @Test
    default void theSameChangesGiveTheSameEvents() {
        inSession(s -> {
            SandboxFiles files = s.files();
            files.mkdir("table").block(WAIT);
            String dir = files.stat("table").block(WAIT).path();
            try (WatchEvents watch = new WatchEvents(files.watch("table"))) {
                watch.ready(EVENT);
                files.write("table/a", bytes("1")).block(WAIT);
                s.run(ExecOptions.shell("echo x > table/b")).block(WAIT);
                files.write("table/a", bytes("2")).block(WAIT);
                s.run(ExecOptions.shell("echo y > table/b")).block(WAIT);
                files.remove("table/a").block(WAIT);
                files.move("table/b", "table/c").block(WAIT);
                s.run(ExecOptions.shell("mv table/c table/d")).block(WAIT);
                files.mkdir("table/e").block(WAIT);
                List<FileEvent> events = watch.until(e -> e.equals(ev(Kind.CREATED, dir + "/e")), EVENT);
                assertThat(WatchEvents.collapsed(events))
                        .containsExactly(
                                ev(Kind.CREATED, dir + "/a"), // write of a new path
                                ev(Kind.CREATED, dir + "/b"), // a program creates a file...
                                ev(Kind.MODIFIED, dir + "/b"), // ...and writes it
                                ev(Kind.MODIFIED, dir + "/a"), // write over an existing file
                                ev(Kind.MODIFIED, dir + "/b"), // a program rewrites it in place
                                ev(Kind.DELETED, dir + "/a"), // remove
                                ev(Kind.DELETED, dir + "/b"), // move
                                ev(Kind.CREATED, dir + "/c"),
                                ev(Kind.DELETED, dir + "/c"), // mv
                                ev(Kind.CREATED, dir + "/d"),
                                ev(Kind.CREATED, dir + "/e")); // mkdir
            }
        });
    }

    /** Required: a recursive watch reports changes in nested directories, with absolute paths. */
    @Test
    default void aRecursiveWatchSeesNestedDirectories() {
        inSession(s -> {
            SandboxFiles files = s.files();
            s.run(ExecOptions.shell("mkdir -p deep/n1/n2")).block(WAIT);
            String dir = files.stat("deep").block(WAIT).path();
            try (WatchEvents watch = new WatchEvents(files.watch("deep", true))) {
                assertThat(watch.ready(EVENT)).isEqualTo(dir);
                files.write("deep/n1/n2/g", bytes("g")).block(WAIT);
                assertThat(watch.next(EVENT)).isEqualTo(ev(Kind.CREATED, dir + "/n1/n2/g"));
                files.remove("deep/n1/n2/g").block(WAIT);
                assertThat(watch.next(EVENT)).isEqualTo(ev(Kind.DELETED, dir + "/n1/n2/g"));
            }
            // a watched directory given through a link: followed, its tree watched, events under the link's path
            s.run(ExecOptions.shell("ln -s deep deeplink")).block(WAIT);
            String link = files.stat("deeplink").block(WAIT).path();
            try (WatchEvents watch = new WatchEvents(files.watch("deeplink", true))) {
                assertThat(watch.ready(EVENT)).isEqualTo(link);
                files.write("deep/n1/n2/k", bytes("k")).block(WAIT);
                assertThat(watch.next(EVENT)).isEqualTo(ev(Kind.CREATED, link + "/n1/n2/k"));
            }
            // not recursive: nothing below the directory itself
            try (WatchEvents watch = new WatchEvents(files.watch("deep"))) {
                watch.ready(EVENT);
                files.write("deep/n1/h", bytes("h")).block(WAIT);
                files.write("deep/top", bytes("t")).block(WAIT);
                assertThat(watch.next(EVENT)).isEqualTo(ev(Kind.CREATED, dir + "/top"));
            }
        });
    }

    /**
     * Required: a recursive watch watches a directory made while it runs, and reports a file written into it at once,
     * once.
     */
    @Test
    default void aRecursiveWatchSeesAFileInADirectoryJustMade() {
        inSession(s -> {
            SandboxFiles files = s.files();
            files.mkdir("grow").block(WAIT);
            String dir = files.stat("grow").block(WAIT).path();
            try (WatchEvents watch = new WatchEvents(files.watch("grow", true))) {
                watch.ready(EVENT);
                s.run(ExecOptions.shell("mkdir -p grow/x/y && echo hi > grow/x/y/f"))
                        .block(WAIT);
                files.write("grow/x/later", bytes("l")).block(WAIT);
                // a scan of a new directory reports what it holds in any order: wait for all, then for a marker
                // made afterwards, so that a duplicate would show before it
                List<FileEvent> events = new ArrayList<>();
                Set<FileEvent> awaited =
                        new HashSet<>(List.of(ev(Kind.CREATED, dir + "/x/y/f"), ev(Kind.CREATED, dir + "/x/later")));
                while (!awaited.isEmpty()) {
                    FileEvent e = watch.next(EVENT);
                    events.add(e);
                    awaited.remove(e);
                }
                files.mkdir("grow/end").block(WAIT);
                events.addAll(watch.until(e -> e.equals(ev(Kind.CREATED, dir + "/end")), EVENT));
                List<FileEvent> created =
                        events.stream().filter(e -> e.kind() == Kind.CREATED).toList();
                assertThat(created)
                        .containsExactlyInAnyOrder(
                                ev(Kind.CREATED, dir + "/x"),
                                ev(Kind.CREATED, dir + "/x/y"),
                                ev(Kind.CREATED, dir + "/x/y/f"),
                                ev(Kind.CREATED, dir + "/x/later"),
                                ev(Kind.CREATED, dir + "/end"));
                // a directory is reported before what is in it
                assertThat(created.indexOf(ev(Kind.CREATED, dir + "/x")))
                        .isLessThan(created.indexOf(ev(Kind.CREATED, dir + "/x/y")));
                assertThat(created.indexOf(ev(Kind.CREATED, dir + "/x/y")))
                        .isLessThan(created.indexOf(ev(Kind.CREATED, dir + "/x/y/f")));
                assertThat(events)
                        .allMatch(e -> e.kind() == Kind.CREATED || e.equals(ev(Kind.MODIFIED, dir + "/x/y/f")));
                // a file renamed over a name reported before is reported again (another file)
                s.run(ExecOptions.shell("echo o > grow/other && mv grow/other grow/x/y/f"))
                        .block(WAIT);
                files.mkdir("grow/end2").block(WAIT);
                List<FileEvent> after = watch.until(e -> e.equals(ev(Kind.CREATED, dir + "/end2")), EVENT);
                // events of different directories may interleave differently
                assertThat(WatchEvents.collapsed(after))
                        .containsExactlyInAnyOrder(
                                ev(Kind.CREATED, dir + "/other"),
                                ev(Kind.MODIFIED, dir + "/other"),
                                ev(Kind.DELETED, dir + "/other"),
                                ev(Kind.CREATED, dir + "/x/y/f"),
                                ev(Kind.CREATED, dir + "/end2"));
            }
        });
    }
}
