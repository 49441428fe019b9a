package dev.sandbox.implementation.process;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One daemon thread that watches every pipe and pidfd of every native process with a single epoll set. All reads,
 * writes and interest changes happen on this thread; other threads hand it work with {@link #execute(Runnable)}.
 *
 * <p>The thread runs only while there is something to watch: once the last descriptor is closed and no task waits,
 * it ends, and the next {@link #execute} starts another. A thread left waiting in {@code epoll_wait} is in native
 * code, and the JVM's exit ({@code System.exit}) waits up to 300 ms for such threads before it ends: every program
 * that used the local provider paid that on exit (the CLI's {@code exec -- true} among them).
 */
final class EpollLoop implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(EpollLoop.class);
    private static final int MAX_EVENTS = 256;
    /** Size of the shared native read buffer: one pipe's default capacity. */
    static final int READ_SIZE = 64 * 1024;

    /** Something registered with the loop. */
    interface Handler {
        void ready(int events);
    }

    private final int epfd;
    private final int wakeFd;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean wakePending = new AtomicBoolean();
    private final Map<Integer, Handler> handlers = new HashMap<>();
    private final Map<Integer, Integer> interests = new HashMap<>();
    private final Memory events = new Memory((long) MAX_EVENTS * LibC.EPOLL_EVENT_SIZE);
    private final Memory ctlEvent = new Memory(16);
    private final Memory wakeOne = new Memory(8);
    private final Memory wakeRead = new Memory(8);
    /** Scratch buffer for reads and writes; used only on the loop thread. */
    final Memory buffer = new Memory(READ_SIZE);

    private final Object lifecycle = new Object();
    /** The loop's thread while it runs, {@code null} when idle; written under {@link #lifecycle}. */
    private volatile Thread thread;

    EpollLoop() {
        epfd = LibC.epoll_create1(LibC.O_CLOEXEC);
        if (epfd < 0) {
            throw new IllegalStateException("epoll_create1 failed: " + LibC.strerror(LibC.errno()));
        }
        wakeFd = LibC.eventfd(0, LibC.O_CLOEXEC | LibC.O_NONBLOCK);
        if (wakeFd < 0) {
            throw new IllegalStateException("eventfd failed: " + LibC.strerror(LibC.errno()));
        }
        ctlEvent.setInt(0, LibC.EPOLLIN);
        ctlEvent.setLong(LibC.EPOLL_DATA_OFFSET, wakeFd);
        if (LibC.epoll_ctl(epfd, LibC.EPOLL_CTL_ADD, wakeFd, ctlEvent) != 0) {
            throw new IllegalStateException("epoll_ctl failed: " + LibC.strerror(LibC.errno()));
        }
        wakeOne.setLong(0, 1);
    }

    boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    /** Runs a task on the loop thread, soon. */
    void execute(Runnable task) {
        tasks.add(task);
        synchronized (lifecycle) {
            if (thread == null) {
                Thread t = new Thread(this, "sandbox-epoll");
                t.setDaemon(true);
                thread = t;
                t.start();
            }
        }
        if (wakePending.compareAndSet(false, true)) {
            LibC.write(wakeFd, wakeOne, 8);
        }
    }

    /**
     * Sets a descriptor's handler and interest; loop thread only. An interest of 0 takes the descriptor out of the
     * epoll set altogether, because epoll reports hang-ups even for an empty interest, which would spin the loop.
     */
    void interest(int fd, int interest, Handler handler) {
        handlers.put(fd, handler);
        Integer old = interests.get(fd);
        if (interest == 0) {
            if (old != null) {
                interests.remove(fd);
                ctl(LibC.EPOLL_CTL_DEL, fd, 0);
            }
        } else if (old == null) {
            interests.put(fd, interest);
            ctl(LibC.EPOLL_CTL_ADD, fd, interest);
        } else if (old != interest) {
            interests.put(fd, interest);
            ctl(LibC.EPOLL_CTL_MOD, fd, interest);
        }
    }

    /** Forgets a descriptor and closes it; loop thread only. */
    void close(int fd) {
        handlers.remove(fd);
        if (interests.remove(fd) != null) {
            ctl(LibC.EPOLL_CTL_DEL, fd, 0);
        }
        LibC.close(fd);
    }

    /** Whether the loop's thread runs (it ends when nothing is watched); for tests. */
    boolean running() {
        return thread != null;
    }

    int registered() {
        return handlers.size();
    }

    private void ctl(int op, int fd, int interest) {
        ctlEvent.setInt(0, interest);
        ctlEvent.setLong(LibC.EPOLL_DATA_OFFSET, fd);
        if (LibC.epoll_ctl(epfd, op, fd, ctlEvent) != 0) {
            int err = LibC.errno();
            throw new IllegalStateException("epoll_ctl(" + op + ", fd " + fd + ") failed: " + LibC.strerror(err));
        }
    }

    @Override
    public void run() {
        while (true) {
            int n = LibC.epoll_wait(epfd, events, MAX_EVENTS, -1);
            if (n < 0) {
                int err = LibC.errno();
                if (err == LibC.EINTR) {
                    continue;
                }
                LOG.error("epoll_wait failed: {}; process I/O stops", LibC.strerror(err));
                return;
            }
            for (int i = 0; i < n; i++) {
                long base = (long) i * LibC.EPOLL_EVENT_SIZE;
                int ready = events.getInt(base);
                int fd = (int) events.getLong(base + LibC.EPOLL_DATA_OFFSET);
                if (fd == wakeFd) {
                    LibC.read(wakeFd, wakeRead, 8);
                    continue;
                }
                Handler handler = handlers.get(fd);
                if (handler != null) {
                    safely(() -> handler.ready(ready));
                }
            }
            wakePending.set(false);
            Runnable task;
            while ((task = tasks.poll()) != null) {
                safely(task);
            }
            if (handlers.isEmpty()) {
                // nothing to watch: end, unless a task came meanwhile (execute() adds before it looks at the thread)
                synchronized (lifecycle) {
                    if (tasks.isEmpty()) {
                        thread = null;
                        return;
                    }
                }
            }
        }
    }

    private static void safely(Runnable r) {
        try {
            r.run();
        } catch (Throwable t) {
            LOG.error("error on the process I/O loop", t);
        }
    }

    /** Copies {@code n} bytes of the scratch buffer out. */
    byte[] copy(int n) {
        byte[] bytes = new byte[n];
        buffer.read(0, bytes, 0, n);
        return bytes;
    }

    Pointer scratch() {
        return buffer;
    }
}
