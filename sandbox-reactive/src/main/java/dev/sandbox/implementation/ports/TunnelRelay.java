package dev.sandbox.implementation.ports;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * One connection of a forward: the bytes of a host socket to the sandbox and back, through a {@link Dialer}. Two
 * virtual threads do the socket's blocking I/O: a reader that reads only when the sandbox's side asks for more (so a
 * slow server slows its own client and nobody else), and a writer that asks the sandbox for more only once what it
 * had was written (so a client that stops reading holds at most {@value #AHEAD} chunks here and the sandbox's server
 * waits, nothing else).
 *
 * <p>Ends: the host client's end of file half-closes the sandbox side; the sandbox side's end shuts the host socket's
 * sending side, then the relay reads what the client still sends for at most {@value #LINGER_MS} ms (closing a socket
 * with unread input would reset it and could cut the reply short) and closes. A failure on either side, or {@link
 * #abort()}, closes both at once.
 */
public final class TunnelRelay {
    private static final Logger LOG = LoggerFactory.getLogger(TunnelRelay.class);

    /** Bytes read from the host socket at a time. */
    static final int CHUNK = 64 * 1024;
    /** Chunks from the sandbox that may wait for the host socket. */
    static final int AHEAD = 4;
    /** How long the relay reads a client's last bytes after the sandbox side ended. */
    static final int LINGER_MS = 2000;

    /** The most read-ahead a subscriber's demand can open (it asks for chunks of at most {@value #CHUNK} bytes). */
    private static final int MAX_PERMITS = 1 << 16;

    private static final Object END = new Object();
    private static final Object ABORT = new Object();

    private final Socket socket;
    private final String what;
    private final Runnable onDone;
    private final ArrayBlockingQueue<Object> toHost = new ArrayBlockingQueue<>(AHEAD + 3);
    private final CountDownLatch readerDone = new CountDownLatch(1);
    private final AtomicBoolean aborted = new AtomicBoolean();
    private final FromSandbox fromSandbox = new FromSandbox();

    /**
     * A relay for one host socket, started with {@link #start}.
     *
     * @param socket the accepted connection
     * @param what the forward and connection, for logs and thread names
     * @param onDone called once, on the relay's thread, when the socket is closed and the relay is over
     */
    public TunnelRelay(Socket socket, String what, Runnable onDone) {
        this.socket = socket;
        this.what = what;
        this.onDone = onDone;
    }

    /**
     * Dials the sandbox and starts relaying.
     *
     * @param dialer the provider's way in
     * @param port the port inside the sandbox
     */
    public void start(Dialer dialer, int port) {
        Thread.ofVirtual().name("sandbox-forward-write " + what).start(this::writeLoop);
        try {
            dialer.dial(port, fromHost()).subscribe(fromSandbox);
        } catch (RuntimeException e) {
            fromSandbox.onError(e);
        }
    }

    /** Closes the connection at once, both ways; the sandbox's side is told to close too. */
    public void abort() {
        fromSandbox.dispose();
        reset();
    }

    /**
     * Resets the host connection: a writer blocked on a client that does not read, and a reader blocked on one that
     * does not write, both stop, and the client sees the connection fail rather than end.
     */
    private void reset() {
        if (aborted.compareAndSet(false, true)) {
            toHost.offer(ABORT); // room kept: at most AHEAD chunks, one end and this are queued
            try {
                socket.setSoLinger(true, 0);
                socket.close();
            } catch (IOException e) {
                LOG.debug("{}: resetting the connection", what, e);
            }
        }
    }

    /** The host client's bytes, read only as the sandbox's side asks for them. */
    private Flux<ByteBuffer> fromHost() {
        return Flux.create(
                sink -> {
                    Semaphore permits = new Semaphore(0);
                    AtomicBoolean gone = new AtomicBoolean();
                    // the demand as permits, bounded so that an unbounded request cannot overflow them
                    sink.onRequest(n -> permits.release((int) Math.min(n, MAX_PERMITS - permits.availablePermits())));
                    sink.onDispose(() -> {
                        gone.set(true);
                        permits.release();
                    });
                    Thread.ofVirtual().name("sandbox-forward-read " + what).start(() -> readLoop(sink, permits, gone));
                },
                FluxSink.OverflowStrategy.ERROR);
    }

    private void readLoop(FluxSink<ByteBuffer> sink, Semaphore permits, AtomicBoolean gone) {
        boolean discard = false;
        try {
            InputStream in = socket.getInputStream();
            for (; ; ) {
                if (!discard) {
                    permits.acquire();
                    discard = gone.get(); // the sandbox side ended: what the client still sends goes nowhere
                }
                byte[] buf = new byte[CHUNK];
                int n = in.read(buf);
                if (n < 0) {
                    if (!discard) {
                        sink.complete();
                    }
                    return;
                }
                if (!discard && n > 0) {
                    sink.next(ByteBuffer.wrap(buf, 0, n));
                }
            }
        } catch (IOException | InterruptedException e) {
            if (!discard && !aborted.get() && !socket.isClosed()) {
                LOG.debug("{}: reading the host connection failed", what, e);
                sink.error(e);
            }
        } finally {
            readerDone.countDown();
        }
    }

    private void writeLoop() {
        boolean graceful = false;
        try {
            OutputStream out = socket.getOutputStream();
            for (; ; ) {
                Object o = toHost.take();
                if (o instanceof ByteBuffer b) {
                    if (b.hasArray()) {
                        out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
                    } else {
                        byte[] copy = new byte[b.remaining()];
                        b.get(copy);
                        out.write(copy);
                    }
                    fromSandbox.more();
                } else if (o == END) {
                    out.flush();
                    socket.shutdownOutput();
                    graceful = true;
                    return;
                } else {
                    return; // ABORT, or the sandbox side failed
                }
            }
        } catch (IOException | InterruptedException e) {
            LOG.debug("{}: writing to the host connection failed", what, e);
        } finally {
            finish(graceful);
        }
    }

    private void finish(boolean graceful) {
        try {
            if (graceful) {
                if (!readerDone.await(LINGER_MS, TimeUnit.MILLISECONDS)) {
                    LOG.debug("{}: the host client sent on for {} ms after the sandbox's end", what, LINGER_MS);
                }
            } else {
                fromSandbox.dispose();
                reset();
            }
        } catch (InterruptedException e) {
            LOG.debug("{}: closing", what, e);
        } finally {
            try {
                socket.close();
            } catch (IOException e) {
                LOG.debug("{}: closing the socket", what, e);
            }
            onDone.run();
        }
    }

    /** The sandbox's bytes, asked for {@value #AHEAD} at a time and then one per chunk written. */
    private final class FromSandbox extends BaseSubscriber<ByteBuffer> {
        @Override
        protected void hookOnSubscribe(Subscription s) {
            s.request(AHEAD);
        }

        @Override
        protected void hookOnNext(ByteBuffer b) {
            if (!toHost.offer(b)) { // more than asked for: not a source to relay
                LOG.warn("{}: the sandbox side sent more than it was asked for", what);
                abort();
            }
        }

        @Override
        protected void hookOnComplete() {
            toHost.offer(END);
        }

        @Override
        protected void hookOnError(Throwable t) {
            LOG.debug("{}: the sandbox side failed", what, t);
            reset(); // what was still queued for the client is lost, as in a reset
        }

        void more() {
            request(1);
        }
    }
}
