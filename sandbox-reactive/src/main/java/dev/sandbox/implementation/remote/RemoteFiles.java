package dev.sandbox.implementation.remote;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox.BackendException;
import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.FileOperationException;
import dev.sandbox.SandboxFiles;
import io.netty.handler.codec.http.HttpMethod;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
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
    public Mono<FileInfo> write(String file, Publisher<ByteBuffer> content) {
        return Mono.defer(() -> {
            guard.run();
            return t.upload(HttpMethod.PUT, path + "/content" + q(file), content, true)
                    .map(Wire::fileInfo)
                    .switchIfEmpty(Mono.error(() -> new BackendException("the server sent no file info", null)));
        });
    }

    @Override
    public Mono<FileInfo> write(String file, byte[] content) {
        byte[] copy = content.clone();
        return write(file, Mono.fromSupplier(() -> ByteBuffer.wrap(copy)));
    }

    @Override
    public Mono<FileInfo> upload(Path local, String file) {
        return Mono.defer(() -> {
            if (!Files.isRegularFile(local)) {
                return Mono.error(new FileOperationException(
                        local.toString(),
                        FileOperationException.Reason.NOT_FOUND,
                        local + ": no such file or directory",
                        null));
            }
            return write(file, readLocal(local));
        });
    }

    /** Reads a local file in chunks, one read per request, on a thread that may block. */
    private Flux<ByteBuffer> readLocal(Path local) {
        return Flux.using(
                        () -> FileChannel.open(local, StandardOpenOption.READ),
                        channel -> Flux.<ByteBuffer>generate(sink -> {
                            ByteBuffer buf = ByteBuffer.allocate(CHUNK_SIZE);
                            try {
                                if (channel.read(buf) < 0) {
                                    sink.complete();
                                } else {
                                    sink.next(buf.flip());
                                }
                            } catch (IOException e) {
                                sink.error(failure(local, e));
                            }
                        }),
                        channel -> {
                            try {
                                channel.close();
                            } catch (IOException ignored) {
                                // read only
                            }
                        })
                .onErrorMap(IOException.class, e -> failure(local, e))
                .subscribeOn(io);
    }

    private static FileOperationException failure(Path local, IOException e) {
        return new FileOperationException(
                local.toString(), FileOperationException.Reason.IO_ERROR, local + ": I/O error: " + e.getMessage(), e);
    }

    @Override
    public Mono<Long> download(String file, Path local) {
        return Mono.defer(() -> {
            guard.run();
            Path target = local.toAbsolutePath();
            Path parent = target.getParent();
            return Mono.usingWhen(
                    Mono.fromCallable(() -> {
                                Path temp = Files.createTempFile(parent, "." + target.getFileName(), ".part");
                                return new Temp(temp, FileChannel.open(temp, StandardOpenOption.WRITE));
                            })
                            .onErrorMap(IOException.class, e -> failure(target, e))
                            .subscribeOn(io),
                    temp -> t.download(path + "/content" + q(file))
                            .publishOn(io, 2)
                            .reduce(0L, (count, buf) -> count + temp.write(buf, target))
                            .doOnNext(count -> temp.commit(target)),
                    temp -> Mono.fromRunnable(temp::discard).subscribeOn(io),
                    (temp, err) -> Mono.fromRunnable(temp::discard).subscribeOn(io),
                    temp -> Mono.fromRunnable(temp::discard).subscribeOn(io));
        });
    }

    /** A temporary file beside the download's target, renamed into place when complete. */
    private static final class Temp {
        private final Path path;
        private final FileChannel channel;
        private boolean committed;

        Temp(Path path, FileChannel channel) {
            this.path = path;
            this.channel = channel;
        }

        long write(ByteBuffer buf, Path target) {
            int n = buf.remaining();
            try {
                while (buf.hasRemaining()) {
                    channel.write(buf);
                }
            } catch (IOException e) {
                throw failure(target, e);
            }
            return n;
        }

        synchronized void commit(Path target) {
            try {
                channel.close();
                try {
                    Files.move(path, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(path, target, StandardCopyOption.REPLACE_EXISTING);
                }
                committed = true;
            } catch (IOException e) {
                throw failure(target, e);
            }
        }

        synchronized void discard() {
            try {
                channel.close();
                if (!committed) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException ignored) {
                // best effort: the name is unique and hidden
            }
        }
    }

    @Override
    public Flux<FileInfo> list(String dir) {
        return Flux.defer(() -> {
            guard.run();
            return t.call(HttpMethod.GET, path + "/list" + q(dir), null)
                    .flatMapIterable(n -> n.path("entries"))
                    .map(Wire::fileInfo);
        });
    }

    @Override
    public Mono<FileInfo> stat(String file) {
        return Mono.defer(() -> {
            guard.run();
            return t.call(HttpMethod.GET, path + "/stat" + q(file), null).map(Wire::fileInfo);
        });
    }

    @Override
    public Mono<Void> mkdir(String dir) {
        return Mono.defer(() -> {
            guard.run();
            ObjectNode body = Wire.JSON.createObjectNode().put("path", dir);
            return t.call(HttpMethod.POST, path + "/mkdir", body).then();
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
            return t.call(HttpMethod.DELETE, path + q(file) + "&recursive=" + recursive, null)
                    .then();
        });
    }

    @Override
    public Mono<Void> move(String from, String to) {
        return Mono.defer(() -> {
            guard.run();
            ObjectNode body = Wire.JSON.createObjectNode().put("from", from).put("to", to);
            return t.call(HttpMethod.POST, path + "/move", body).then();
        });
    }

    @Override
    public Flux<FileEvent> watch(String dir) {
        return Flux.defer(() -> {
            guard.run();
            return RemoteStreams.watch(t, path + "/watch" + q(dir));
        });
    }
}
