package dev.sandbox.implementation.local;

import com.sun.jna.Memory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * One inotify instance read in the order the kernel queues its events. Internal: not part of the public API.
 *
 * <p>The JDK's {@code WatchService} is not used because it folds a modification of a file into an earlier one of the
 * same file still pending on its key, even when other events came between: a file rewritten after another file changed
 * would be reported before that change. Read here, the events of all directories keep the kernel's order (the kernel
 * merges only an event identical to the last one queued).
 *
 * <p>{@link #read} blocks its thread in {@code poll} on the instance and an eventfd; {@link #close} writes to the eventfd,
 * and the reading thread closes both descriptors once it sees that, so that no descriptor is closed under a read.
 */
final class Inotify {
    static final int IN_MODIFY = 0x2;
    static final int IN_ATTRIB = 0x4;
    static final int IN_MOVED_FROM = 0x40;
    static final int IN_MOVED_TO = 0x80;
    static final int IN_CREATE = 0x100;
    static final int IN_DELETE = 0x200;
    static final int IN_Q_OVERFLOW = 0x4000;
    static final int IN_IGNORED = 0x8000;
    static final int IN_ONLYDIR = 0x01000000;

    /** What a watch asks for: the same changes the JDK's watch service reports. */
    static final int MASK = IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_MODIFY | IN_ATTRIB | IN_ONLYDIR;

    /** {@code sizeof(struct inotify_event)} without its name. */
    static final int HEADER = 16;

    /** Room for at least 200 events with the longest names (NAME_MAX 255). */
    static final int BUFFER = 64 * 1024;

    /** One event: the watch it came from, its mask, and the entry's name (empty for the directory itself). */
    record Event(int wd, int mask, String name) {
        boolean is(int bits) {
            return (mask & bits) != 0;
        }
    }

    private final int fd;
    private final int wake;
    private volatile boolean closed;

    private Inotify(int fd, int wake) {
        this.fd = fd;
        this.wake = wake;
    }

    /** Opens an instance, or fails naming the system's limit when there is no room for one. */
    static Inotify open() throws IOException {
        int fd = Sys.inotify_init1(Sys.O_NONBLOCK | Sys.O_CLOEXEC);
        if (fd < 0) {
            throw new IOException(
                    "inotify_init1: " + Sys.strerror(Sys.errno()) + " (see /proc/sys/fs/inotify/max_user_instances)");
        }
        int wake = Sys.eventfd(0, Sys.O_NONBLOCK | Sys.O_CLOEXEC);
        if (wake < 0) {
            int errno = Sys.errno();
            Sys.close(fd);
            throw new IOException("eventfd: " + Sys.strerror(errno));
        }
        return new Inotify(fd, wake);
    }

    /**
     * Watches a directory; a directory watched already gives the same descriptor.
     *
     * @return the watch descriptor
     */
    int add(Path dir) throws IOException {
        int wd = Sys.inotify_add_watch(fd, Sys.path(dir.toString()), MASK);
        if (wd < 0) {
            int errno = Sys.errno();
            throw new IOException(dir + ": inotify_add_watch: " + Sys.strerror(errno)
                    + (errno == Sys.ENOSPC ? " (see /proc/sys/fs/inotify/max_user_watches)" : ""));
        }
        return wd;
    }

    /** Stops a watch; one the kernel ended already (its directory deleted) is no error. */
    void remove(int wd) {
        Sys.inotify_rm_watch(fd, wd);
    }

    /**
     * Waits for events and hands each to {@code sink}, in order, until {@link #close}; then closes the descriptors.
     * Called by one thread only.
     */
    void readUntilClosed(Consumer<Event> sink) {
        byte[] buf = new byte[BUFFER];
        try (Memory pfds = new Memory(16)) {
            while (!closed) {
                pfds.setInt(0, fd);
                pfds.setShort(4, Sys.POLLIN);
                pfds.setShort(6, (short) 0);
                pfds.setInt(8, wake);
                pfds.setShort(12, Sys.POLLIN);
                pfds.setShort(14, (short) 0);
                if (Sys.poll(pfds, 2, -1) < 0 && Sys.errno() != Sys.EINTR) {
                    return; // not expected: the descriptors are this object's own
                }
                if (closed) {
                    return;
                }
                long n = Sys.read(fd, buf, buf.length);
                if (n < 0) {
                    int errno = Sys.errno();
                    if (errno == Sys.EAGAIN || errno == Sys.EINTR) {
                        continue;
                    }
                    return;
                }
                parse(buf, (int) n, sink);
            }
        } finally {
            Sys.close(fd);
            Sys.close(wake);
        }
    }

    /** Parses what one read returned: whole events only, as the kernel writes them. */
    static void parse(byte[] buf, int length, Consumer<Event> sink) {
        ByteBuffer b = ByteBuffer.wrap(buf, 0, length).order(ByteOrder.nativeOrder());
        while (b.remaining() >= HEADER) {
            int wd = b.getInt();
            int mask = b.getInt();
            b.getInt(); // cookie: a move is its two halves, reported apart
            int len = b.getInt();
            if (len < 0 || len > b.remaining()) {
                return; // not what the kernel writes
            }
            int start = b.position();
            int end = start;
            while (end < start + len && buf[end] != 0) {
                end++;
            }
            String name = new String(buf, start, end - start, StandardCharsets.UTF_8);
            b.position(start + len);
            sink.accept(new Event(wd, mask, name));
        }
    }

    /** Wakes the reading thread, which closes the descriptors and returns. */
    void close() {
        closed = true;
        Sys.write(wake, new byte[] {1, 0, 0, 0, 0, 0, 0, 0}, 8);
    }
}
