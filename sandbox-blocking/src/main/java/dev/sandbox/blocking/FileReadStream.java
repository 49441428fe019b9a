package dev.sandbox.blocking;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import org.reactivestreams.Publisher;

/**
 * An {@link InputStream} over a file's chunks as the reactive API streams them: at most {@link #PREFETCH} chunks are
 * read ahead of the reader, each wait for a chunk is bounded by the timeout, and closing cancels the reading. Errors
 * of the SDK are thrown unchanged (they are unchecked); only reading after close is an {@link IOException}.
 */
final class FileReadStream extends InputStream {
    /** Chunks (of up to 64 KiB) read ahead of the reader. */
    static final int PREFETCH = 4;

    private static final String METHOD = "FileClient.read";

    private final QueueReader<ByteBuffer> reader = new QueueReader<>(PREFETCH);
    private final Duration timeout;
    private final String operation;
    private ByteBuffer current;
    private boolean closed;

    private FileReadStream(Duration timeout, String operation) {
        this.timeout = timeout;
        this.operation = operation;
    }

    /**
     * Subscribes and waits for the first chunk (or the end, or the error), so that a missing file fails here rather
     * than at the first read.
     */
    static FileReadStream open(Publisher<ByteBuffer> chunks, Duration timeout, String operation) {
        FileReadStream stream = new FileReadStream(timeout, operation);
        stream.reader.subscribe(chunks);
        try {
            stream.current =
                    stream.reader.take(timeout, METHOD, operation, "waiting for the first bytes of " + operation);
        } catch (RuntimeException | Error e) {
            stream.close();
            throw e;
        }
        return stream;
    }

    /** The next chunk with bytes left, or {@code null} at the end. */
    ByteBuffer nextChunk() throws IOException {
        if (closed) {
            throw new IOException(operation + ": the stream is closed");
        }
        while (current == null || !current.hasRemaining()) {
            if (reader.ended()) {
                current = null;
                return null;
            }
            current = reader.take(timeout, METHOD, operation, "waiting for the next bytes of " + operation);
        }
        ByteBuffer chunk = current;
        current = null;
        return chunk;
    }

    private boolean fill() throws IOException {
        if (closed) {
            throw new IOException(operation + ": the stream is closed");
        }
        if (current != null && current.hasRemaining()) {
            return true;
        }
        current = nextChunk();
        return current != null;
    }

    @Override
    public int read() throws IOException {
        return fill() ? current.get() & 0xFF : -1;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) {
            return 0;
        }
        if (!fill()) {
            return -1;
        }
        int n = Math.min(len, current.remaining());
        current.get(b, off, n);
        return n;
    }

    @Override
    public int available() throws IOException {
        if (closed) {
            throw new IOException(operation + ": the stream is closed");
        }
        return current == null ? 0 : current.remaining();
    }

    /** Cancels the reading; idempotent. */
    @Override
    public void close() {
        closed = true;
        current = null;
        reader.close();
    }
}
