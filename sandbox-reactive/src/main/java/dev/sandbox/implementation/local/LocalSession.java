package dev.sandbox.implementation.local;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxPorts;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionStats;
import dev.sandbox.SessionStatus;
import dev.sandbox.implementation.process.SpawnedProcess;
import dev.sandbox.implementation.session.LabelUpdate;
import dev.sandbox.implementation.session.RunnerSession;
import dev.sandbox.implementation.stats.StatsStream;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** A handle to a local session. Internal: not part of the public API. */
public final class LocalSession extends RunnerSession {
    private final LocalSessionState state;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final LocalFiles files;
    private final SandboxPorts ports;

    /**
     * A new handle.
     *
     * @param state the session
     */
    public LocalSession(LocalSessionState state) {
        super(state.id, state.runner);
        this.state = state;
        this.files = state.files(this::check);
        this.ports = state.ports.view(this, this::check);
    }

    @Override
    public Optional<String> name() {
        return Optional.ofNullable(state.name());
    }

    @Override
    public Map<String, String> labels() {
        return state.labels();
    }

    @Override
    public Mono<Void> addLabels(Map<String, String> labels) {
        return Mono.fromRunnable(() -> {
            Map<String, String> added = LabelUpdate.checked(labels);
            check();
            state.addLabels(added);
        });
    }

    /**
     * Fails when this handle or its session has ended, or when it is paused without auto-resume; otherwise resumes a
     * paused session and records activity.
     */
    @Override
    protected void check() {
        checkOpen();
        state.wake();
        state.touch();
    }

    @Override
    protected Mono<Void> beforeCall() {
        return state.beforeCall();
    }

    @Override
    public Mono<Void> pause() {
        return Mono.defer(() -> {
            checkOpen();
            return state.pauses.pause();
        });
    }

    @Override
    public Mono<Void> resume() {
        return Mono.defer(() -> {
            checkOpen();
            return state.pauses.resume();
        });
    }

    private void checkOpen() {
        // the session's end first: a closed handle whose sandbox was then destroyed says it was destroyed
        SessionEndReason ended = state.endReason();
        if (ended != null) {
            throw new SessionClosedException(state.id, ended);
        }
        if (closed.get()) {
            throw new SessionClosedException(state.id, SessionEndReason.HANDLE_CLOSED);
        }
    }

    @Override
    protected SpawnedProcess spawn(ExecOptions options) {
        return state.spawn(options);
    }

    @Override
    protected SpawnedProcess spawnPty(ExecOptions options, int cols, int rows) {
        return state.spawnPty(options, cols, rows);
    }

    @Override
    public SandboxFiles files() {
        return files;
    }

    @Override
    public Mono<Void> setLifetime(Duration fromNow) {
        return Mono.fromRunnable(() -> {
            check();
            positive("lifetime", fromNow);
            state.timers.setLifetime(fromNow);
        });
    }

    @Override
    public Mono<Void> setIdleTimeout(Duration idleTimeout) {
        return Mono.fromRunnable(() -> {
            check();
            positive("idleTimeout", idleTimeout);
            state.timers.setIdleTimeout(idleTimeout);
        });
    }

    @Override
    public Mono<SessionStatus> ping() {
        return Mono.fromSupplier(() -> {
            checkOpen();
            return state.status();
        });
    }

    /** Sums the session's marked processes from {@code /proc}; see {@link LocalStats}. */
    @Override
    public Flux<SessionStats> stats(Duration interval) {
        return Flux.defer(() -> {
            LocalStats reader = new LocalStats(state.id);
            return StatsStream.of(
                    interval,
                    () -> Mono.fromCallable(() -> {
                                checkOpen(); // not activity: sampling leaves the idle clock alone
                                return reader.read();
                            })
                            .subscribeOn(Schedulers.boundedElastic()));
        });
    }

    @Override
    public Mono<Void> close() {
        return Mono.defer(() -> {
            closed.set(true);
            return state.ports.closeOwnedBy(this);
        });
    }

    @Override
    public SandboxPorts ports() {
        return ports;
    }

    @Override
    public Mono<Void> destroy() {
        return Mono.<Void>fromRunnable(() -> {
                    if (state.destroyed()) {
                        closed.set(true);
                        return; // idempotent
                    }
                    // a closed handle still destroys: the sandbox is the session's, not the handle's
                    state.destroy(SessionEndReason.DESTROYED);
                    closed.set(true);
                })
                .subscribeOn(Schedulers.boundedElastic())
                .then(Mono.defer(state.ports::closeAll));
    }

    @Override
    public String toString() {
        return "LocalSession{" + state.id + ", workdir=" + state.workdir + "}";
    }
}
