package dev.sandbox.implementation.exec;

import dev.sandbox.ExecEvent;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.PtySession;
import dev.sandbox.implementation.process.SpawnedProcess;
import java.nio.ByteBuffer;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** A PTY: a background process whose one output stream is the terminal, plus resize and attach counting. */
final class PtyProcess implements PtySession {
    private final RingBackgroundProcess process;
    private final SpawnedProcess spawned;
    private final AtomicInteger attached = new AtomicInteger();

    PtyProcess(RingBackgroundProcess process, SpawnedProcess spawned) {
        this.process = process;
        this.spawned = spawned;
    }

    boolean running() {
        return process.running();
    }

    int attached() {
        return attached.get();
    }

    void terminate(RuntimeException why) {
        process.terminate(why);
    }

    dev.sandbox.ProcessInfo info() {
        return process.info();
    }

    @Override
    public String id() {
        return process.id();
    }

    @Override
    public OptionalLong pid() {
        return process.pid();
    }

    @Override
    public Flux<ByteBuffer> output() {
        return output(-1);
    }

    @Override
    public Flux<ByteBuffer> output(long offset) {
        return Flux.defer(() -> {
            process.guard().check();
            if (offset < -1) {
                throw new InvalidArgumentException("offset", "offset must not be negative, got " + offset);
            }
            return process.stdoutBytes(offset)
                    .doOnSubscribe(s -> attached.incrementAndGet())
                    .doFinally(signal -> attached.decrementAndGet());
        });
    }

    @Override
    public Mono<Void> write(ByteBuffer input) {
        return process.writeStdin(input);
    }

    @Override
    public Mono<Void> resize(int cols, int rows) {
        return Mono.fromRunnable(() -> {
                    process.guard().check();
                    if (cols < 1 || cols > 1000) {
                        throw new InvalidArgumentException("cols", "cols must be from 1 to 1000, got " + cols);
                    }
                    if (rows < 1 || rows > 1000) {
                        throw new InvalidArgumentException("rows", "rows must be from 1 to 1000, got " + rows);
                    }
                    if (process.running()) {
                        spawned.resize(cols, rows);
                    }
                })
                // a provider may need a round trip to resize (Docker does)
                .subscribeOn(Schedulers.boundedElastic())
                .then();
    }

    @Override
    public Mono<Void> signal(int signal) {
        return process.signal(signal);
    }

    @Override
    public Mono<Void> kill() {
        return process.kill();
    }

    @Override
    public Mono<ExecEvent.Exit> exit() {
        return process.exit();
    }
}
