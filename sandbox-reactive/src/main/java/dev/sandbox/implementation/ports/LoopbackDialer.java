package dev.sandbox.implementation.ports;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

/**
 * The local provider's way in: its commands run on the host, so a port "inside the sandbox" is a port on the host's
 * loopback, reached with a plain socket. The connection's blocking I/O runs on virtual threads: a reader that reads
 * as the subscriber asks, and a writer for {@code toSandbox}'s buffers, asked for one at a time.
 */
public final class LoopbackDialer implements Dialer {
    /** How long a connect may take. */
    static final int CONNECT_TIMEOUT_MS = 5000;

    private final InetAddress address;

    /** The dialer of the host's loopback; it holds nothing, one serves every session. */
    public LoopbackDialer() {
        this(InetAddress.getLoopbackAddress());
    }

    /**
     * A dialer of another host address (a local reverse forward's target).
     *
     * @param address the address every port is dialled on
     */
    public LoopbackDialer(InetAddress address) {
        this.address = address;
    }

    @Override
    public Flux<ByteBuffer> dial(int port, Publisher<ByteBuffer> toSandbox) {
        return Flux.create(
                sink -> {
                    Socket socket = new Socket();
                    Semaphore permits = new Semaphore(0);
                    AtomicBoolean gone = new AtomicBoolean();
                    sink.onRequest(n -> permits.release((int) Math.min(n, 1 << 16)));
                    sink.onDispose(() -> {
                        gone.set(true);
                        permits.release();
                        closeQuietly(socket);
                    });
                    Thread.ofVirtual()
                            .name("sandbox-forward-dial " + port)
                            .start(() -> run(address, port, socket, toSandbox, sink, permits, gone));
                },
                FluxSink.OverflowStrategy.ERROR);
    }

    private static void run(
            InetAddress address,
            int port,
            Socket socket,
            Publisher<ByteBuffer> toSandbox,
            FluxSink<ByteBuffer> sink,
            Semaphore permits,
            AtomicBoolean gone) {
        try {
            socket.connect(new InetSocketAddress(address, port), CONNECT_TIMEOUT_MS);
            socket.setTcpNoDelay(true);
        } catch (IOException e) {
            closeQuietly(socket);
            ConnectException x = new ConnectException("connect to port " + port + ": " + e.getMessage());
            x.initCause(e);
            sink.error(x);
            return;
        }
        Writer writer = new Writer(socket, sink);
        toSandbox.subscribe(writer);
        try {
            InputStream in = socket.getInputStream();
            for (; ; ) {
                permits.acquire();
                if (gone.get()) {
                    return;
                }
                byte[] buf = new byte[TunnelRelay.CHUNK];
                int n = in.read(buf);
                if (n < 0) {
                    sink.complete();
                    return;
                }
                if (n > 0) {
                    sink.next(ByteBuffer.wrap(buf, 0, n));
                } else {
                    permits.release();
                }
            }
        } catch (IOException | InterruptedException e) {
            if (!gone.get()) {
                sink.error(e);
            }
        } finally {
            writer.dispose();
            closeQuietly(socket);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing on the way out: nothing to add
        }
    }

    /**
     * Writes what comes for the server, one buffer at a time on a virtual thread of its own (the buffers may come on
     * an event loop), in order; the end of the buffers half-closes the socket.
     */
    private static final class Writer extends BaseSubscriber<ByteBuffer> {
        private static final Object END = new Object();
        private static final Object STOP = new Object();

        private final Socket socket;
        private final FluxSink<ByteBuffer> sink;
        /** At most one buffer is asked for at a time: one buffer, the end, a failure and a stop fit. */
        private final ArrayBlockingQueue<Object> queue = new ArrayBlockingQueue<>(4);

        Writer(Socket socket, FluxSink<ByteBuffer> sink) {
            this.socket = socket;
            this.sink = sink;
            Thread.ofVirtual().name("sandbox-forward-dial-write").start(this::loop);
        }

        @Override
        protected void hookOnSubscribe(Subscription s) {
            s.request(1);
        }

        @Override
        protected void hookOnNext(ByteBuffer b) {
            queue.offer(b);
        }

        @Override
        protected void hookOnComplete() {
            queue.offer(END);
        }

        @Override
        protected void hookOnError(Throwable t) {
            queue.offer(t);
        }

        @Override
        protected void hookOnCancel() {
            queue.offer(STOP);
        }

        private void loop() {
            try {
                OutputStream out = socket.getOutputStream();
                for (; ; ) {
                    Object o = queue.take();
                    if (o instanceof ByteBuffer b) {
                        byte[] bytes = new byte[b.remaining()];
                        b.get(bytes);
                        out.write(bytes);
                        request(1);
                    } else if (o == END) {
                        socket.shutdownOutput();
                        return;
                    } else if (o == STOP) {
                        return; // the connection ended: the socket is closed by its reader
                    } else {
                        sink.error((Throwable) o);
                        return;
                    }
                }
            } catch (IOException e) {
                dispose();
                sink.error(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
