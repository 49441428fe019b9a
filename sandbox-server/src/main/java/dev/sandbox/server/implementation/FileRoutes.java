package dev.sandbox.server.implementation;

import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.WriteOptions;
import dev.sandbox.implementation.files.SandboxTree;
import dev.sandbox.implementation.files.TarCodec;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The files' routes: read and write a file, write several at once, list, stat, mkdir, remove, move, and move a
 * directory as a tar stream. A refused path is 403 on these routes.
 */
final class FileRoutes extends Routes {
    /**
     * The routes of files.
     *
     * @param state what the routes share
     */
    FileRoutes(State state) {
        super(state);
    }

    @Override
    void register(HttpServerRoutes routes) {
        routes.get("/v1/sessions/{id}/files/content", guard(true, this::fileRead));
        routes.put("/v1/sessions/{id}/files/content", guard(true, this::fileWrite));
        routes.post("/v1/sessions/{id}/files/batch", guard(true, this::fileWriteAll));
        routes.get("/v1/sessions/{id}/files/list", guard(true, this::fileList));
        routes.get("/v1/sessions/{id}/files/stat", guard(true, this::fileStat));
        routes.post("/v1/sessions/{id}/files/mkdir", guard(true, this::fileMkdir));
        routes.delete("/v1/sessions/{id}/files", guard(true, this::fileRemove));
        routes.post("/v1/sessions/{id}/files/move", guard(true, this::fileMove));
        routes.get("/v1/sessions/{id}/files/tree", guard(true, this::treeRead));
        routes.put("/v1/sessions/{id}/files/tree", guard(true, this::treeWrite));
    }

    /** Download chunks are cut to this size, bounding what waits in a connection's outbound buffer. */
    private static final int DOWNLOAD_SLICE = 16 * 1024;

    /** The largest body of {@code files/batch}: its contents are base64 in JSON, held in memory while written. */
    private static final long MAX_BATCH_BYTES = 32L << 20;

    private Mono<Void> fileRead(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        long maxBytes = Http.longQuery(req, "maxBytes", -1);
        long offset = Http.longQuery(req, "offset", 0);
        long length = Http.longQuery(req, "length", Long.MAX_VALUE);
        boolean ranged = Http.query(req, "offset") != null || Http.query(req, "length") != null;
        return withSession(req, s -> {
            SandboxFiles files = s.files();
            Flux<ByteBuffer> content = ranged ? files.read(path, offset, length) : files.read(path);
            Mono<Void> check = maxBytes < 0
                    ? Mono.empty()
                    : files.stat(path)
                            .flatMap(info -> info.type() == FileInfo.Type.FILE && info.size() > maxBytes
                                    ? Mono.error(new FileOperationException(
                                            path,
                                            FileOperationException.Reason.TOO_LARGE,
                                            path + ": " + info.size() + " bytes is over the cap of " + maxBytes,
                                            null))
                                    : Mono.empty());
            return check.then(content.switchOnFirst((first, all) -> {
                        if (first.hasError()) {
                            return Mono.error(first.getThrowable());
                        }
                        res.status(200).header(HttpHeaderNames.CONTENT_TYPE, WireJson.OCTET_STREAM);
                        return res.send(all.concatMapIterable(FileRoutes::slices, 1))
                                .then();
                    })
                    .then());
        });
    }

    /** Cuts a chunk into slices that wrap it (no copy), so few bytes wait in the outbound buffer at once. */
    private static List<ByteBuf> slices(ByteBuffer b) {
        java.util.ArrayList<ByteBuf> out = new java.util.ArrayList<>();
        ByteBuffer rest = b.duplicate();
        while (rest.hasRemaining()) {
            int n = Math.min(DOWNLOAD_SLICE, rest.remaining());
            ByteBuffer slice = rest.slice(rest.position(), n);
            rest.position(rest.position() + n);
            out.add(Unpooled.wrappedBuffer(slice));
        }
        return out;
    }

    /** The request's body, failing with 413 once it passes the server's upload limit. */
    private Flux<ByteBuffer> uploadBody(HttpServerRequest req) {
        long max = config.maxUploadBytes();
        long[] seen = {0};
        return Http.rawBody(req).doOnNext(bytes -> {
            seen[0] += bytes.remaining();
            if (seen[0] > max) {
                throw new HttpError(413, "PayloadTooLarge", "the upload is over the limit of " + max + " bytes");
            }
        });
    }

    private Mono<Void> fileWrite(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        Flux<ByteBuffer> body = uploadBody(req);
        WriteOptions options = WriteOptions.defaults().withCreateParents(Http.boolQuery(req, "parents", true));
        return withSession(req, s -> s.files().write(path, body, options))
                .flatMap(info -> Http.json(res, 200, ResourceBodies.FileInfoBody.of(info)));
    }

    /** A directory as a tar stream ({@link TarCodec}); a failure before the first byte is a JSON error. */
    private Mono<Void> treeRead(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        return withSession(req, s -> {
            SandboxFiles files = s.files();
            return files.stat(path)
                    .flatMap(info -> info.type() == FileInfo.Type.DIRECTORY
                            ? Mono.just(info)
                            : Mono.error(new FileOperationException(
                                    path,
                                    FileOperationException.Reason.NOT_A_DIRECTORY,
                                    path + ": not a directory",
                                    null)))
                    .then(TarCodec.encode(SandboxTree.read(files, path))
                            .switchOnFirst((first, all) -> {
                                if (first.hasError()) {
                                    return Mono.error(first.getThrowable());
                                }
                                res.status(200).header(HttpHeaderNames.CONTENT_TYPE, WireJson.OCTET_STREAM);
                                return res.send(all.concatMapIterable(FileRoutes::slices, 1))
                                        .then();
                            })
                            .then());
        });
    }

    /** A tar stream written into a sandbox directory; the whole body is bounded like a file upload's. */
    private Mono<Void> treeWrite(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        Flux<ByteBuffer> body = uploadBody(req);
        return withSession(req, s -> SandboxTree.write(s.files(), TarCodec.decode(body), path, null))
                .flatMap(info -> Http.json(res, 200, ResourceBodies.FileInfoBody.of(info)));
    }

    /** Several files in one request, base64 in JSON: bounded by the upload limit and by {@link #MAX_BATCH_BYTES}. */
    private Mono<Void> fileWriteAll(HttpServerRequest req, HttpServerResponse res) {
        long limit = Math.min(MAX_BATCH_BYTES, config.maxUploadBytes() / 3 * 4 + 64 * 1024);
        return Http.body(req, (int) limit)
                .map(Routes::object)
                .flatMap(n -> {
                    RequestBodies.BatchBody batch = RequestBodies.read(n, RequestBodies.BatchBody.class);
                    Map<String, byte[]> files = new LinkedHashMap<>();
                    for (RequestBodies.BatchFile f : batch.files()) {
                        if (f == null || f.path() == null) {
                            throw new InvalidArgumentException("files", "every file needs a path");
                        }
                        if (files.put(f.path(), f.content() == null ? new byte[0] : f.content()) != null) {
                            throw new InvalidArgumentException("files", "path '" + f.path() + "' is given twice");
                        }
                    }
                    return withSession(req, s -> s.files().writeAll(files));
                })
                .flatMap(list -> Http.json(res, 200, ResourceBodies.FileList.of(list)));
    }

    private Mono<Void> fileList(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        int depth = intQuery(req, "depth", 1);
        return withSession(req, s -> s.files().list(path, depth).collectList()).flatMap(list -> {
            return Http.json(res, 200, ResourceBodies.FileList.of(list));
        });
    }

    private Mono<Void> fileStat(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        return withSession(req, s -> s.files().stat(path))
                .flatMap(i -> Http.json(res, 200, ResourceBodies.FileInfoBody.of(i)));
    }

    private Mono<Void> fileMkdir(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .flatMap(n -> {
                    String path = textField(n, "path");
                    return withSession(req, s -> s.files().mkdir(path));
                })
                .flatMap(created -> Http.json(res, 200, new ResourceBodies.MkdirAnswer(created)));
    }

    private Mono<Void> fileRemove(HttpServerRequest req, HttpServerResponse res) {
        String path = requiredQuery(req, "path");
        boolean recursive = Http.boolQuery(req, "recursive", false);
        return withSession(req, s -> s.files().remove(path, recursive).thenReturn(path))
                .then(Http.noContent(res));
    }

    private Mono<Void> fileMove(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .flatMap(n -> {
                    String from = textField(n, "from");
                    String to = textField(n, "to");
                    return withSession(req, s -> s.files().move(from, to).thenReturn(to));
                })
                .then(Http.noContent(res));
    }
}
