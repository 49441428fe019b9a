package dev.sandbox.implementation.process;

import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;

/**
 * A process spawned by {@link NativeLauncher}. Its pipes and pidfd are driven by the {@link EpollLoop}: a pipe is in
 * the epoll interest set only while the subscriber has outstanding demand, so an idle subscriber leaves the pipe
 * full and the process blocked in {@code write}. Every signal to the subscriber is sent from the loop thread.
 */
final class NativeProcess implements SpawnedProcess, Subscription {

    private final EpollLoop loop;
    private final int pid;
    private final AtomicLong demand = new AtomicLong();
    private final AtomicBoolean subscribed = new AtomicBoolean();
    private final AtomicBoolean killed = new AtomicBoolean();
    private volatile boolean cancelled;

    // loop-thread state
    private final int[] readFds = new int[2];
    private final EpollLoop.Handler[] readers = {
        events -> readable(RawEvent.STDOUT), events -> readable(RawEvent.STDERR)
    };
    private final boolean[] armed = new boolean[2];
    private final boolean[] eof = new boolean[2];
    private int pidfd;
    private final int ptyFd; // the terminal's master side (same as the stdout fd), or -1
    private boolean reaped;
    private int waitStatus;
    private boolean done;
    private Subscriber<? super RawEvent> subscriber;

    private final StdinPump stdin;

    /** @param errFd the stderr pipe, or -1 for a terminal, whose one stream is stdout */
    NativeProcess(EpollLoop loop, int pid, int pidfd, int outFd, int errFd, int inFd, int ptyFd) {
        this.loop = loop;
        this.pid = pid;
        this.pidfd = pidfd;
        this.ptyFd = ptyFd;
        this.readFds[RawEvent.STDOUT] = outFd;
        this.readFds[RawEvent.STDERR] = errFd;
        this.eof[RawEvent.STDERR] = errFd < 0;
        this.stdin = inFd >= 0 ? new StdinPump(inFd) : null;
    }

    /** Registers with the loop and starts feeding stdin. */
    void start(Publisher<ByteBuffer> stdinSource) {
        loop.execute(() -> {
            loop.interest(pidfd, LibC.EPOLLIN, events -> exited());
        });
        if (stdin != null) {
            Flux.from(stdinSource).subscribe(stdin);
        }
    }

    @Override
    public long pid() {
        return pid;
    }

    @Override
    public Flux<RawEvent> events() {
        return Flux.from(output());
    }

    /**
     * The process's output as the bare publisher (this object its subscription), without Reactor's wrapping; what
     * {@link #events()} adapts, and what the Reactive Streams TCK checks.
     *
     * @return the publisher of the process's output, for one subscriber
     */
    Publisher<RawEvent> output() {
        return s -> {
            Objects.requireNonNull(s, "rule 1.9: the subscriber must not be null");
            if (!subscribed.compareAndSet(false, true)) {
                Operators.error(s, new IllegalStateException("process output can be subscribed only once"));
                return;
            }
            loop.execute(() -> subscriber = s);
            s.onSubscribe(this);
        };
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            // rule 3.9: the reader broke the protocol; it gets the error, and the process is killed as on a cancel
            loop.execute(() -> invalidRequest(n));
            return;
        }
        if (demand.getAndUpdate(d -> Operators.addCap(d, n)) == 0) {
            loop.execute(this::demandArrived);
        }
    }

    @Override
    public void cancel() {
        cancelled = true;
        kill();
        loop.execute(() -> {
            closePipes();
            subscriber = null; // rule 3.13: a cancelled reader is not kept
        });
    }

    @Override
    public void kill() {
        if (killed.compareAndSet(false, true)) {
            loop.execute(() -> {
                if (!reaped) {
                    // the whole group: children the command started die with it
                    LibC.kill(-pid, LibC.SIGKILL);
                }
            });
        }
    }

    @Override
    public void signal(int signal) {
        if (signal == LibC.SIGKILL) {
            kill();
            return;
        }
        loop.execute(() -> {
            if (!reaped) {
                LibC.kill(-pid, signal);
            }
        });
    }

    @Override
    public void resize(int cols, int rows) {
        if (ptyFd < 0) {
            SpawnedProcess.super.resize(cols, rows);
            return;
        }
        loop.execute(() -> {
            if (!eof[RawEvent.STDOUT]) {
                com.sun.jna.Memory size = new com.sun.jna.Memory(8);
                size.setShort(0, (short) rows);
                size.setShort(2, (short) cols);
                size.setShort(4, (short) 0);
                size.setShort(6, (short) 0);
                LibC.ioctl(ptyFd, LibC.TIOCSWINSZ, size);
            }
        });
    }

    // ---- loop thread ----

    private void invalidRequest(long n) {
        if (cancelled || done) {
            return;
        }
        done = true;
        kill();
        closePipes();
        Subscriber<? super RawEvent> s = subscriber;
        subscriber = null;
        s.onError(new IllegalArgumentException("rule 3.9: a request must be positive, got " + n));
    }

    private void demandArrived() {
        if (cancelled || done) {
            return;
        }
        for (int s = 0; s < 2; s++) {
            setArmed(s, !eof[s]);
        }
        tryFinish();
    }

    private void setArmed(int stream, boolean on) {
        if (armed[stream] != on && !eof[stream]) {
            armed[stream] = on;
            loop.interest(readFds[stream], on ? LibC.EPOLLIN : 0, readers[stream]);
        }
    }

    private void readable(int stream) {
        if (cancelled || eof[stream]) {
            return;
        }
        if (demand.get() == 0) {
            setArmed(stream, false);
            return;
        }
        int fd = readFds[stream];
        Pointer buf = loop.scratch();
        long n = LibC.read(fd, buf, EpollLoop.READ_SIZE);
        if (n > 0) {
            byte[] bytes = loop.copy((int) n);
            if (demand.decrementAndGet() == 0) {
                setArmed(RawEvent.STDOUT, false);
                setArmed(RawEvent.STDERR, false);
            }
            subscriber.onNext(new RawEvent.Chunk(stream, bytes));
            return;
        }
        if (n < 0 && LibC.errno() == LibC.EAGAIN) {
            return;
        }
        // end of file, or an error that ends the stream all the same
        eof[stream] = true;
        armed[stream] = false;
        loop.close(fd);
        tryFinish();
    }

    private void exited() {
        int[] status = new int[1];
        int r = LibC.waitpid(pid, status, LibC.WNOHANG);
        if (r == 0) {
            return; // not yet: level-triggered, we will be called again
        }
        reaped = true;
        waitStatus = r == pid ? status[0] : 0;
        loop.close(pidfd);
        pidfd = -1;
        if (stdin != null) {
            stdin.shutdown();
        }
        tryFinish();
    }

    private void tryFinish() {
        if (done || cancelled || !reaped || !eof[0] || !eof[1] || subscriber == null) {
            return;
        }
        if (demand.get() == 0) {
            return; // demandArrived() calls again
        }
        done = true;
        int termSig = waitStatus & 0x7f;
        RawEvent.Exited exit = termSig == 0
                ? new RawEvent.Exited((waitStatus >> 8) & 0xff, false)
                : new RawEvent.Exited(termSig, true);
        Subscriber<? super RawEvent> s = subscriber;
        subscriber = null;
        s.onNext(exit);
        s.onComplete();
    }

    private void closePipes() {
        for (int s = 0; s < 2; s++) {
            if (!eof[s]) {
                eof[s] = true;
                loop.close(readFds[s]);
            }
        }
        if (stdin != null) {
            stdin.shutdown();
        }
        // the pidfd stays registered until the process is reaped, so no zombie is left behind
    }

    /** Writes stdin from a publisher, one buffer at a time, with EPOLLOUT when the pipe is full. */
    private final class StdinPump extends BaseSubscriber<ByteBuffer> {
        final int fd;
        private ByteBuffer pending; // loop thread
        private boolean completed; // loop thread
        private boolean closed; // loop thread

        StdinPump(int fd) {
            this.fd = fd;
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            subscription.request(1);
        }

        @Override
        protected void hookOnNext(ByteBuffer value) {
            ByteBuffer copy = value.duplicate();
            loop.execute(() -> {
                pending = copy;
                writable();
            });
        }

        @Override
        protected void hookOnComplete() {
            loop.execute(() -> {
                completed = true;
                if (pending == null) {
                    shutdown();
                }
            });
        }

        @Override
        protected void hookOnError(Throwable throwable) {
            loop.execute(this::shutdown);
        }

        void writable() {
            if (closed) {
                return;
            }
            Pointer buf = loop.scratch();
            while (pending != null && pending.hasRemaining()) {
                int len = Math.min(pending.remaining(), EpollLoop.READ_SIZE);
                ByteBuffer slice = pending.slice(pending.position(), len);
                buf.getByteBuffer(0, len).put(slice);
                long n = LibC.write(fd, buf, len);
                if (n < 0) {
                    if (LibC.errno() == LibC.EAGAIN) {
                        loop.interest(fd, LibC.EPOLLOUT, events -> writable());
                        return;
                    }
                    shutdown(); // EPIPE: the process closed its stdin
                    return;
                }
                pending.position(pending.position() + (int) n);
            }
            loop.interest(fd, 0, null);
            pending = null;
            if (completed) {
                shutdown();
            } else {
                request(1);
            }
        }

        void shutdown() {
            if (!closed) {
                closed = true;
                pending = null;
                loop.close(fd);
                cancel();
            }
        }
    }
}
