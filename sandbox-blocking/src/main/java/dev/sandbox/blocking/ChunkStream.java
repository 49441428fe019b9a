package dev.sandbox.blocking;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;

/**
 * What {@link FileReadStream} and {@link PtyOutput} share: an {@link InputStream} over the byte chunks a publisher
 * emits, with at most {@code prefetch} chunks read ahead of the reader (through a {@link QueueReader}), every wait
 * for a chunk bounded by the timeout, and a {@link #close()} that cancels the subscription. Errors of the SDK are
 * thrown unchanged (they are unchecked). Reading is for one thread at a time; {@link #close()} may be called from any
 * thread and wakes a reader waiting for a chunk.
 */
abstract class ChunkStream extends InputStream {
    final QueueReader<ByteBuffer> reader;
    final String operation;
    private final Duration timeout;
    private final String method;
    private volatile boolean closed;

    // reader state: used by the one reading thread only
    private @Nullable ByteBuffer current;

    ChunkStream(int prefetch, Duration timeout, String method, String operation) {
        this.reader = new QueueReader<>(prefetch);
        this.timeout = timeout;
        this.method = method;
        this.operation = operation;
    }

    final void subscribe(Publisher<ByteBuffer> chunks) {
        reader.subscribe(chunks);
    }

    /**
     * What a read does once the stream was closed: throw (a file read) or report the end (a stream that is closed to
     * detach a reader on another thread).
     *
     * @return -1 to report the end
     * @throws IOException to refuse the read
     */
    abstract int readAfterClose() throws IOException;

    /**
     * Waits for the first chunk, or the end, or the error, so that a failure shows when the stream is opened rather
     * than at the first read; closes the stream when it throws.
     */
    final void awaitFirst(String what) {
        try {
            current = reader.take(timeout, method, operation, what);
        } catch (RuntimeException | Error e) {
            close();
            throw e;
        }
    }

    /**
     * The next chunk with bytes left, or {@code null} at the end (or once closed while waiting). The caller may
     * consume it entirely.
     */
    final @Nullable ByteBuffer nextChunk() throws IOException {
        if (closed) {
            readAfterClose();
            return null;
        }
        while (current == null || !current.hasRemaining()) {
            if (closed || reader.ended()) {
                current = null;
                return null;
            }
            current = reader.take(timeout, method, operation, "waiting for the next bytes of " + operation);
        }
        ByteBuffer chunk = current;
        current = null;
        return chunk;
    }

    /** The chunk to read from, with bytes left; {@code null} at the end (or after a close that reports the end). */
    private @Nullable ByteBuffer fill() throws IOException {
        if (closed) {
            readAfterClose();
            return null;
        }
        ByteBuffer chunk = current;
        if (chunk != null && chunk.hasRemaining()) {
            return chunk;
        }
        chunk = nextChunk();
        current = chunk;
        return chunk;
    }

    @Override
    public final int read() throws IOException {
        ByteBuffer chunk = fill();
        return chunk == null ? -1 : chunk.get() & 0xFF;
    }

    @Override
    public final int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        ByteBuffer chunk = fill();
        if (chunk == null) {
            return -1;
        }
        int n = Math.min(len, chunk.remaining());
        chunk.get(b, off, n);
        return n;
    }

    @Override
    public int available() throws IOException {
        if (closed) {
            readAfterClose();
            return 0;
        }
        ByteBuffer chunk = current;
        return chunk == null ? 0 : chunk.remaining();
    }

    /** Cancels the subscription and ends the reading; wakes a reader waiting for a chunk. Idempotent, never throws. */
    @Override
    public void close() {
        closed = true;
        reader.close();
    }
}
