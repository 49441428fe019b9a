package dev.sandbox.implementation.docker;

import static dev.sandbox.implementation.docker.DockerTimers.backstopDeadline;
import static dev.sandbox.implementation.docker.DockerTimers.backstopIdle;
import static dev.sandbox.implementation.docker.DockerTimers.labelTimers;
import static dev.sandbox.implementation.docker.DockerTimers.seconds;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Mount;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNameInUseException;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import dev.sandbox.implementation.ProviderCloser;
import dev.sandbox.implementation.agentsession.SessionAgent;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The sessions of one Docker provider: creates session containers, attaches to and lists them, destroys them, and
 * keeps the state of every session this provider handed out, shared by all its handles. It owns the provider's
 * connections to the daemon and closes them. Internal: not part of the public API.
 */
public final class DockerSessions {
    private static final Logger LOG = LoggerFactory.getLogger(DockerSessions.class);

    private static final SecureRandom IDS = new SecureRandom();
    /** The longest idle timeout read back from a container's agent; beyond it the label's applies. */
    private static final Duration MAX_IDLE_HINT = Duration.ofDays(365);

    private final DockerControl control;
    private final DockerDataPlane data;
    /** Puts the agent into its volume on this daemon, once. */
    private final AgentInstaller agentInstaller;
    /** The sessions' direct channels to their agents, where this host shares the daemon's files. */
    private final AgentChannels channels;

    private final LabelVolumes labelVolumes;

    private final DockerReaper reaper;
    private final Duration lease;
    private final Map<String, DockerSessionState> sessions = new ConcurrentHashMap<>();
    private final ProviderCloser closer = new ProviderCloser(DockerSandboxProvider.NAME, this::release);
    private final Disposable renewals;
    /** The daemon's events of session containers, watched from the first session on. */
    private final DockerEvents events;
    /** Containers whose {@code die} event is being explained (one inspect); their {@code destroy} waits for it. */
    private final Set<String> explaining = ConcurrentHashMap.newKeySet();

    /**
     * A registry with no sessions yet.
     *
     * @param control the daemon's control plane; closed by {@link #closeAsync()}
     * @param data the daemon's data plane; closed by {@link #closeAsync()}
     * @param reaper the daemon's reaper, or {@code null} to do without (sessions then end only by their holders, the
     *     label deadlines other providers' sweepers see, and the containers' own keep-alives)
     * @param lease how long a session without a lifetime outlives the last renewal of its lease by any provider
     * @param directChannels whether sessions may be reached over a direct channel where the daemon is local
     */
    public DockerSessions(
            DockerControl control, DockerDataPlane data, DockerReaper reaper, Duration lease, boolean directChannels) {
        this(
                control,
                data,
                reaper,
                lease,
                new AgentInstaller(control, data),
                AgentChannels.forDaemon(data.dockerHost(), directChannels));
    }

    /** Sessions whose agent comes from the given installer (tests give one with volumes of their own). */
    DockerSessions(
            DockerControl control,
            DockerDataPlane data,
            DockerReaper reaper,
            Duration lease,
            AgentInstaller installer,
            AgentChannels channels) {
        this.control = control;
        this.data = data;
        this.agentInstaller = installer;
        this.channels = channels;
        this.labelVolumes = new LabelVolumes(control);
        this.events = new DockerEvents(data, this::onEvent);
        this.reaper = reaper;
        this.lease = lease;
        Duration every = lease.dividedBy(3);
        this.renewals = reaper == null
                ? null
                : Flux.interval(every, every)
                        .onBackpressureDrop()
                        .concatMap(
                                tick -> renewHeld().onErrorResume(e -> {
                                    LOG.warn("cannot renew the leases of docker sessions: {}", e.toString());
                                    return Mono.empty();
                                }),
                                1)
                        .subscribe();
    }

    /**
     * Renews the leases of every session this provider holds, now.
     *
     * @return completes when the reaper has them
     */
    Mono<Void> renewHeld() {
        return Mono.defer(() -> {
            List<String> held = new ArrayList<>();
            for (DockerSessionState s : sessions.values()) {
                if (!s.ending()) {
                    held.add(s.id);
                }
            }
            return reaper.renewLeases(held, lease.toSeconds());
        });
    }

    /**
     * The current deadlines of the sessions this provider holds, as the reaper would remove them.
     *
     * @return epoch seconds by session id, 0 for none
     */
    Map<String, Long> heldDeadlines() {
        Map<String, Long> out = new HashMap<>();
        for (DockerSessionState s : sessions.values()) {
            Instant expires = s.timers.expiresAt();
            out.put(s.id, expires == null ? 0L : DockerTimers.reaperDeadline(expires.getEpochSecond() + 1));
        }
        return out;
    }

    /**
     * The daemon's reaper.
     *
     * @return the reaper, or {@code null} when this provider does without
     */
    DockerReaper reaper() {
        return reaper;
    }

    boolean isClosed() {
        return closer.isClosed();
    }

    /**
     * Creates a session container and its state.
     *
     * @param options workdir, environment, secrets and labels
     * @param settings image, limits, network, runtime, lifetime
     * @return the new session
     */
    public Mono<SandboxSession> create(SessionOptions options, DockerSettings settings) {
        return Mono.defer(() -> {
            ensureOpen();
            options.validate();
            settings.validate();
            if (options.network().mode() != NetworkPolicy.Mode.NONE
                    && settings.network() != DockerSettings.Network.NONE) {
                throw new InvalidArgumentException(
                        "network",
                        "an egress allowlist needs the container on network NONE (on " + settings.network()
                                + " its programs would reach any address directly), got " + options.network());
            }
            for (String key : options.labels().keySet()) {
                if (key.startsWith(DockerControl.INTERNAL_PREFIX)) {
                    throw new InvalidArgumentException(
                            "labels",
                            "labels may not start with '" + DockerControl.INTERNAL_PREFIX + "', got '" + key + "'");
                }
            }
            // SecureRandom reads /dev/urandom: not on the subscriber's thread, which may be an event loop
            return blocking(DockerSessions::newId).flatMap(id -> {
                Duration lifetime = options.lifetime().orElse(null);
                Duration idle = options.idleTimeout().orElse(null);
                Instant now = Instant.now();
                long deadline = lifetime == null ? 0 : now.plus(lifetime).getEpochSecond() + 1;
                Map<String, String> labels = new LinkedHashMap<>(options.labels());
                labels.put(DockerControl.SESSION_LABEL, id);
                String name = options.name().orElse(null);
                // always set: a container made from a snapshot of a named session would otherwise inherit its name
                labels.put(DockerControl.NAME_LABEL, name == null ? "" : name);
                // always set: a container made from a snapshot would otherwise inherit the snapshotted session's values
                labels.put(
                        DockerControl.EXPIRES_LABEL,
                        deadline > 0 ? Long.toString(DockerTimers.reaperDeadline(deadline)) : "never");
                if (!options.lifetimeChosen()) {
                    labels.put(DockerControl.LEASE_LABEL, Long.toString(lease.toSeconds()));
                }
                labels.put(DockerControl.IDLE_LABEL, idle != null ? Long.toString(seconds(idle)) : "none");
                List<String> env = new ArrayList<>();
                options.env().forEach((k, v) -> env.add(k + "=" + v));
                String workdir = options.workdir().orElse(settings.workdir().orElse(null));
                List<String> writable = List.of();
                if (settings.readOnlyRootFilesystem()) {
                    if (workdir == null || workdir.equals("/")) {
                        workdir = DockerSettings.READ_ONLY_DEFAULT_WORKDIR;
                    }
                    writable = workdir.equals("/tmp") ? List.of("/tmp") : List.of(workdir, "/tmp");
                }
                // a disk limit does not reach a host directory: such a session keeps to the relay
                // (on the scheduler that made the id: files, not the subscriber's thread)
                Mount channel = settings.diskLimit().isPresent() ? null : channels.prepare(id);
                List<String> entrypoint = new ArrayList<>(AgentInstaller.entrypoint(
                        deadline == 0 ? 0 : Long.parseLong(backstopDeadline(deadline)) * 1000,
                        Long.parseLong(backstopIdle(idle)) * 1000));
                if (channel != null) {
                    entrypoint.addAll(AgentChannels.agentArguments());
                }
                ContainerSpec spec = new ContainerSpec(
                        name == null ? id : DockerControl.NAMED_CONTAINER_PREFIX + name,
                        settings.image(),
                        entrypoint,
                        List.of(),
                        env,
                        labels,
                        workdir,
                        settings.user().orElse(null),
                        settings.cpuLimit().isPresent()
                                ? Math.round(settings.cpuLimit().getAsDouble() * 1e9)
                                : null,
                        settings.memoryLimit().isPresent()
                                ? settings.memoryLimit().getAsLong()
                                : null,
                        settings.pidsLimit().isPresent() ? settings.pidsLimit().getAsLong() : null,
                        settings.network().dockerName(),
                        settings.runtime().dockerName(),
                        settings.capabilities(),
                        settings.readOnlyRootFilesystem(),
                        writable,
                        settings.diskLimit().isPresent() ? settings.diskLimit().getAsLong() : null);
                DockerSessionState[] made = new DockerSessionState[1];
                return blocking(() -> {
                            try {
                                if (reaper != null) {
                                    reaper.ensureBlocking(); // before the container: nothing may run that nobody
                                    // would end
                                }
                                Map<String, String> imageLabels = control.ensureImage(
                                        settings.image(), settings.pullPolicy().name());
                                // one look at the agent's volume; installs it when missing (another program may remove
                                // it)
                                agentInstaller.ensure(settings.image());
                                String containerId;
                                try {
                                    containerId = createAndStart(id, spec, channel);
                                } catch (SessionNameInUseException taken) {
                                    throw new SessionNameInUseException(taken.name(), nameEnding(taken.name()));
                                }
                                Map<String, String> visible = new LinkedHashMap<>(userLabels(imageLabels));
                                visible.putAll(options.labels());
                                DockerAgentHost host = new DockerAgentHost(
                                        control,
                                        data,
                                        channels,
                                        id,
                                        containerId,
                                        settings.runtime().dockerName());
                                SessionAgent agent = new SessionAgent(host, id);
                                DockerSessionState state =
                                        newState(id, containerId, visible, now, options.secrets(), agent, host);
                                made[0] = state;
                                state.named(name);
                                state.pauses.autoResume(options.autoResume());
                                state.timers.setLifetime(lifetime);
                                state.timers.setIdleTimeout(idle);
                                sessions.put(id, state);
                                LOG.debug(
                                        "created docker session {} (container {}) with {}", id, containerId, settings);
                                return (SandboxSession) new DockerSession(this, state);
                            } catch (RuntimeException e) {
                                channels.remove(id);
                                throw e;
                            }
                        })
                        .flatMap(session -> made[0].startEgress(options.network(), session.files())
                                .thenReturn(session)
                                .onErrorResume(e -> session.destroy()
                                        .onErrorResume(x -> Mono.empty())
                                        .then(Mono.error(e))));
            });
        });
    }

    /**
     * Creates and starts a session container; when the start fails because the agent's volume lost the agent (removed
     * and made again empty between the look and the start), installs it again and tries once more.
     */
    private String createAndStart(String id, ContainerSpec spec, Mount channel) {
        try {
            return control.createAndStart(spec, mounts(channel));
        } catch (RuntimeException e) {
            if (channel != null && AgentChannels.mountRefused(e)) {
                // the daemon does not see this JVM's files (another host, another mount namespace): the relay
                LOG.info(
                        "the daemon cannot mount {} ({}): sessions use its exec stream",
                        channel.getSource(),
                        e.getMessage());
                channels.missed(spec.runtime() == null ? "runc" : spec.runtime());
                channels.remove(id);
                return createAndStart(id, withoutChannel(spec), null);
            }
            if (!AgentInstaller.agentMissing(e)) {
                throw e;
            }
            LOG.warn("docker session {} found no sandbox agent: {}", id, e.getMessage());
            agentInstaller.reinstall(spec.image());
            return control.createAndStart(spec, mounts(channel));
        }
    }

    private List<Mount> mounts(Mount channel) {
        return channel == null ? List.of(agentInstaller.mount()) : List.of(agentInstaller.mount(), channel);
    }

    private static ContainerSpec withoutChannel(ContainerSpec spec) {
        List<String> entrypoint = new ArrayList<>(spec.entrypoint());
        entrypoint.removeAll(AgentChannels.agentArguments());
        return spec.withEntrypoint(entrypoint);
    }

    /** The grace the SDK adds to the idle timeout it gives a container's agent. */
    private static long graceMillis() {
        return DockerSandboxProvider.IDLE_GRACE_SECONDS * 1000L;
    }

    /** A new session id: 128 bits from {@link SecureRandom}. */
    private static String newId() {
        byte[] random = new byte[16];
        IDS.nextBytes(random);
        return "docker-" + HexFormat.of().formatHex(random);
    }

    /**
     * A handle to a running session container, whichever client created it.
     *
     * @param sessionId the session's id
     * @return the handle, or {@link SessionNotFoundException}
     */
    public Mono<SandboxSession> attach(String sessionId) {
        return Mono.defer(() -> {
            ensureOpen();
            Objects.requireNonNull(sessionId, "sessionId");
            DockerSessionState ending = sessions.get(sessionId);
            if (ending != null && ending.ending()) {
                return Mono.error(new SessionNotFoundException(sessionId));
            }
            return blocking(() -> {
                        List<Container> found =
                                control.listSessions(Map.of(DockerControl.SESSION_LABEL, sessionId), false);
                        if (found.isEmpty()) {
                            throw new SessionNotFoundException(sessionId);
                        }
                        return found.get(0);
                    })
                    .flatMap(container -> {
                        DockerSessionState known = sessions.get(sessionId);
                        if (known != null && !known.destroyed() && known.containerId.equals(container.getId())) {
                            return Mono.just((SandboxSession) new DockerSession(this, known));
                        }
                        return blocking(() -> control.inspectContainer(container.getId()))
                                .flatMap(inspect -> adopt(sessionId, container, inspect));
                    });
        });
    }

    /** A container's session name from its labels; {@code null} for an unnamed session (an empty label). */
    private static String nameOf(Map<String, String> labels) {
        String name = labels.get(DockerControl.NAME_LABEL);
        return name == null || name.isEmpty() ? null : name;
    }

    /**
     * Whether the session holding a name is ending: none of the daemon's running session containers has it (the
     * holder is stopping or being removed), or this provider is destroying the one that has.
     */
    private boolean nameEnding(String name) {
        for (Container c : control.listSessions(Map.of(DockerControl.NAME_LABEL, name), false)) {
            DockerSessionState known = sessions.get(c.getLabels().get(DockerControl.SESSION_LABEL));
            if (known == null || !known.ending()) {
                return false;
            }
        }
        return true;
    }

    /**
     * A handle to the running session with this name, whichever client created it: the daemon's running session
     * containers are looked up by the name's label, and the one found attached by its id.
     *
     * @param name the session's name
     * @return the handle, or {@link SessionNotFoundException}
     */
    public Mono<SandboxSession> attachByName(String name) {
        return Mono.defer(() -> {
            ensureOpen();
            SessionOptions.validateName(name);
            return blocking(() -> {
                        for (Container c : control.listSessions(Map.of(DockerControl.NAME_LABEL, name), false)) {
                            String id = c.getLabels().get(DockerControl.SESSION_LABEL);
                            DockerSessionState known = id == null ? null : sessions.get(id);
                            if (id != null && (known == null || !known.ending())) {
                                return id;
                            }
                        }
                        throw SessionNotFoundException.named(name);
                    })
                    .flatMap(id -> attach(id)
                            .onErrorMap(SessionNotFoundException.class, e -> SessionNotFoundException.named(name)));
        });
    }

    /** Makes state for a session this provider did not create; reads its OOM count when it has a memory limit. */
    private Mono<SandboxSession> adopt(String sessionId, Container container, InspectContainerResponse inspect) {
        String runtime =
                inspect.getHostConfig() == null ? null : inspect.getHostConfig().getRuntime();
        DockerAgentHost host = new DockerAgentHost(control, data, channels, sessionId, container.getId(), runtime);
        SessionAgent agent = new SessionAgent(host, sessionId);
        Mono<OptionalLong> recorded = reaper == null ? Mono.just(OptionalLong.empty()) : reaper.readDeadline(sessionId);
        Mono<Map<String, String>> added = blocking(() -> labelVolumes.readAll().getOrDefault(sessionId, Map.of()));
        // a paused container's agent cannot answer: the session is adopted paused, with the labels' timers
        boolean paused = inspect.getState() != null
                && Boolean.TRUE.equals(inspect.getState().getPaused());
        // the idle timeout as the container's agent was last told (only a hint: sandboxed code may lie)
        Mono<long[]> hint = paused
                ? Mono.just(new long[0])
                : agent.ungated()
                        .map(c -> new long[] {
                            c.hello().deadlineMs(), Math.max(0, c.hello().idleMs() - graceMillis())
                        })
                        .onErrorResume(e -> Mono.just(new long[0]));
        return Mono.zip(recorded, hint, added)
                .map(found -> {
                    DockerSessionState state = newState(
                            sessionId,
                            container.getId(),
                            withAdded(userLabels(container.getLabels()), found.getT3()),
                            createdAt(container),
                            Map.of(),
                            agent,
                            host);
                    // the deadline from outside the sandbox: the reaper's record of the last setLifetime, else the
                    // label
                    long[] labelled = labelTimers(container.getLabels());
                    long deadline = found.getT1().isPresent()
                            ? DockerTimers.deadlineMillis(found.getT1().getAsLong())
                            : labelled[0];
                    // said by code the sandbox's own root may replace: taken only within the range a client could set
                    long hinted = found.getT2().length == 2 ? found.getT2()[1] : 0;
                    long idleMillis = hinted > 0 && hinted <= MAX_IDLE_HINT.toMillis() ? hinted : labelled[1];
                    state.timers.setLifetime(
                            deadline > 0
                                    ? Duration.ofMillis(Math.max(1, deadline - System.currentTimeMillis()))
                                    : null);
                    state.timers.setIdleTimeout(idleMillis > 0 ? Duration.ofMillis(idleMillis) : null);
                    state.named(nameOf(container.getLabels()));
                    if (paused) {
                        state.pauses.foundPaused();
                    }
                    DockerSessionState existing = sessions.putIfAbsent(sessionId, state);
                    return (SandboxSession)
                            new DockerSession(this, existing != null && !existing.destroyed() ? existing : state);
                })
                // whoever attaches holds the session: its lease is renewed from now on, starting at once
                .flatMap(session -> reaper == null
                        ? Mono.just(session)
                        : reaper.renewLeases(List.of(sessionId), lease.toSeconds())
                                .thenReturn(session));
    }

    /**
     * The running session containers on the daemon, whichever client created them.
     *
     * @param labels labels the sessions must all carry
     * @return one info per session
     */
    public Flux<SessionInfo> list(Map<String, String> labels) {
        return Mono.defer(() -> {
                    ensureOpen();
                    Map<String, String> filter = Map.copyOf(labels);
                    return blocking(() -> {
                        // labels added after create live in volumes (LabelVolumes): when any exist, the daemon cannot
                        // filter by them, and every session container is listed and matched here
                        Map<String, Map<String, String>> added = labelVolumes.readAll();
                        List<SessionInfo> found = new ArrayList<>();
                        for (Container c : control.listSessions(added.isEmpty() ? filter : Map.of(), false)) {
                            String id = c.getLabels().get(DockerControl.SESSION_LABEL);
                            Map<String, String> all = withAdded(userLabels(c.getLabels()), added.get(id));
                            if (all.entrySet().containsAll(filter.entrySet())) {
                                found.add(new SessionInfo(
                                        id,
                                        DockerSandboxProvider.NAME,
                                        all,
                                        createdAt(c),
                                        java.util.Optional.ofNullable(nameOf(c.getLabels()))));
                            }
                        }
                        return found;
                    });
                })
                .flatMapIterable(infos -> infos);
    }

    private static Map<String, String> withAdded(Map<String, String> own, Map<String, String> added) {
        if (added == null) {
            return own;
        }
        Map<String, String> all = new LinkedHashMap<>(own);
        all.putAll(added);
        return all;
    }

    /**
     * A session's readings as the daemon streams them (the first at once, then once a second); does not block.
     *
     * @param state the session
     * @return the readings, until the container stops
     */
    Flux<dev.sandbox.implementation.stats.StatsStream.Reading> statsStream(DockerSessionState state) {
        return DockerStats.stream(data, state.containerId);
    }

    /**
     * Records a session's labels after an addition where every provider of this daemon reads them ({@link
     * LabelVolumes}).
     *
     * @param state the session
     * @param labels every label the session will have
     * @return completes when recorded
     */
    Mono<Void> recordLabels(DockerSessionState state, Map<String, String> labels) {
        return blocking(() -> {
                    labelVolumes.write(state.id, labels);
                    return Boolean.TRUE;
                })
                .then();
    }

    /** Removes the label records of sessions the daemon no longer has (a dead client's); blocking. */
    void sweepLabels(Set<String> alive) {
        labelVolumes.sweep(alive);
    }

    private DockerSessionState newState(
            String id,
            String containerId,
            Map<String, String> labels,
            Instant createdAt,
            Map<String, String> secrets,
            SessionAgent agent,
            DockerAgentHost host) {
        events.watch();
        DockerSessionState[] self = new DockerSessionState[1];
        self[0] = new DockerSessionState(
                id, containerId, labels, createdAt, secrets, agent, host, reaper, control, reason -> {
                    // the lifetime or idle timeout ran out, as this client keeps them: the state says so at once (in
                    // destroy), the removal runs without holding this thread
                    LOG.debug("docker session {} ends: {}", id, reason);
                    destroy(self[0], reason)
                            .subscribe(
                                    null,
                                    e -> LOG.warn("cannot end docker session {} ({}): {}", id, reason, e.toString()));
                });
        return self[0];
    }

    /**
     * A container event from the daemon, on the event stream's thread: a session container that died or was removed
     * ends its session (unless this SDK is removing it), with the cause from one inspect, or from the event when the
     * container is already gone (or the inspect takes longer than a second).
     */
    private void onEvent(DockerEvents.Event event) {
        DockerSessionState state = null;
        for (DockerSessionState s : sessions.values()) {
            if (s.containerId.equals(event.containerId())) {
                state = s;
                break;
            }
        }
        if (state == null || state.ending()) {
            return;
        }
        DockerSessionState found = state;
        switch (event.action()) {
            case "oom" -> found.oomEvent();
            case "die" -> {
                if (!explaining.add(found.containerId)) {
                    return;
                }
                blocking(() -> {
                            var c = control.inspectContainer(found.containerId);
                            return c == null || c.getState() == null
                                    ? ContainerDeath.describe(event.attributes(), found.oomEventSeen())
                                    : ContainerDeath.describe(c);
                        })
                        .timeout(Duration.ofSeconds(1))
                        .onErrorResume(
                                e -> Mono.just(ContainerDeath.describe(event.attributes(), found.oomEventSeen())))
                        .doFinally(x -> explaining.remove(found.containerId))
                        .subscribe(cause -> terminate(found, cause));
            }
            case "destroy" -> {
                if (!explaining.contains(found.containerId)) {
                    // off the event loop: ending a session kills its commands' helpers and stops its timers
                    blocking(() -> terminate(found, "its container was removed"))
                            .subscribe();
                }
            }
            default -> {
                // not asked for
            }
        }
    }

    private boolean terminate(DockerSessionState state, String cause) {
        if (!state.terminate(cause)) {
            return false;
        }
        sessions.remove(state.id, state);
        Schedulers.boundedElastic()
                .schedule(
                        () -> { // files and daemon calls, not on the events' thread
                            channels.remove(state.id);
                            labelVolumes.removeAll(state.id);
                        });
        LOG.debug("docker session {} terminated: {}", state.id, cause);
        return true;
    }

    /**
     * Removes the channel directories of sessions the daemon no longer lists (blocking).
     *
     * @param alive the sessions the daemon lists
     */
    void sweepChannels(Set<String> alive) {
        channels.sweep(alive);
    }

    /** Forgets the sessions that match, such as those whose containers are gone; their handles fail from now on. */
    void forget(Predicate<DockerSessionState> gone) {
        sessions.values().removeIf(gone);
    }

    Mono<Void> destroy(DockerSessionState state) {
        return destroy(state, SessionEndReason.DESTROYED);
    }

    private Mono<Void> destroy(DockerSessionState state, SessionEndReason reason) {
        // marked at once, so an attach right after a destroy was started (not finished) finds nothing
        state.destroying(true);
        if (reason != SessionEndReason.DESTROYED) {
            // a timer ended it: say why at once, or a call during the removal sees only a stopped container
            state.markEnded(reason);
        } else {
            // what the removal cuts (a command, a watched exit) fails as destroyed, not as a container that died
            state.agent.ending(state.endError(reason));
        }
        return blocking(() -> {
                    if (state.pauses.paused()) {
                        // the daemon cannot kill a paused gVisor sandbox (it waits 10 s, then calls it a zombie)
                        DockerFreezer.unpauseQuietly(control, state.containerId);
                    }
                    control.removeContainer(state.containerId, "session " + state.id);
                    channels.remove(state.id);
                    labelVolumes.removeAll(state.id);
                    state.markEnded(reason);
                    sessions.remove(state.id, state);
                    LOG.debug("destroyed docker session {}", state.id);
                    return Boolean.TRUE;
                })
                .doOnError(e -> {
                    state.destroying(false);
                    state.agent.ending(null);
                })
                .then();
    }

    /**
     * Stops enforcing the sessions' timers and renewing their leases (the reaper takes over), kills this client's
     * commands, forgets every session and closes the connections, without blocking the subscriber. The containers keep
     * running until their deadline, or until their lease runs out when they have none.
     * Idempotent: later calls complete with the first.
     *
     * @return completes once the connections are closed
     */
    public Mono<Void> closeAsync() {
        return closer.closeAsync();
    }

    /**
     * {@link #closeAsync()}, waiting for it.
     *
     * @param timeout the longest wait
     */
    public void close(Duration timeout) {
        closer.close(timeout);
    }

    private Mono<Void> release() {
        if (renewals != null) {
            renewals.dispose(); // the leases run out from now on, unless another provider holds the sessions
        }
        events.close();
        for (DockerSessionState state : sessions.values()) {
            // the containers' agents (and the reaper) take over; agent-held processes keep running (that is their
            // point) and this provider stops following them; the agent ends this client's foreground commands
            state.providerClosed();
        }
        sessions.clear();
        return Mono.whenDelayError(
                data.closeAsync(), Mono.fromRunnable(control::close).subscribeOn(Schedulers.boundedElastic()));
    }

    void ensureOpen() {
        closer.ensureOpen();
    }

    static <T> Mono<T> blocking(Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
    }

    private static Instant createdAt(Container c) {
        return c.getCreated() == null ? Instant.EPOCH : Instant.ofEpochSecond(c.getCreated());
    }

    private static Map<String, String> userLabels(Map<String, String> labels) {
        Map<String, String> out = new LinkedHashMap<>();
        if (labels != null) {
            labels.forEach((k, v) -> {
                if (!k.startsWith(DockerControl.INTERNAL_PREFIX)) {
                    out.put(k, v);
                }
            });
        }
        return out;
    }
}
