package dev.sandbox.implementation.agentsession;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.ProcessNotFoundException;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxNetwork;
import dev.sandbox.SandboxPorts;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionStatus;
import dev.sandbox.SessionTerminatedException;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.implementation.Version;
import dev.sandbox.implementation.agent.AgentProcInfo;
import dev.sandbox.implementation.process.SpawnedProcess;
import dev.sandbox.implementation.session.LabelUpdate;
import dev.sandbox.implementation.session.RunnerSession;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * A handle to a session whose sandbox runs the agent: commands, background processes, PTYs, files and the status
 * all go through the session's agent ({@link SessionAgent}). A provider supplies what is its own: its name and
 * process launcher, whether it is closed, how the session's timers are recorded and how the session is destroyed.
 */
public abstract class AgentSession extends RunnerSession {
    /** Read once, when the first handle is made (off the event loops): it reads a resource from the jar. */
    private static final String VERSION = Version.get();

    private final AgentSessionState state;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final SandboxFiles files;
    private final SandboxPorts ports;

    /**
     * A handle to the session.
     *
     * @param state the session's state, shared by its handles
     */
    // the files' guard is called on their operations only, after the subclass is made
    @SuppressWarnings("this-escape")
    protected AgentSession(AgentSessionState state) {
        super(state.id, state.runner);
        this.state = state;
        this.files = new AgentFiles(state.agent, this::check);
        this.ports = state.ports.view(this, this::check);
    }

    /**
     * The provider's name, in the session's status.
     *
     * @return the name
     */
    protected abstract String providerName();

    /**
     * How the provider starts processes, in the session's status.
     *
     * @return the launcher's name
     */
    protected abstract String processLauncher();

    /**
     * Whether the provider that gave out this handle is closed: its handles fail then.
     *
     * @return true once closed
     */
    protected abstract boolean providerClosed();

    /**
     * Records the session's new lifetime or idle timeout (validated, the session open): where the provider keeps it,
     * and with the agent.
     *
     * @param lifetime the new lifetime from now, or {@code null} to keep it
     * @param idleTimeout the new idle timeout, or {@code null} to keep it
     * @return completes once recorded
     */
    protected abstract Mono<Void> setTimers(Duration lifetime, Duration idleTimeout);

    /**
     * Destroys the session (not yet ended): removes its sandbox and ends its state.
     *
     * @return completes once destroyed
     */
    protected abstract Mono<Void> destroySession();

    @Override
    public java.util.Optional<String> name() {
        return java.util.Optional.ofNullable(state.name());
    }

    @Override
    public Map<String, String> labels() {
        return state.labels();
    }

    @Override
    public Mono<Void> addLabels(Map<String, String> labels) {
        return Mono.defer(() -> {
            Map<String, String> added = LabelUpdate.checked(labels, reservedLabelPrefixes());
            check();
            return recordLabels(LabelUpdate.merged(state.labels(), added))
                    .then(Mono.fromRunnable(() -> state.addLabels(added)));
        });
    }

    /**
     * The key prefixes this provider keeps for itself, refused by {@link #addLabels}.
     *
     * @return the prefixes
     */
    protected String[] reservedLabelPrefixes() {
        return new String[0];
    }

    /**
     * Records the session's labels after an addition with the provider, where other clients find them; the default
     * cannot, for a provider that has no place for them.
     *
     * @param labels every label the session will have
     * @return completes when recorded
     */
    protected Mono<Void> recordLabels(Map<String, String> labels) {
        return Mono.error(new UnsupportedFeatureException(providerName(), "adding labels"));
    }

    /**
     * Fails when this handle or its session has ended, or when the session is paused without auto-resume; otherwise
     * records activity. A paused session with auto-resume is resumed by the agent connection's gate, on the call's
     * first use of it.
     */
    @Override
    protected void check() {
        checkOpen();
        state.pauses.checkCallable();
        state.touch();
    }

    @Override
    public Mono<Void> pause() {
        return Mono.defer(() -> {
            checkOpen();
            if (!state.canPause()) {
                return Mono.error(new UnsupportedFeatureException(providerName(), "pausing a session"));
            }
            return state.pauses.pause();
        });
    }

    @Override
    public Mono<Void> resume() {
        return Mono.defer(() -> {
            checkOpen();
            if (!state.canPause()) {
                return Mono.error(new UnsupportedFeatureException(providerName(), "resuming a session"));
            }
            return state.pauses.resume();
        });
    }

    /** Fails when this handle or its session has ended, without recording activity. */
    protected void checkOpen() {
        // the session's end first: a closed handle whose sandbox was then destroyed says it was destroyed
        SessionEndReason ended = state.endReason();
        String terminated = state.terminationCause();
        if (ended == SessionEndReason.TERMINATED && terminated != null) {
            throw new SessionTerminatedException(state.id, terminated);
        }
        if (ended != null) {
            throw new SessionClosedException(state.id, ended);
        }
        if (closed.get()) {
            throw new SessionClosedException(state.id, SessionEndReason.HANDLE_CLOSED);
        }
        if (providerClosed()) {
            throw new SessionClosedException(state.id, SessionEndReason.PROVIDER_CLOSED);
        }
    }

    @Override
    protected SpawnedProcess spawn(ExecOptions options) {
        return state.agent.spawn(options, state.commandEnv(), 0, 0);
    }

    @Override
    protected SpawnedProcess spawnPty(ExecOptions options, int cols, int rows) {
        return state.agent.spawn(options, state.commandEnv(), cols, rows);
    }

    // ---------------------------------------------------------------- background processes and PTYs in the agent

    @Override
    public Mono<BackgroundProcess> start(ExecOptions options, BackgroundOptions background) {
        return Mono.defer(() -> {
            check();
            options.validate();
            background.validate();
            boolean throttle = background.overflow() == BackgroundOptions.Overflow.THROTTLE;
            return state.agent
                    .spawnBackground(options, state.commandEnv(), 0, 0, background.ringBytes(), throttle)
                    .flatMap(started -> agentStartedAt(started.id()).map(at -> Map.entry(started, at)))
                    .map(startedAt -> {
                        var started = startedAt.getKey();
                        AgentHeldProcess held = new AgentHeldProcess(
                                state.agent,
                                state.id,
                                started.id(),
                                started.pid(),
                                options.argv(),
                                startedAt.getValue(),
                                false,
                                options,
                                options.stdin().isPresent());
                        state.processes.addIfAbsent(held);
                        held.watch(options.timeout().orElse(null));
                        options.stdin().ifPresent(in -> feed(held, in));
                        return (BackgroundProcess) new AgentBackgroundProcess(held, this::check);
                    });
        });
    }

    /**
     * When the agent started a process, by its clock: every provider instance then reports the same start time and
     * the same durations. Now, when the agent's list does not say (the process was already dropped).
     */
    private Mono<Instant> agentStartedAt(String processId) {
        return agentProcs()
                .filter(p -> p.id().equals(processId))
                .next()
                .map(p -> Instant.ofEpochMilli(p.startedMs()))
                .switchIfEmpty(Mono.fromSupplier(Instant::now));
    }

    /** Feeds a stdin publisher given at start to the agent-held process, then closes its stdin. */
    private static void feed(AgentHeldProcess held, Publisher<ByteBuffer> in) {
        Flux.from(in)
                .concatMap(held::write, 1)
                .then(Mono.defer(held::closeInput))
                .subscribe(x -> {}, e -> held.closeInput().subscribe(y -> {}, f -> {}));
    }

    @Override
    public Flux<ProcessInfo> processes() {
        // the agent's list: every background process of the session, whoever started it (PTYs are not listed)
        return listed(0);
    }

    @Override
    public Flux<ProcessInfo> ptys() {
        // the agent's list of terminals of the session, whoever started them
        return listed(1);
    }

    /** The agent's processes of a kind (0 background, 1 terminal), with this provider's exits where it has them. */
    private Flux<ProcessInfo> listed(int kind) {
        return Flux.defer(() -> {
            check();
            return agentProcs().filter(p -> p.kind() == kind).map(p -> {
                AgentHeldProcess mine = state.processes.get(p.id());
                return mine != null && mine.pid == p.pid() && !mine.running()
                        ? mine.info() // its exit as this provider reported it (a timeout is 124)
                        : AgentHeldProcess.info(p);
            });
        });
    }

    /** Every process the agent holds for the session, whoever started it. */
    private Flux<AgentProcInfo> agentProcs() {
        return state.agent.untilTerminated(
                state.agent.connection().flatMapMany(c -> c.processes().procs()), x -> false);
    }

    @Override
    public Mono<BackgroundProcess> process(String processId) {
        return find(processId, false).map(held -> (BackgroundProcess) new AgentBackgroundProcess(held, this::check));
    }

    @Override
    public Mono<PtySession> pty(PtyOptions options) {
        return Mono.defer(() -> {
            check();
            ExecOptions exec = options.toExecOptions();
            // the agent keeps at least 64 KiB per ring; a smaller replay size still replays what was asked
            long ring = Math.max(BackgroundOptions.MIN_RING_BYTES, options.replayBytes());
            return state.agent
                    .spawnBackground(exec, state.commandEnv(), options.cols(), options.rows(), ring, false)
                    .flatMap(started -> agentStartedAt(started.id()).map(at -> Map.entry(started, at)))
                    .map(startedAt -> {
                        var started = startedAt.getKey();
                        AgentHeldProcess held = new AgentHeldProcess(
                                state.agent,
                                state.id,
                                started.id(),
                                started.pid(),
                                exec.argv(),
                                startedAt.getValue(),
                                true,
                                exec,
                                false);
                        state.processes.addIfAbsent(held);
                        held.watch(null);
                        return (PtySession) new AgentPty(held, this::check);
                    });
        });
    }

    @Override
    public Mono<PtySession> attachPty(String ptyId) {
        return find(ptyId, true).map(held -> (PtySession) new AgentPty(held, this::check));
    }

    /**
     * A process by id: the one this provider knows, or one the agent lists (started by another provider instance),
     * of the kind asked for. One that already ended is returned once its exit is known, so {@code exitNow()} says so.
     */
    private Mono<AgentHeldProcess> find(String id, boolean terminal) {
        return Mono.defer(() -> {
            check();
            if (id == null || id.isEmpty()) {
                throw new InvalidArgumentException("processId", "processId must not be empty, got '" + id + "'");
            }
            AgentHeldProcess mine = state.processes.get(id);
            if (mine != null && mine.terminal == terminal) {
                return Mono.just(mine);
            }
            return agentProcs()
                    .filter(p -> p.id().equals(id) && (p.kind() == 1) == terminal)
                    .next()
                    .switchIfEmpty(Mono.error(() -> new ProcessNotFoundException(state.id, id)))
                    .flatMap(info -> {
                        AgentHeldProcess found = AgentHeldProcess.found(state.agent, state.id, info);
                        AgentHeldProcess kept = state.processes.addIfAbsent(found);
                        if (kept != found) {
                            return Mono.just(kept);
                        }
                        found.watch(null);
                        return info.running()
                                ? Mono.just(found)
                                : found.exit().onErrorResume(e -> Mono.empty()).thenReturn(found);
                    });
        });
    }

    @Override
    public SandboxFiles files() {
        return files;
    }

    @Override
    public Mono<Void> setLifetime(Duration fromNow) {
        return Mono.defer(() -> {
            check();
            positive("lifetime", fromNow);
            return setTimers(fromNow, null);
        });
    }

    @Override
    public Mono<Void> setIdleTimeout(Duration idleTimeout) {
        return Mono.defer(() -> {
            check();
            positive("idleTimeout", idleTimeout);
            return setTimers(null, idleTimeout);
        });
    }

    @Override
    public Mono<SessionStatus> ping() {
        return Mono.defer(() -> {
            checkOpen();
            if (state.pauses.paused()) {
                // a frozen agent cannot answer, and a ping does not wake the session: what this provider knows
                return Mono.fromSupplier(() -> status(state.processes.running(false), state.processes.running(true)))
                        .subscribeOn(Schedulers.boundedElastic());
            }
            // a round trip to the agent; a sandbox that ended is named by one question to its control plane
            return state.agent
                    .untilTerminated(state.agent.connection().flatMap(c -> c.ping()))
                    .then(statusWithAgent());
        });
    }

    /**
     * The status, with what the agent lists: running background processes and PTYs of the session, whoever started
     * them (one more round trip, on the ping that makes one anyway). Readers attached to a PTY are counted where
     * they are: only this provider's are known here. Without the listing, what this provider knows.
     */
    private Mono<SessionStatus> statusWithAgent() {
        return agentProcs()
                .filter(AgentProcInfo::running)
                .collectList()
                // off the connection's I/O thread: the status reads the SDK's version (a resource) on first use
                .publishOn(Schedulers.boundedElastic())
                .map(running ->
                        status((int) running.stream().filter(p -> p.kind() == 0).count(), (int)
                                running.stream().filter(p -> p.kind() == 1).count()))
                .onErrorResume(
                        e -> !(e instanceof SessionTerminatedException),
                        e -> Mono.fromSupplier(
                                        () -> status(state.processes.running(false), state.processes.running(true)))
                                .subscribeOn(Schedulers.boundedElastic()));
    }

    private SessionStatus status(int backgroundRunning, int ptysRunning) {
        return new SessionStatus(
                state.id,
                state.pauses.paused() ? "paused" : "running",
                VERSION,
                Math.max(0, Duration.between(state.createdAt, Instant.now()).toMillis()),
                state.timers.lastActivity(),
                state.runner.runningCount() + backgroundRunning,
                ptysRunning,
                state.processes.attached(),
                providerName(),
                processLauncher(),
                state.timers.expiresAt(),
                state.timers.idleTimeout(),
                null);
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
    public SandboxNetwork network() {
        return state.network();
    }

    @Override
    public Mono<Void> destroy() {
        return Mono.defer(() -> {
            if (state.destroyed()) {
                closed.set(true);
                return Mono.empty(); // idempotent: the session already ended
            }
            // a closed handle still destroys: the sandbox is the session's, not the handle's
            return destroySession().then(state.ports.closeAll()).doOnSuccess(x -> closed.set(true));
        });
    }

    @Override
    public abstract String toString();
}
