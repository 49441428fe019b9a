package dev.sandbox.benchmarks;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.PortForward;
import dev.sandbox.SandboxSession;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;

/**
 * What the tunnel rows share ({@code docker-tunnel-throughput}, {@code docker-tunnel-vs-loopback}): a server in the
 * sandbox that writes {@code N} zero bytes to every connection ({@code busybox nc -ll -p 9000 -e} a script that runs
 * {@code dd if=/dev/zero bs=65536 count=N/65536}), reached through {@code session.ports().forward(9000)}; the same
 * {@code dd} over {@code docker exec}'s stream; and a host loopback server that writes the same bytes. Every side is read whole by the same
 * client loop (64 KiB reads until the end of the stream) and checked for exactly {@code N} bytes; the figure is MiB
 * per second.
 *
 * <pre>{@code
 * try (TunnelBench.Sandbox source = TunnelBench.Sandbox.start(session, bytes)) {
 *     double mibPerSecond = TunnelBench.read("SDK", source.forward().localAddress(), bytes);
 * }
 * }</pre>
 */
final class TunnelBench {
    /** The port of the server in the sandbox. */
    static final int PORT = 9000;

    static final long FULL_BYTES = 256L << 20;
    static final long SHORT_BYTES = 32L << 20;

    private static final String SCRIPT = "/tmp/sandbox-bench-src.sh";
    private static final int CHUNK = 64 * 1024;

    private TunnelBench() {}

    /** The bytes a trial moves in this mode. */
    static long bytes(RunConfig config) {
        return config.shortMode() ? SHORT_BYTES : FULL_BYTES;
    }

    /**
     * The server in the sandbox and the forward to it.
     *
     * @param forward the forward to {@link #PORT}
     */
    record Sandbox(PortForward forward) implements AutoCloseable {
        /**
         * Starts the server and opens the forward; returns once a whole transfer came through it (the server may
         * take a moment to listen, and a connection it refuses is closed at once by the forward).
         */
        static Sandbox start(SandboxSession session, long bytes) throws Exception {
            ExecResult script = session.run(
                            ExecOptions.shell("printf '#!/bin/sh\\nexec " + String.join(" ", source(bytes))
                                    + " 2>/dev/null\\n' > " + SCRIPT + " && chmod 755 " + SCRIPT))
                    .block(DockerBench.TIMEOUT);
            if (script == null || script.exitCode() != 0) {
                throw new IllegalStateException("writing " + SCRIPT + " failed: " + script);
            }
            session.start(ExecOptions.of("busybox", "nc", "-ll", "-p", Integer.toString(PORT), "-e", SCRIPT))
                    .block(DockerBench.TIMEOUT);
            PortForward forward = session.ports().forward(PORT).block(DockerBench.TIMEOUT);
            long deadline = System.nanoTime() + DockerBench.TIMEOUT.toNanos();
            while (true) {
                try {
                    read("SDK (first transfer)", forward.localAddress(), bytes);
                    return new Sandbox(forward);
                } catch (IllegalStateException | IOException notYet) {
                    if (System.nanoTime() - deadline > 0) {
                        forward.close().block(DockerBench.TIMEOUT);
                        throw new IllegalStateException("the server in the sandbox never answered", notYet);
                    }
                    Thread.sleep(100);
                }
            }
        }

        @Override
        public void close() {
            forward.close().block(DockerBench.TIMEOUT);
        }
    }

    /**
     * Connects, reads to the end of the stream in 64 KiB reads, and checks the count.
     *
     * @param side the side, for the error
     * @param address where to connect
     * @param bytes how many bytes must arrive
     * @return MiB per second, from connecting to the end of the stream
     * @throws IOException when the connection fails
     */
    static double read(String side, InetSocketAddress address, long bytes) throws IOException {
        byte[] buffer = new byte[CHUNK];
        long read = 0;
        long t0 = System.nanoTime();
        try (Socket socket = new Socket()) {
            socket.connect(address, (int) DockerBench.TIMEOUT.toMillis());
            socket.setSoTimeout((int) DockerBench.TIMEOUT.toMillis());
            InputStream in = socket.getInputStream();
            for (int n; (n = in.read(buffer)) >= 0; ) {
                read += n;
            }
        }
        long took = System.nanoTime() - t0;
        check(side, read, bytes);
        return rate(bytes, took);
    }

    /**
     * Baseline: the same {@code dd} over {@code docker exec}'s stream, the only way in without a forward.
     *
     * @param docker the baseline's client
     * @param container a container of the same image and settings
     * @param bytes how many bytes
     * @return MiB per second, from the exec's create to the end of its stream (its exit code read after)
     * @throws InterruptedException when interrupted while waiting
     */
    static double execOnce(DockerBench docker, String container, long bytes) throws InterruptedException {
        ByteCounter counter = new ByteCounter();
        long t0 = System.nanoTime();
        long exit = docker.exec(container, source(bytes), counter);
        long took = System.nanoTime() - t0;
        if (exit != 0) {
            throw new IllegalStateException("baseline: dd exited with " + exit);
        }
        check("baseline (docker exec)", counter.bytes, bytes);
        return rate(bytes, took);
    }

    /**
     * The command that writes the bytes inside the sandbox: {@code dd} in 64 KiB blocks, which costs the sandbox
     * little CPU. Busybox {@code head -c N /dev/zero} spends a core on about 370 MiB/s here, below both sides' rates,
     * so with it both rows measured {@code head}.
     */
    static List<String> source(long bytes) {
        if (bytes % CHUNK != 0) {
            throw new IllegalArgumentException("the size must be a whole number of 64 KiB blocks, got " + bytes);
        }
        return List.of("dd", "if=/dev/zero", "bs=" + CHUNK, "count=" + bytes / CHUNK);
    }

    private static void check(String side, long read, long bytes) {
        if (read != bytes) {
            throw new IllegalStateException(side + ": read " + read + " bytes of " + bytes);
        }
    }

    private static double rate(long bytes, long nanos) {
        return bytes / (double) (1 << 20) / (nanos / 1e9);
    }

    /** The exec baseline's callback: counts stdout's bytes, as a user's copy to a sink would see them. */
    static final class ByteCounter extends ResultCallback.Adapter<Frame> {
        long bytes;

        @Override
        public void onNext(Frame frame) {
            if (frame.getStreamType() == StreamType.STDOUT) {
                bytes += frame.getPayload().length;
            }
        }
    }

    /** A host server on loopback that writes {@code N} zero bytes to every connection, one connection at a time. */
    static final class LoopbackSource implements AutoCloseable {
        private final ServerSocket server;
        private final Thread acceptor;

        LoopbackSource(long bytes) throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            acceptor = new Thread(() -> serve(bytes), "sandbox-bench-loopback-source");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        InetSocketAddress address() {
            return (InetSocketAddress) server.getLocalSocketAddress();
        }

        private void serve(long bytes) {
            byte[] zeros = new byte[CHUNK];
            while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                    OutputStream out = s.getOutputStream();
                    for (long left = bytes; left > 0; left -= zeros.length) {
                        out.write(zeros, 0, (int) Math.min(zeros.length, left));
                    }
                } catch (IOException e) {
                    // closed, or the client went away: the client's count tells
                }
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
