package dev.sandbox.implementation.pool;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.ProcessInfo;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxNetwork;
import dev.sandbox.SandboxPorts;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionStatus;
import dev.sandbox.Wrapped;
import dev.sandbox.pool.Claim;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A session handed out by a pool: the pool's session with the claim's environment and working directory applied to
 * every command, background process and terminal started through it, and whose {@link #close()} and {@link
 * #destroy()} give it back to the pool, which destroys it (a sandbox that ran the caller's code is not handed out
 * again). Internal: callers see a {@link SandboxSession}.
 */
public final class PooledSession implements SandboxSession, Wrapped<SandboxSession> {
    private final SandboxSession inner;
    private final Claim claim;
    private final Function<SandboxSession, Mono<Void>> release;
    private final AtomicBoolean released = new AtomicBoolean();
    private volatile boolean delivered;

    /**
     * Wraps a claimed session.
     *
     * @param inner the pool's session
     * @param claim what the caller asked for
     * @param release gives the session back to the pool (once) and completes when it is destroyed
     */
    public PooledSession(SandboxSession inner, Claim claim, Function<SandboxSession, Mono<Void>> release) {
        this.inner = inner;
        this.claim = claim;
        this.release = release;
    }

    /** The caller received this session (its acquire emitted it). */
    public void delivered() {
        delivered = true;
    }

    /**
     * Whether the caller received this session.
     *
     * @return true once its acquire emitted it
     */
    public boolean isDelivered() {
        return delivered;
    }

    private ExecOptions apply(ExecOptions options) {
        ExecOptions out = options;
        if (!claim.env().isEmpty()) {
            Map<String, String> env = new LinkedHashMap<>(claim.env());
            env.putAll(options.env()); // the command's own win
            out = out.withEnv(env);
        }
        if (options.cwd().isEmpty() && claim.workdir().isPresent()) {
            out = out.withCwd(claim.workdir().get());
        }
        return out;
    }

    private PtyOptions apply(PtyOptions options) {
        PtyOptions out = options;
        for (Map.Entry<String, String> e : claim.env().entrySet()) {
            if (!options.env().containsKey(e.getKey())) {
                out = out.withEnv(e.getKey(), e.getValue());
            }
        }
        if (options.cwd().isEmpty() && claim.workdir().isPresent()) {
            out = out.withCwd(claim.workdir().get());
        }
        return out;
    }

    @Override
    public String id() {
        return inner.id();
    }

    @Override
    public java.util.Optional<String> name() {
        return inner.name();
    }

    @Override
    public Map<String, String> labels() {
        return inner.labels();
    }

    @Override
    public Flux<ExecEvent> exec(ExecOptions options) {
        return Flux.defer(() -> inner.exec(apply(options)));
    }

    @Override
    public Mono<ExecResult> run(ExecOptions options) {
        return Mono.defer(() -> inner.run(apply(options)));
    }

    @Override
    public Mono<BackgroundProcess> start(ExecOptions options, BackgroundOptions background) {
        return Mono.defer(() -> inner.start(apply(options), background));
    }

    @Override
    public Flux<ProcessInfo> processes() {
        return inner.processes();
    }

    @Override
    public Mono<BackgroundProcess> process(String processId) {
        return inner.process(processId);
    }

    @Override
    public Mono<PtySession> pty(PtyOptions options) {
        return Mono.defer(() -> inner.pty(apply(options)));
    }

    @Override
    public Flux<ProcessInfo> ptys() {
        return inner.ptys();
    }

    @Override
    public Mono<PtySession> attachPty(String ptyId) {
        return inner.attachPty(ptyId);
    }

    @Override
    public SandboxFiles files() {
        return inner.files();
    }

    @Override
    public SandboxPorts ports() {
        return inner.ports();
    }

    @Override
    public SandboxNetwork network() {
        return inner.network();
    }

    @Override
    public Flux<dev.sandbox.SessionStats> stats(Duration interval) {
        return inner.stats(interval);
    }

    @Override
    public Mono<Void> setLifetime(Duration fromNow) {
        return inner.setLifetime(fromNow);
    }

    @Override
    public Mono<Void> addLabels(Map<String, String> labels) {
        return inner.addLabels(labels);
    }

    @Override
    public Mono<Void> pause() {
        return inner.pause();
    }

    @Override
    public Mono<Void> resume() {
        return inner.resume();
    }

    @Override
    public Mono<Void> setIdleTimeout(Duration idleTimeout) {
        return inner.setIdleTimeout(idleTimeout);
    }

    @Override
    public Mono<SessionStatus> ping() {
        return inner.ping();
    }

    /** Gives the session back to the pool, which destroys it; the same as {@link #destroy()}. */
    @Override
    public Mono<Void> close() {
        return destroy();
    }

    /** Gives the session back to the pool, which destroys it and makes a fresh one in its place. Idempotent. */
    @Override
    public Mono<Void> destroy() {
        return Mono.defer(() -> released.compareAndSet(false, true) ? release.apply(inner) : Mono.empty());
    }

    @Override
    public SandboxSession unwrap() {
        return inner;
    }

    @Override
    public String toString() {
        return "PooledSession{" + inner + ", " + claim + "}";
    }
}
