package dev.sandbox.micrometer;

import static dev.sandbox.micrometer.SandboxObservationNames.*;

import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.SandboxFiles;
import dev.sandbox.TransferProgress;
import dev.sandbox.WriteOptions;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The files of an observed session: reads, writes, transfers and listings are observed, the rest delegated. */
final class ObservedFiles implements SandboxFiles {
    private final SandboxFiles delegate;
    private final String sessionId;
    private final Instrumentation instrumentation;

    ObservedFiles(SandboxFiles delegate, String sessionId, Instrumentation instrumentation) {
        this.delegate = delegate;
        this.sessionId = sessionId;
        this.instrumentation = instrumentation;
    }

    @Override
    public Flux<ByteBuffer> read(String path) {
        return instrumentation.flux(
                FILE_READ,
                sessionId,
                () -> delegate.read(path),
                (call, b) -> instrumentation.fileBytes("read", b.remaining()));
    }

    @Override
    public Flux<ByteBuffer> read(String path, long offset, long length) {
        return instrumentation.flux(
                FILE_READ,
                sessionId,
                () -> delegate.read(path, offset, length),
                (call, b) -> instrumentation.fileBytes("read", b.remaining()));
    }

    @Override
    public Mono<byte[]> readAllBytes(String path, long offset, long length) {
        return instrumentation.mono(
                FILE_READ,
                sessionId,
                () -> delegate.readAllBytes(path, offset, length),
                (call, b) -> instrumentation.fileBytes("read", b.length));
    }

    @Override
    public Mono<byte[]> readAllBytes(String path, long maxBytes) {
        return instrumentation.mono(
                FILE_READ,
                sessionId,
                () -> delegate.readAllBytes(path, maxBytes),
                (call, b) -> instrumentation.fileBytes("read", b.length));
    }

    @Override
    public Mono<FileInfo> write(String path, Publisher<ByteBuffer> content, WriteOptions options) {
        return instrumentation.mono(
                FILE_WRITE,
                sessionId,
                () -> delegate.write(
                        path,
                        Flux.from(content).doOnNext(b -> instrumentation.fileBytes("write", b.remaining())),
                        options),
                (call, info) -> {});
    }

    @Override
    public Mono<FileInfo> write(String path, byte[] content, WriteOptions options) {
        long size = content.length;
        return instrumentation.mono(
                FILE_WRITE,
                sessionId,
                () -> delegate.write(path, content, options),
                (call, info) -> instrumentation.fileBytes("write", size));
    }

    @Override
    public Mono<FileInfo> write(String path, Publisher<ByteBuffer> content) {
        return write(path, content, WriteOptions.defaults());
    }

    @Override
    public Mono<FileInfo> write(String path, byte[] content) {
        return write(path, content, WriteOptions.defaults());
    }

    @Override
    public Mono<List<FileInfo>> writeAll(Map<String, byte[]> files) {
        long size = files.values().stream().mapToLong(b -> b.length).sum();
        return instrumentation.mono(
                FILE_WRITE,
                sessionId,
                () -> delegate.writeAll(files),
                (call, infos) -> instrumentation.fileBytes("write", size));
    }

    @Override
    public Mono<FileInfo> upload(Path local, String path) {
        return instrumentation.mono(FILE_UPLOAD, sessionId, () -> delegate.upload(local, path), (call, info) -> {
            if (info.type() == FileInfo.Type.FILE) {
                instrumentation.fileBytes("upload", info.size());
            }
        });
    }

    @Override
    public Mono<FileInfo> upload(Path local, String path, Consumer<TransferProgress> progress) {
        return Mono.defer(() -> {
            AtomicLong bytes = new AtomicLong();
            Consumer<TransferProgress> counting = p -> {
                bytes.set(p.bytes());
                progress.accept(p);
            };
            return instrumentation.mono(
                    FILE_UPLOAD,
                    sessionId,
                    () -> delegate.upload(local, path, counting),
                    (call, info) -> instrumentation.fileBytes("upload", bytes.get()));
        });
    }

    @Override
    public Mono<Long> download(String path, Path local) {
        return instrumentation.mono(
                FILE_DOWNLOAD,
                sessionId,
                () -> delegate.download(path, local),
                (call, bytes) -> instrumentation.fileBytes("download", bytes));
    }

    @Override
    public Mono<Long> download(String path, Path local, Consumer<TransferProgress> progress) {
        return instrumentation.mono(
                FILE_DOWNLOAD,
                sessionId,
                () -> delegate.download(path, local, progress),
                (call, bytes) -> instrumentation.fileBytes("download", bytes));
    }

    @Override
    public Flux<FileInfo> list(String path) {
        return list(path, 1);
    }

    @Override
    public Flux<FileInfo> list(String path, int depth) {
        return instrumentation.flux(FILE_LIST, sessionId, () -> delegate.list(path, depth), (call, info) -> {});
    }

    @Override
    public Mono<FileInfo> stat(String path) {
        return delegate.stat(path);
    }

    @Override
    public Mono<Boolean> exists(String path) {
        return delegate.exists(path);
    }

    @Override
    public Mono<Boolean> mkdir(String path) {
        return delegate.mkdir(path);
    }

    @Override
    public Mono<Void> remove(String path) {
        return delegate.remove(path);
    }

    @Override
    public Mono<Void> remove(String path, boolean recursive) {
        return delegate.remove(path, recursive);
    }

    @Override
    public Mono<Void> move(String from, String to) {
        return delegate.move(from, to);
    }

    @Override
    public Flux<FileEvent> watch(String path) {
        return delegate.watch(path);
    }

    @Override
    public Flux<FileEvent> watch(String path, boolean recursive) {
        return delegate.watch(path, recursive);
    }
}
