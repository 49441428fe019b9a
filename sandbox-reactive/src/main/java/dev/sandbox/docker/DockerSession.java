package dev.sandbox.docker;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionStatus;
import dev.sandbox.implementation.Version;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A handle to a Docker session. */
final class DockerSession implements SandboxSession {
    private final DockerSandboxProvider provider;
    private final DockerSessionState state;
    private final AtomicBoolean closed = new AtomicBoolean();

    DockerSession(DockerSandboxProvider provider, DockerSessionState state) {
        this.provider = provider;
        this.state = state;
    }

    @Override
    public String id() {
        return state.id;
    }

    @Override
    public Map<String, String> labels() {
        return state.labels;
    }

    private boolean usable() {
        return !closed.get() && !state.destroyed() && !provider.isClosed();
    }

    @Override
    public Flux<ExecEvent> exec(ExecOptions options) {
        return Flux.defer(() -> {
            if (!usable()) {
                return Flux.error(new SessionClosedException(state.id));
            }
            state.touch();
            return state.runner.exec(options, o -> state.executor.spawn(o, state.secrets));
        });
    }

    @Override
    public Mono<ExecResult> run(ExecOptions options) {
        return Mono.defer(() -> {
            if (!usable()) {
                return Mono.error(new SessionClosedException(state.id));
            }
            state.touch();
            return state.runner.run(options, o -> state.executor.spawn(o, state.secrets));
        });
    }

    @Override
    public Mono<SessionStatus> ping() {
        return Mono.defer(() -> {
            if (!usable()) {
                return Mono.error(new SessionClosedException(state.id));
            }
            return state.executor
                    .checkRunning()
                    .then(Mono.fromSupplier(() -> new SessionStatus(
                            state.id,
                            "running",
                            Version.get(),
                            Math.max(
                                    0,
                                    Duration.between(state.createdAt, Instant.now())
                                            .toMillis()),
                            state.lastActivity(),
                            state.runner.runningCount(),
                            0,
                            0,
                            DockerSandboxProvider.NAME,
                            DockerSandboxProvider.PROCESS_LAUNCHER)));
        });
    }

    @Override
    public Mono<Void> close() {
        return Mono.fromRunnable(() -> closed.set(true));
    }

    @Override
    public Mono<Void> destroy() {
        return Mono.defer(() -> {
            if (closed.get()) {
                return Mono.empty(); // idempotent: this handle already ended
            }
            return provider.destroy(state).doOnSuccess(x -> closed.set(true));
        });
    }

    @Override
    public String toString() {
        return "DockerSession{" + state.id + ", container=" + state.containerId + "}";
    }
}
