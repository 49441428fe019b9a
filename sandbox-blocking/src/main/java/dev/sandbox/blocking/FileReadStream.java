package dev.sandbox.blocking;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.reactivestreams.Publisher;

/**
 * An {@link java.io.InputStream} over a file's chunks as the reactive API streams them: at most {@link #PREFETCH}
 * chunks are read ahead of the reader, each wait for a chunk is bounded by the timeout, and closing cancels the
 * reading. Errors of the SDK are thrown unchanged (they are unchecked); only reading after close is an {@link
 * IOException}.
 */
final class FileReadStream extends ChunkStream {
    /** Chunks (of up to 64 KiB) read ahead of the reader. */
    static final int PREFETCH = 4;

    private FileReadStream(Duration timeout, String operation) {
        super(PREFETCH, timeout, "FileClient.read", operation);
    }

    /**
     * Subscribes and waits for the first chunk (or the end, or the error), so that a missing file fails here rather
     * than at the first read.
     */
    static FileReadStream open(Publisher<ByteBuffer> chunks, Duration timeout, String operation) {
        FileReadStream stream = new FileReadStream(timeout, operation);
        stream.subscribe(chunks);
        stream.awaitFirst("waiting for the first bytes of " + operation);
        return stream;
    }

    @Override
    int readAfterClose() throws IOException {
        throw new IOException(operation + ": the stream is closed");
    }
}
