package dev.sandbox.local;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionStatus;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** A handle to a local session. */
final class LocalSession implements SandboxSession {
    private final LocalSandboxProvider provider;
    private final LocalSessionState state;
    private final AtomicBoolean closed = new AtomicBoolean();

    LocalSession(LocalSandboxProvider provider, LocalSessionState state) {
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
        return !closed.get() && !state.destroyed();
    }

    @Override
    public Flux<ExecEvent> exec(ExecOptions options) {
        return Flux.defer(() -> {
            if (!usable()) {
                return Flux.error(new SessionClosedException(state.id));
            }
            state.touch();
            return state.runner.exec(options, state::spawn);
        });
    }

    @Override
    public Mono<ExecResult> run(ExecOptions options) {
        return Mono.defer(() -> {
            if (!usable()) {
                return Mono.error(new SessionClosedException(state.id));
            }
            state.touch();
            return state.runner.run(options, state::spawn);
        });
    }

    @Override
    public Mono<SessionStatus> ping() {
        return Mono.fromSupplier(() -> {
            if (!usable()) {
                throw new SessionClosedException(state.id);
            }
            return state.status(false);
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
            // marked at subscription, so an attach right after a destroy was started (not finished) finds nothing
            state.ending(true);
            return Mono.<Void>fromRunnable(() -> {
                        provider.destroy(state);
                        closed.set(true);
                    })
                    .subscribeOn(Schedulers.boundedElastic())
                    .doOnError(e -> state.ending(false));
        });
    }

    @Override
    public String toString() {
        return "LocalSession{" + state.id + ", workdir=" + state.workdir + "}";
    }
}
