package dev.sandbox.implementation.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.SandboxException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One container's files through the daemon's archive API ({@code /containers/{id}/archive}), over the data plane's
 * transport: {@code HEAD} for a path's stat, {@code GET} for a file's content un-tarred as it arrives, {@code PUT}
 * for one file tarred on the fly. Nothing is held whole: the response body is read only while the subscriber has
 * demand (reactor-netty turns off auto-read), and the request body is written as the channel accepts it.
 *
 * <p>The daemon reads and writes the container's root file system from the host, as root. That view is only right
 * when the container's runtime uses it directly: gVisor ({@code runsc}) keeps its own, so there the caller must use
 * execs instead.
 */
public final class ContainerArchive {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final byte[] END = TarStream.trailer();

    /** Go's {@code os.ModeDir}. */
    public static final long MODE_DIR = 1L << 31;
    /** Go's {@code os.ModeSymlink}. */
    public static final long MODE_SYMLINK = 1L << 27;

    private final DockerDataPlane data;
    private final String sessionId;
    private final String containerId;

    ContainerArchive(DockerDataPlane data, String sessionId, String containerId) {
        this.data = data;
        this.sessionId = sessionId;
        this.containerId = containerId;
    }

    /**
     * What the daemon says about a path ({@code X-Docker-Container-Path-Stat}).
     *
     * @param name the last element
     * @param size the size
     * @param mode Go's file mode: permission bits and type bits such as {@link #MODE_DIR}
     * @param linkTarget for a symbolic link, the path it resolves to inside the container (every link followed)
     */
    public record PathStat(String name, long size, long mode, String linkTarget) {
        /**
         * Whether it is a directory.
         *
         * @return {@code true} for a directory
         */
        public boolean directory() {
            return (mode & MODE_DIR) != 0;
        }

        /**
         * Whether it is a symbolic link.
         *
         * @return {@code true} for a link
         */
        public boolean symlink() {
            return (mode & MODE_SYMLINK) != 0;
        }
    }

    /**
     * The daemon refused an archive request.
     *
     * @see #status
     */
    public static final class ArchiveException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /** The HTTP status. */
        public final int status;

        ArchiveException(int status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }

    private String uri(String path, String extra) {
        return "/containers/" + containerId + "/archive?path=" + URLEncoder.encode(path, StandardCharsets.UTF_8)
                + extra;
    }

    /**
     * Stats a path without following a final link.
     *
     * @param path an absolute path in the container
     * @return the stat, or empty when nothing is there
     */
    public Mono<PathStat> stat(String path) {
        return data.http()
                .head()
                .uri(uri(path, ""))
                .responseSingle((resp, body) -> {
                    int status = resp.status().code();
                    if (status == 404) {
                        return body.then(Mono.<PathStat>empty());
                    }
                    if (status != 200) {
                        return body.then(
                                Mono.error(failure(status, resp.status().reasonPhrase())));
                    }
                    String header = resp.responseHeaders().get("X-Docker-Container-Path-Stat");
                    if (header == null) {
                        return body.then(Mono.error(failure(502, "no X-Docker-Container-Path-Stat header")));
                    }
                    try {
                        JsonNode n = JSON.readTree(Base64.getDecoder().decode(header));
                        return body.then(Mono.just(new PathStat(
                                n.path("name").asText(),
                                n.path("size").asLong(),
                                n.path("mode").asLong(),
                                n.path("linkTarget").asText(""))));
                    } catch (IOException | IllegalArgumentException e) {
                        return body.then(Mono.error(failure(502, "an unreadable path stat: " + e.getMessage())));
                    }
                })
                .onErrorMap(this::transportFailure);
    }

    /**
     * Streams the content of a regular file, un-tarring it as it arrives; the connection is closed as soon as the
     * content has passed.
     *
     * @param path an absolute path in the container, of a regular file
     * @return the content in the pieces the network delivered, copied to the heap, or {@link ArchiveException}, or
     *     {@link TarStream.NotAFileException} when the path is not a regular file
     */
    public Flux<ByteBuffer> read(String path) {
        return content(path).map(buf -> {
            try {
                ByteBuffer copy = ByteBuffer.allocate(buf.readableBytes());
                buf.readBytes(copy);
                return copy.flip();
            } finally {
                buf.release();
            }
        });
    }

    /**
     * Streams the content of a regular file as slices of the buffers the connection read, without copying them; the
     * connection is read only while the subscriber has demand, and closed as soon as the content has passed.
     *
     * <p>Each buffer is the subscriber's to release. Buffers that operators drop on a cancel or an error go to the
     * discard hook, so a subscriber that queues them (such as {@code publishOn}) must release discarded {@link
     * ByteBuf}s with {@code doOnDiscard} below its queue.
     *
     * @param path an absolute path in the container, of a regular file
     * @return the content, or {@link ArchiveException}, or {@link TarStream.NotAFileException} when the path is not
     *     a regular file
     */
    public Flux<ByteBuf> content(String path) {
        return Flux.defer(() -> {
                    TarStream.Reader tar = new TarStream.Reader();
                    return data.http().get().uri(uri(path, "")).response((resp, body) -> {
                        int status = resp.status().code();
                        if (status != 200) {
                            return body.aggregate()
                                    .asString(StandardCharsets.UTF_8)
                                    .defaultIfEmpty(resp.status().reasonPhrase())
                                    .flatMapMany(m -> Flux.<ByteBuf>error(failure(status, message(m))));
                        }
                        // the connection releases each buffer once onNext returns: a slice of it is retained
                        return body.<ByteBuf>handle((buf, sink) -> {
                                    ByteBuf piece = tar.feed(buf);
                                    if (piece != null) {
                                        sink.next(piece);
                                    }
                                    if (tar.done()) {
                                        sink.complete(); // cancels the response: the rest of the archive is padding
                                    }
                                })
                                .concatWith(Flux.defer(() -> tar.done()
                                        ? Flux.empty()
                                        : Flux.error(new TarStream.CorruptArchiveException(
                                                "the archive of " + path + " ended early"))));
                    });
                })
                .onErrorMap(this::transportFailure);
    }

    /**
     * Writes one regular file into a directory from content of a known size, tarred on the fly.
     *
     * @param dir an absolute path in the container, of an existing directory
     * @param name the file's name in it (ASCII, at most 100 bytes)
     * @param size exactly how many bytes {@code content} gives
     * @param mode the permission bits
     * @param content the bytes, consumed as the connection accepts them; each buffer is released once written (or
     *     dropped)
     * @return completes when the daemon has extracted the file, or {@link ArchiveException}
     */
    public Mono<Void> write(String dir, String name, long size, int mode, Publisher<ByteBuf> content) {
        return Mono.defer(() -> {
                    AtomicLong sent = new AtomicLong();
                    Flux<ByteBuf> body = Flux.concat(
                                    Mono.fromSupplier(() -> Unpooled.wrappedBuffer(
                                            TarStream.fileHeader(name, size, mode, System.currentTimeMillis() / 1000))),
                                    Flux.from(content).map(buf -> {
                                        if (sent.addAndGet(buf.readableBytes()) > size) {
                                            buf.release();
                                            throw new IllegalStateException("the content of " + name
                                                    + " is longer than the " + size + " bytes announced");
                                        }
                                        return buf;
                                    }),
                                    Mono.fromSupplier(() -> {
                                        if (sent.get() != size) {
                                            throw new IllegalStateException("the content of " + name + " is "
                                                    + sent.get() + " bytes, not the " + size + " announced");
                                        }
                                        return Unpooled.wrappedBuffer(new byte[TarStream.padding(size)], END);
                                    }))
                            .doOnDiscard(ByteBuf.class, ReferenceCountUtil::safeRelease);
                    long length = TarStream.BLOCK + size + TarStream.padding(size) + END.length;
                    return data.http()
                            .headers(h -> h.set(HttpHeaderNames.CONTENT_LENGTH, length)
                                    .set(HttpHeaderNames.CONTENT_TYPE, "application/x-tar"))
                            .put()
                            .uri(uri(dir, "&noOverwriteDirNonDir=true&copyUIDGID=1"))
                            .send(body)
                            .responseSingle((resp, answer) -> {
                                int status = resp.status().code();
                                if (status == 200) {
                                    return answer.then();
                                }
                                return answer.asString(StandardCharsets.UTF_8)
                                        .defaultIfEmpty(resp.status().reasonPhrase())
                                        .flatMap(m -> Mono.error(failure(status, message(m))));
                            });
                })
                .onErrorMap(this::transportFailure);
    }

    private RuntimeException failure(int status, String message) {
        return DockerErrors.archive(sessionId, status, message);
    }

    private Throwable transportFailure(Throwable e) {
        if (e instanceof SandboxException
                || e instanceof ArchiveException
                || e instanceof TarStream.NotAFileException
                || e instanceof TarStream.CorruptArchiveException) {
            return e;
        }
        if (e instanceof IllegalStateException) {
            return e; // our own content checks
        }
        return DockerErrors.connection(
                data.dockerHost(), "archive request to container " + containerId + " of session " + sessionId, e);
    }

    private static String message(String body) {
        try {
            JsonNode n = JSON.readTree(body);
            if (n.hasNonNull("message")) {
                return n.get("message").asText();
            }
        } catch (IOException ignored) {
            // not JSON: the body is the message
        }
        return body.strip();
    }
}
