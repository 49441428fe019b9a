package dev.sandbox.implementation.agentsession;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxStateException;
import dev.sandbox.implementation.exec.LineFraming;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A background process of an agent-backed session, held by the session's agent: its output lives in the agent's rings (so
 * another provider instance attached to the session reads the same output, and the output outlives this JVM), every
 * read is an {@code ATTACH} from the reader's offsets, and control goes through {@code INPUT}. Every operation runs
 * the check of the session handle this came from.
 */
final class AgentBackgroundProcess implements BackgroundProcess {
    private final AgentHeldProcess held;
    private final Runnable guard;

    AgentBackgroundProcess(AgentHeldProcess held, Runnable guard) {
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
    public List<String> argv() {
        return held.argv;
    }

    @Override
    public Instant startedAt() {
        return held.startedAt;
    }

    @Override
    public Mono<ExecEvent.Exit> exit() {
        return held.exit();
    }

    @Override
    public Optional<ExecEvent.Exit> exitNow() {
        return Optional.ofNullable(held.exitNow());
    }

    @Override
    public Flux<ExecEvent> output(long stdoutOffset, long stderrOffset) {
        return held.lines(stdoutOffset, stderrOffset, true, guard);
    }

    @Override
    public Flux<ExecEvent> snapshot(long stdoutOffset, long stderrOffset) {
        return held.lines(stdoutOffset, stderrOffset, false, guard);
    }

    @Override
    public Mono<ExecResult> collect() {
        return Mono.defer(() -> {
            guard.run();
            if (!held.collected.compareAndSet(false, true)) {
                return Mono.error(new SandboxStateException(
                        "the output of process " + held.id + " was already collected; read it with output(offset)"));
            }
            AtomicReference<ExecEvent.Exit> exitOut = new AtomicReference<>();
            return LineFraming.collect(held.raw(0, 0, true, exitOut), held.options, e -> exitOut.get());
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
    public Mono<Void> writeStdin(ByteBuffer bytes) {
        return Mono.defer(() -> {
            guard.run();
            if (held.stdinFromPublisher) {
                return Mono.error(new SandboxStateException(
                        "process " + held.id + " reads stdin from the publisher it was started with"));
            }
            return held.write(bytes);
        });
    }

    @Override
    public Mono<Void> closeStdin() {
        return Mono.defer(() -> {
            guard.run();
            return held.stdinFromPublisher ? Mono.empty() : held.closeInput();
        });
    }

    @Override
    public String toString() {
        return "BackgroundProcess{" + held.id + ", " + held.argv + "}";
    }
}
