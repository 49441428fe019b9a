package dev.sandbox.implementation.docker;

import dev.sandbox.implementation.files.LocalFileIo;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Host files read into and written from Netty's buffers, so the daemon connection's own buffers reach the disk, and
 * the disk's reach the connection, without a copy through the heap. Failures are the same typed errors as {@link
 * LocalFileIo}'s.
 */
public final class HostBuffers {
    private static final LocalFileIo.Buffers<ByteBuf> BYTE_BUFS = new LocalFileIo.Buffers<>() {
        @Override
        public Class<ByteBuf> type() {
            return ByteBuf.class;
        }

        @Override
        public ByteBuffer[] views(ByteBuf buffer) {
            return buffer.nioBuffers();
        }

        @Override
        public void release(ByteBuf buffer) {
            ReferenceCountUtil.safeRelease(buffer);
        }
    };

    private HostBuffers() {}

    /**
     * Streams a file in off-heap buffers from Netty's allocator, reading one buffer per request. Each buffer is the
     * subscriber's to release.
     *
     * @param file the file
     * @param shownPath the path to name in errors
     * @param chunkSize the most bytes in one buffer
     * @return the content
     */
    public static Flux<ByteBuf> read(Path file, String shownPath, int chunkSize) {
        return Flux.using(
                        () -> LocalFileIo.openForRead(file, shownPath),
                        channel -> Flux.<ByteBuf>generate(sink -> {
                            ByteBuf buf = ByteBufAllocator.DEFAULT.directBuffer(chunkSize, chunkSize);
                            try {
                                if (buf.writeBytes(channel, chunkSize) < 0) {
                                    buf.release();
                                    sink.complete();
                                } else {
                                    sink.next(buf);
                                }
                            } catch (IOException e) {
                                buf.release();
                                sink.error(LocalFileIo.failure(shownPath, e));
                            }
                        }),
                        HostBuffers::closeQuietly)
                .subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * Writes a file from Netty buffers through a temporary file renamed into place (see {@link
     * LocalFileIo#writeAtomically(Path, String, Publisher, int, LocalFileIo.Buffers)}), releasing each buffer once
     * written.
     *
     * @param target the file to write
     * @param shownPath the path to name in errors
     * @param content the bytes, consumed with backpressure
     * @param prefetch how many buffers may wait for the writing thread
     * @return the number of bytes written, once the file is in place
     */
    public static Mono<Long> write(Path target, String shownPath, Publisher<ByteBuf> content, int prefetch) {
        return LocalFileIo.writeAtomically(target, shownPath, content, prefetch, BYTE_BUFS);
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // nothing to lose on a failed close of a channel we are done with
        }
    }
}
