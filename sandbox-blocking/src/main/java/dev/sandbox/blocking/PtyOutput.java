package dev.sandbox.blocking;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.reactivestreams.Publisher;

/**
 * A terminal's output as an {@link InputStream} of raw bytes (escape sequences included), from {@link
 * PtySessionHandle#output()}; it ends ({@code read} returns -1) once the command has ended and everything was read.
 *
 * <p>At most four chunks (of up to 64 KiB each) are read ahead of the reader, so the stream holds little memory
 * whatever the terminal writes. The terminal does not wait for its readers: it keeps the newest {@link
 * dev.sandbox.PtyOptions#replayBytes()} bytes, and a reader that falls further behind gets an {@link
 * dev.sandbox.OffsetUnavailableException}. Each read that has to wait is bounded by the stream's {@link #timeout()}:
 * when it runs out, the stream ends and {@link dev.sandbox.SandboxTimeoutException} is thrown, the command untouched.
 * An interrupted reader gets the stream ended, its interrupt flag restored and a {@link SandboxInterruptedException};
 * reading on a Reactor non-blocking thread is an {@link IllegalStateException}. Errors of the SDK are thrown unchanged
 * (they are unchecked).
 *
 * <p>Closing it stops reading and detaches, and nothing else: the command keeps running and can be read again. It
 * is read by one thread at a time; {@link #close()} may be called from any thread, including to stop a reader that
 * waits on another one, after which every read returns -1.
 *
 * <pre>{@code
 * PtySessionHandle shell = client.pty().open(PtyOptions.shell());
 * try (PtyOutput screen = shell.output();
 *         BufferedReader lines = new BufferedReader(new InputStreamReader(screen, StandardCharsets.UTF_8))) {
 *     shell.write("echo ready\n");
 *     for (String line = lines.readLine(); line != null && !line.equals("ready"); line = lines.readLine()) {
 *         System.out.println(line);
 *     }
 * }
 * }</pre>
 */
public final class PtyOutput extends ChunkStream {
    /** Chunks read ahead of the reader. */
    private static final int PREFETCH = 4;

    private final Duration timeout;

    private PtyOutput(Duration timeout, String operation) {
        super(PREFETCH, timeout, "PtyOutput.read", operation);
        this.timeout = timeout;
    }

    /** Subscribes to the output (the reader counts as attached from now on) and returns the stream reading it. */
    static PtyOutput open(Publisher<ByteBuffer> output, Duration timeout, String operation) {
        PtyOutput stream = new PtyOutput(timeout, operation);
        stream.subscribe(output);
        return stream;
    }

    /**
     * The longest any single read may wait for output.
     *
     * <pre>{@code
     * Duration perRead = screen.timeout();
     * }</pre>
     *
     * @return the per-read timeout
     */
    public Duration timeout() {
        return timeout;
    }

    @Override
    int readAfterClose() {
        return -1;
    }

    /**
     * Stops reading and detaches from the terminal; the command keeps running. A reader waiting on another thread
     * wakes up and gets -1, as does every later read. Never blocks, never throws; idempotent.
     *
     * <pre>{@code
     * PtyOutput screen = shell.output(Duration.ofHours(1));
     * // ... on another thread, when the user detaches:
     * screen.close();
     * }</pre>
     */
    @Override
    public void close() {
        super.close();
    }
}
