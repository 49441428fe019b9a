package dev.sandbox.implementation.remote;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.BackendException;
import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.TransferProgress;
import dev.sandbox.WriteOptions;
import dev.sandbox.implementation.files.FileArguments;
import dev.sandbox.implementation.files.LocalTree;
import dev.sandbox.implementation.files.Removal;
import dev.sandbox.implementation.files.SandboxTree;
import dev.sandbox.implementation.files.TarCodec;
import dev.sandbox.implementation.files.TreeItem;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import io.netty.handler.codec.http.HttpMethod;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/** The files of a remote session: every call is one HTTP request; contents stream as raw bytes both ways. */
final class RemoteFiles implements SandboxFiles {
    private final RemoteTransport t;
    private final String path;
    private final Runnable guard;
    private final Scheduler io = Schedulers.boundedElastic();

    RemoteFiles(RemoteTransport t, String sessionPath, Runnable guard) {
        this.t = t;
        this.path = sessionPath + "/files";
        this.guard = guard;
    }

    private static FileInfo fileInfo(JsonNode n) {
        return ResourceBodies.read(n, ResourceBodies.FileInfoBody.class).info();
    }

    private static String q(String p) {
        return "?path=" + RemoteTransport.enc(p);
    }

    @Override
    public Flux<ByteBuffer> read(String file) {
        return Flux.defer(() -> {
            guard.run();
            return t.download(path + "/content" + q(file)).publishOn(io, 2);
        });
    }

    @Override
    public Flux<ByteBuffer> read(String file, long offset, long length) {
        return Flux.defer(() -> {
            guard.run();
            FileArguments.checkRange(offset, length);
            String range = "&offset=" + offset + (length == Long.MAX_VALUE ? "" : "&length=" + length);
            return t.download(path + "/content" + q(file) + range).publishOn(io, 2);
        });
    }

    @Override
    public Mono<byte[]> readAllBytes(String file, long maxBytes) {
        return Mono.defer(() -> {
            guard.run();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            return t.download(path + "/content" + q(file) + "&maxBytes=" + maxBytes)
                    .concatMap(b -> {
                        if (out.size() + (long) b.remaining() > maxBytes) {
                            return Mono.error(new FileOperationException(
                                    file,
                                    FileOperationException.Reason.TOO_LARGE,
                                    file + ": file too large (over the cap of " + maxBytes + " bytes)",
                                    null));
                        }
                        byte[] chunk = new byte[b.remaining()];
                        b.get(chunk);
                        out.write(chunk, 0, chunk.length);
                        return Mono.empty();
                    })
                    .then(Mono.fromSupplier(out::toByteArray));
        });
    }

    @Override
    public Mono<FileInfo> write(String file, Publisher<ByteBuffer> content, WriteOptions options) {
        return Mono.defer(() -> {
            guard.run();
            String parents = "&parents=" + options.createParents();
            return t.upload(HttpMethod.PUT, path + "/content" + q(file) + parents, content, true)
                    .map(RemoteFiles::fileInfo)
                    .switchIfEmpty(Mono.error(() -> RemoteErrors.protocol("the server sent no file info")));
        });
    }

    /** One request: the files' contents as base64 in a JSON body, written by the server in the map's order. */
    @Override
    public Mono<List<FileInfo>> writeAll(Map<String, byte[]> files) {
        List<RequestBodies.BatchFile> batch = new ArrayList<>();
        for (Map.Entry<String, byte[]> e : files.entrySet()) {
            batch.add(new RequestBodies.BatchFile(e.getKey(), e.getValue().clone()));
        }
        return Mono.defer(() -> {
            guard.run();
            if (batch.isEmpty()) {
                return Mono.just(List.<FileInfo>of());
            }
            return t.longCall(HttpMethod.POST, path + "/batch", new RequestBodies.BatchBody(batch))
                    .map(n -> ResourceBodies.read(n, ResourceBodies.FileList.class).entries().stream()
                            .map(ResourceBodies.FileInfoBody::info)
                            .toList());
        });
    }

    @Override
    public Mono<FileInfo> upload(Path local, String file) {
        return upload(local, file, null);
    }

    /** A directory goes as one tar stream ({@code PUT files/tree}); a file as before. */
    @Override
    public Mono<FileInfo> upload(Path local, String file, Consumer<TransferProgress> progress) {
        return SandboxTree.localKind(local).flatMap(kind -> {
            if (kind != SandboxTree.LocalKind.DIRECTORY) {
                return SandboxTree.upload(this, local, file, progress);
            }
            guard.run();
            long[] counts = {0, 0};
            Flux<TreeItem> items = LocalTree.read(local).doOnNext(item -> {
                if (item instanceof TreeItem.Entry) {
                    counts[0]++;
                } else if (item instanceof TreeItem.Data d) {
                    counts[1] += d.bytes().remaining();
                }
                if (progress != null) {
                    progress.accept(new TransferProgress(counts[0], counts[1]));
                }
            });
            return t.upload(HttpMethod.PUT, path + "/tree" + q(file), TarCodec.encode(items), true)
                    .map(RemoteFiles::fileInfo)
                    .switchIfEmpty(Mono.error(() -> RemoteErrors.protocol("the server sent no file info")));
        });
    }

    @Override
    public Mono<Long> download(String file, Path local) {
        return download(file, local, null);
    }

    /** A directory comes as one tar stream ({@code GET files/tree}), checked as everything from a sandbox. */
    @Override
    public Mono<Long> download(String file, Path local, Consumer<TransferProgress> progress) {
        return stat(file)
                .flatMap(info -> info.type() == FileInfo.Type.DIRECTORY
                        ? SandboxTree.download(TarCodec.decode(t.download(path + "/tree" + q(file))), local, progress)
                        : SandboxTree.download(this, file, local, progress));
    }

    @Override
    public Flux<FileInfo> list(String dir, int depth) {
        return Flux.defer(() -> {
            guard.run();
            int d = FileArguments.depth(depth);
            return t.call(HttpMethod.GET, path + "/list" + q(dir) + "&depth=" + d, null)
                    .flatMapIterable(n -> ResourceBodies.read(n, ResourceBodies.FileList.class)
                            .entries())
                    .map(ResourceBodies.FileInfoBody::info);
        });
    }

    @Override
    public Mono<FileInfo> stat(String file) {
        return Mono.defer(() -> {
            guard.run();
            return t.call(HttpMethod.GET, path + "/stat" + q(file), null).map(RemoteFiles::fileInfo);
        });
    }

    @Override
    public Mono<Boolean> mkdir(String dir) {
        return Mono.defer(() -> {
            guard.run();
            RequestBodies.PathBody body = new RequestBodies.PathBody(dir);
            return t.call(HttpMethod.POST, path + "/mkdir", body)
                    .map(n -> ResourceBodies.read(n, ResourceBodies.MkdirAnswer.class)
                            .created())
                    .switchIfEmpty(Mono.error(() -> new BackendException(
                            "the sandbox server answered mkdir of '" + dir + "' without saying whether it created"
                                    + " the directory (a server older than this client?)",
                            null)));
        });
    }

    @Override
    public Mono<Void> remove(String file) {
        return remove(file, false);
    }

    @Override
    public Mono<Void> remove(String file, boolean recursive) {
        return Mono.defer(() -> {
            guard.run();
            // the server's provider removes idempotently; so does this client, whatever the server
            return Removal.idempotent(t.call(HttpMethod.DELETE, path + q(file) + "&recursive=" + recursive, null)
                    .then());
        });
    }

    @Override
    public Mono<Void> move(String from, String to) {
        return Mono.defer(() -> {
            guard.run();
            RequestBodies.MoveBody body = new RequestBodies.MoveBody(from, to);
            return t.call(HttpMethod.POST, path + "/move", body).then();
        });
    }

    @Override
    public Flux<FileEvent> watch(String dir, boolean recursive) {
        return Flux.defer(() -> {
            guard.run();
            return RemoteStreams.watch(t, path + "/watch" + q(dir) + (recursive ? "&recursive=true" : ""));
        });
    }
}
