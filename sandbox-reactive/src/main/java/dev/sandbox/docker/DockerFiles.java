package dev.sandbox.docker;

import dev.sandbox.FileEvent;
import dev.sandbox.FileInfo;
import dev.sandbox.SandboxFiles;
import dev.sandbox.UnsupportedFeatureException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The files of a Docker session, inside its container. */
final class DockerFiles implements SandboxFiles {
    private final DockerSessionState state;
    private final Runnable guard;

    DockerFiles(DockerSessionState state, Runnable guard) {
        this.state = state;
        this.guard = guard;
    }

    private <T> Mono<T> unsupported() {
        return Mono.fromCallable(() -> {
            guard.run();
            throw new UnsupportedFeatureException("docker", "files in session " + state.id);
        });
    }

    @Override
    public Flux<ByteBuffer> read(String path) {
        return this.<ByteBuffer>unsupported().flux();
    }

    @Override
    public Mono<byte[]> readAllBytes(String path, long maxBytes) {
        return unsupported();
    }

    @Override
    public Mono<FileInfo> write(String path, Publisher<ByteBuffer> content) {
        return unsupported();
    }

    @Override
    public Mono<FileInfo> write(String path, byte[] content) {
        return unsupported();
    }

    @Override
    public Mono<FileInfo> upload(Path local, String path) {
        return unsupported();
    }

    @Override
    public Mono<Long> download(String path, Path local) {
        return unsupported();
    }

    @Override
    public Flux<FileInfo> list(String path) {
        return this.<FileInfo>unsupported().flux();
    }

    @Override
    public Mono<FileInfo> stat(String path) {
        return unsupported();
    }

    @Override
    public Mono<Void> mkdir(String path) {
        return unsupported();
    }

    @Override
    public Mono<Void> remove(String path) {
        return unsupported();
    }

    @Override
    public Mono<Void> remove(String path, boolean recursive) {
        return unsupported();
    }

    @Override
    public Mono<Void> move(String from, String to) {
        return unsupported();
    }

    @Override
    public Flux<FileEvent> watch(String path) {
        return this.<FileEvent>unsupported().flux();
    }
}
