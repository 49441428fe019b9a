package dev.sandbox.implementation.agentsession;

import dev.sandbox.ExecEvent;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.PtySession;
import dev.sandbox.implementation.process.RawEvent;
import java.nio.ByteBuffer;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A PTY of an agent-backed session, held by the session's agent ({@code PTY|BACKGROUND}): its ring is the replay buffer, so
 * a client of another provider instance attaching later gets the recent screen's bytes. Readers through this
 * provider count as attached while subscribed.
 */
final class AgentPty implements PtySession {
    /** How often {@link #output()} starts again from the ring's oldest byte when the ring moved under it. */
    private static final int REPLAY_TRIES = 3;

    private final AgentHeldProcess held;
    private final Runnable guard;

    AgentPty(AgentHeldProcess held, Runnable guard) {
        this.held = held;
        this.guard = guard;
    }

    @Override
    public String id() {
        return held.id;
    }

    @Override
    public OptionalLong pid() {
        return OptionalLong.of(held.pid);
    }

    @Override
    public Flux<ByteBuffer> output() {
        return Flux.defer(() -> {
            guard.run();
            return replay(0, REPLAY_TRIES);
        });
    }

    /** From an offset; when the ring already dropped it, from the oldest byte it holds. */
    private Flux<ByteBuffer> replay(long from, int tries) {
        return bytes(from)
                .onErrorResume(
                        e -> e instanceof OffsetUnavailableException o && o.requested() == from && tries > 1,
                        e -> replay(((OffsetUnavailableException) e).firstAvailable(), tries - 1));
    }

    @Override
    public Flux<ByteBuffer> output(long offset) {
        return Flux.defer(() -> {
            if (offset == -1) {
                return output(); // -1: what the terminal keeps for replay, as on every provider (the server asks so)
            }
            guard.run();
            if (offset < 0) {
                throw new InvalidArgumentException("offset", "offset must not be negative, got " + offset);
            }
            return bytes(offset);
        });
    }

    private Flux<ByteBuffer> bytes(long offset) {
        return held.raw(offset, 0, true, new AtomicReference<>())
                .<ByteBuffer>handle((e, sink) -> {
                    if (e instanceof RawEvent.Chunk chunk) {
                        sink.next(ByteBuffer.wrap(chunk.bytes()).asReadOnlyBuffer());
                    }
                })
                .doOnSubscribe(s -> held.attached.incrementAndGet())
                .doFinally(signal -> held.attached.decrementAndGet());
    }

    @Override
    public Mono<Void> write(ByteBuffer input) {
        return Mono.defer(() -> {
            guard.run();
            return held.write(input);
        });
    }

    @Override
    public Mono<Void> resize(int cols, int rows) {
        return Mono.defer(() -> {
            guard.run();
            if (cols < 1 || cols > 1000) {
                throw new InvalidArgumentException("cols", "cols must be from 1 to 1000, got " + cols);
            }
            if (rows < 1 || rows > 1000) {
                throw new InvalidArgumentException("rows", "rows must be from 1 to 1000, got " + rows);
            }
            if (!held.running()) {
                return Mono.empty();
            }
            return held.agent.untilTerminated(
                    held.agent.connection().flatMap(c -> c.processes().resize(held.id, cols, rows)));
        });
    }

    @Override
    public Mono<Void> signal(int signal) {
        return held.signal(signal, guard);
    }

    @Override
    public Mono<Void> kill() {
        return held.signal(9, guard);
    }

    @Override
    public Mono<ExecEvent.Exit> exit() {
        return held.exit();
    }

    @Override
    public String toString() {
        return "PtySession{" + held.id + ", " + held.argv + "}";
    }
}
