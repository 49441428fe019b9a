package dev.sandbox.docker;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Container;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.SessionTerminatedException;
import dev.sandbox.implementation.ProviderCloser;
import dev.sandbox.implementation.docker.ContainerExecutor;
import dev.sandbox.implementation.docker.DockerControl;
import dev.sandbox.implementation.docker.DockerDataPlane;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The Docker provider: each session is a container on a Docker daemon, and each command an exec in it. Isolation,
 * limits and lifetime come from Docker (and gVisor with {@link DockerSettings.Runtime#RUNSC}).
 *
 * <p>The daemon is found as the {@code docker} CLI finds it: {@code DOCKER_HOST} (a {@code unix://} or {@code
 * tcp://} address), else {@code /var/run/docker.sock}. TLS ({@code DOCKER_TLS_VERIFY}) is not supported yet.
 *
 * <p><b>Sessions.</b> A session is a container running a keep-alive command (under Docker's init, with {@code
 * no-new-privileges}), named and labelled {@code dev.sandbox.session=<id>} plus the session's labels. Sessions
 * outlive this provider and the JVM: {@link #attach(String)} finds one by its label, {@link #list(Map)} lists running
 * ones, {@link SandboxSession#close()} leaves the container running, and {@link SandboxSession#destroy()} removes it
 * by force. How {@link SessionOptions} combines with {@link DockerSettings} is described there; in short, env goes into
 * the container, secrets only into each command of the handles of this provider instance.
 *
 * <p><b>Lifetime.</b> A session's lifetime and idle timeout ({@link SessionOptions#withLifetime(Duration)}, {@link
 * SessionOptions#withIdleTimeout(Duration)}, {@link SandboxSession#setLifetime(Duration)}, {@link
 * SandboxSession#setIdleTimeout(Duration)}) are enforced twice. The provider that holds the session ends it on time,
 * as the local provider does (commands fail with {@link dev.sandbox.SessionClosedException} naming the reason). The
 * container enforces them too, for when no client is alive: its keep-alive command ends
 * {@value #LIFETIME_GRACE_SECONDS} s after the deadline, or after {@value #IDLE_GRACE_SECONDS} s more than the idle
 * timeout without any process running in it, and the container stops. A sweeper in every provider (every minute by
 * default, or on demand with {@link #sweep()}) removes stopped session containers and running ones past their deadline.
 *
 * <p><b>Commands</b> stream through a raw connection to the daemon with demand-driven reads: a slow subscriber
 * throttles the process inside the container. They are stopped (on cancel and timeouts) by a short helper exec that
 * kills every process carrying the command's marker variable ({@code DEV_SANDBOX_EXEC}); the image needs {@code sh},
 * {@code sleep}, {@code grep} and {@code kill}. A command on a container that was stopped or removed from outside
 * fails with {@link SessionTerminatedException}.
 *
 * <p><b>Snapshots.</b> {@link #snapshot(String)} commits a session's container to a local image {@value
 * #SNAPSHOT_REPOSITORY}{@code :<session id>-<millis>}, labelled {@code dev.sandbox.snapshot.source=<session id>}; it
 * outlives the session, {@link #restore(String, SessionOptions)} creates sessions from it (never pulling), and {@link
 * #deleteSnapshot(String)} removes it. A restored session starts with the labels and env of the snapshotted one,
 * overridden by its own options.
 *
 * <pre>{@code
 * try (DockerSandboxProvider docker = DockerSandboxProvider.create(
 *         DockerSettings.of("busybox:1.36").withMemoryLimit(256L << 20).withLifetime(Duration.ofMinutes(30)))) {
 *     SandboxSession session = docker.create(SessionOptions.defaults().withLabel("team", "search"))
 *         .block(Duration.ofSeconds(30));
 *     ExecResult result = session.run(ExecOptions.shell("echo hello")).block(Duration.ofSeconds(10));
 *     String snapshot = docker.snapshot(session.id()).block(Duration.ofMinutes(1));
 *     session.destroy().block(Duration.ofSeconds(30));
 * }
 * }</pre>
 */
public final class DockerSandboxProvider implements SandboxProvider {
    /** The provider's name. */
    public static final String NAME = "docker";

    /** The local image repository snapshots are committed to. */
    public static final String SNAPSHOT_REPOSITORY = "sandbox-snapshot";

    /** How this provider runs commands, as reported by {@link dev.sandbox.SessionStatus#processLauncher()}. */
    public static final String PROCESS_LAUNCHER = "docker-exec";

    /** The sweeper's default interval. */
    public static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofMinutes(1);

    private static final Logger LOG = LoggerFactory.getLogger(DockerSandboxProvider.class);

    /** Seconds the container's keep-alive waits past a session's deadline before it ends the container itself. */
    public static final int LIFETIME_GRACE_SECONDS = 5;

    /**
     * Seconds the container's keep-alive adds to a session's idle timeout: the container sees only processes, while
     * the provider also counts file transfers and other calls as activity.
     */
    public static final int IDLE_GRACE_SECONDS = 10;

    /** How long {@link #close()} waits for the connections to close. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private final DockerSettings defaults;
    private final DockerControl control;
    private final DockerDataPlane data;
    private final Map<String, DockerSessionState> sessions = new ConcurrentHashMap<>();
    private final ProviderCloser closer = new ProviderCloser(NAME, this::release);
    private final Disposable sweeper;

    private DockerSandboxProvider(Builder b) {
        this.defaults = b.settings.validate();
        this.control = DockerControl.connect(b.dockerHost);
        try {
            this.data = new DockerDataPlane(
                    control.dockerHost(), Math.max(2, Runtime.getRuntime().availableProcessors()));
        } catch (RuntimeException e) {
            control.close();
            throw e;
        }
        this.sweeper = b.sweepInterval == null
                ? null
                : Flux.interval(b.sweepInterval, b.sweepInterval)
                        .onBackpressureDrop()
                        .concatMap(
                                tick -> sweep().onErrorResume(e -> {
                                    LOG.debug("sweep failed: {}", e.toString());
                                    return Mono.empty();
                                }),
                                1)
                        .subscribe();
    }

    /**
     * A provider with these default settings, the daemon from {@code DOCKER_HOST}, and a sweeper every minute.
     * Nothing is contacted until the first operation.
     *
     * @param defaults the settings of sessions created without their own
     * @return the provider
     */
    public static DockerSandboxProvider create(DockerSettings defaults) {
        return builder().settings(defaults).build();
    }

    /**
     * A builder for a provider with a chosen daemon or sweeper interval.
     *
     * <pre>{@code
     * DockerSandboxProvider docker = DockerSandboxProvider.builder()
     *     .settings(DockerSettings.of("busybox:1.36"))
     *     .dockerHost("unix:///run/user/1000/docker.sock")
     *     .sweepInterval(Duration.ofSeconds(30))
     *     .build();
     * }</pre>
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures a {@link DockerSandboxProvider}. */
    public static final class Builder {
        private DockerSettings settings;
        private String dockerHost;
        private Duration sweepInterval = DEFAULT_SWEEP_INTERVAL;

        private Builder() {}

        /**
         * Sets the default session settings (required).
         *
         * @param settings the settings
         * @return this builder
         */
        public Builder settings(DockerSettings settings) {
            this.settings = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /**
         * Sets the daemon's address, overriding {@code DOCKER_HOST}.
         *
         * @param dockerHost such as {@code unix:///var/run/docker.sock} or {@code tcp://127.0.0.1:2375}
         * @return this builder
         */
        public Builder dockerHost(String dockerHost) {
            this.dockerHost = dockerHost;
            return this;
        }

        /**
         * Sets how often the sweeper looks for expired sessions.
         *
         * @param sweepInterval a positive interval, or {@code null} for no periodic sweeping
         * @return this builder
         */
        public Builder sweepInterval(Duration sweepInterval) {
            if (sweepInterval != null && (sweepInterval.isZero() || sweepInterval.isNegative())) {
                throw new InvalidArgumentException(
                        "sweepInterval", "sweepInterval must be positive, got " + sweepInterval);
            }
            this.sweepInterval = sweepInterval;
            return this;
        }

        /**
         * Builds the provider.
         *
         * @return the provider
         * @throws InvalidArgumentException when the settings are missing or wrong
         */
        public DockerSandboxProvider build() {
            if (settings == null) {
                throw new InvalidArgumentException("settings", "settings must be set (at least an image)");
            }
            return new DockerSandboxProvider(this);
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    /**
     * The settings of sessions created without their own.
     *
     * @return the default settings
     */
    public DockerSettings settings() {
        return defaults;
    }

    /**
     * The daemon's address.
     *
     * @return a {@code unix://} or {@code tcp://} address
     */
    public String dockerHost() {
        return control.dockerHost().toString();
    }

    boolean isClosed() {
        return closer.isClosed();
    }

    /**
     * Creates a session with the provider's default settings.
     *
     * @param options workdir, environment, secrets and labels
     * @return the new session
     */
    @Override
    public Mono<SandboxSession> create(SessionOptions options) {
        return create(options, defaults);
    }

    /**
     * Creates a session with its own Docker settings.
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
            for (String key : options.labels().keySet()) {
                if (key.startsWith(DockerControl.INTERNAL_PREFIX)) {
                    throw new InvalidArgumentException(
                            "labels",
                            "labels may not start with '" + DockerControl.INTERNAL_PREFIX + "', got '" + key + "'");
                }
            }
            String id = "docker-"
                    + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
            Duration lifetime = options.lifetime().orElse(null);
            Duration idle = options.idleTimeout().orElse(null);
            Instant now = Instant.now();
            long deadline = lifetime == null ? 0 : now.plus(lifetime).getEpochSecond() + 1;
            Map<String, String> labels = new LinkedHashMap<>(options.labels());
            labels.put(DockerControl.SESSION_LABEL, id);
            // always set: a container made from a snapshot would otherwise inherit the snapshotted session's values
            labels.put(DockerControl.EXPIRES_LABEL, deadline > 0 ? Long.toString(deadline) : "never");
            labels.put(DockerControl.IDLE_LABEL, idle != null ? Long.toString(seconds(idle)) : "none");
            List<String> env = new ArrayList<>();
            options.env().forEach((k, v) -> env.add(k + "=" + v));
            DockerControl.ContainerSpec spec = new DockerControl.ContainerSpec(
                    id,
                    settings.image(),
                    List.of("/bin/sh", "-c", ContainerExecutor.KEEP_ALIVE, "dev.sandbox-keepalive"),
                    List.of(backstopDeadline(deadline), backstopIdle(idle)),
                    env,
                    labels,
                    options.workdir().orElse(settings.workdir().orElse(null)),
                    settings.user().orElse(null),
                    settings.cpuLimit().isPresent()
                            ? Math.round(settings.cpuLimit().getAsDouble() * 1e9)
                            : null,
                    settings.memoryLimit().isPresent() ? settings.memoryLimit().getAsLong() : null,
                    settings.pidsLimit().isPresent() ? settings.pidsLimit().getAsLong() : null,
                    settings.network().dockerName(),
                    settings.runtime().dockerName());
            return blocking(() -> {
                Map<String, String> imageLabels = control.ensureImage(
                        settings.image(), settings.pullPolicy().name());
                String containerId = control.createAndStart(spec);
                Map<String, String> visible = new LinkedHashMap<>(userLabels(imageLabels));
                visible.putAll(options.labels());
                ContainerExecutor executor = new ContainerExecutor(
                        control, data, id, containerId, settings.memoryLimit().isPresent(), 0);
                DockerSessionState state = newState(id, containerId, visible, now, options.secrets(), executor);
                state.timers.setLifetime(lifetime);
                state.timers.setIdleTimeout(idle);
                sessions.put(id, state);
                LOG.debug("created docker session {} (container {}) with {}", id, containerId, settings);
                return (SandboxSession) new DockerSession(this, state);
            });
        });
    }

    @Override
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

    /** Makes state for a session this provider did not create; reads its OOM count when it has a memory limit. */
    private Mono<SandboxSession> adopt(String sessionId, Container container, InspectContainerResponse inspect) {
        Long memory =
                inspect.getHostConfig() == null ? null : inspect.getHostConfig().getMemory();
        boolean limited = memory != null && memory > 0;
        ContainerExecutor executor = new ContainerExecutor(control, data, sessionId, container.getId(), limited, 0);
        // a counter that cannot be read now (its helper did not run) counts from zero
        Mono<Long> baseline = limited
                ? executor.readOomKills()
                        .onErrorResume(e -> !(e instanceof SessionTerminatedException), e -> Mono.just(0L))
                : Mono.just(0L);
        return baseline.zipWith(executor.readTimers()).map(found -> {
            executor.oomKillsSeen(found.getT1());
            DockerSessionState state = newState(
                    sessionId,
                    container.getId(),
                    userLabels(container.getLabels()),
                    createdAt(container),
                    Map.of(),
                    executor);
            // the timers file holds what setLifetime/setIdleTimeout last asked for; the labels what create asked for
            long[] timers = found.getT2().length == 2 ? found.getT2() : labelTimers(container.getLabels());
            state.timers.setLifetime(
                    timers[0] > 0 ? Duration.ofMillis(Math.max(1, timers[0] - System.currentTimeMillis())) : null);
            state.timers.setIdleTimeout(timers[1] > 0 ? Duration.ofMillis(timers[1]) : null);
            DockerSessionState existing = sessions.putIfAbsent(sessionId, state);
            return new DockerSession(this, existing != null && !existing.destroyed() ? existing : state);
        });
    }

    @Override
    public Flux<SessionInfo> list(Map<String, String> labels) {
        return Mono.defer(() -> {
                    ensureOpen();
                    Map<String, String> filter = Map.copyOf(labels);
                    return blocking(() -> control.listSessions(filter, false));
                })
                .flatMapIterable(containers -> containers)
                .map(c -> new SessionInfo(
                        c.getLabels().get(DockerControl.SESSION_LABEL), NAME, userLabels(c.getLabels()), createdAt(c)));
    }

    /**
     * Creates a session from a snapshot with the provider's default settings; the image is never pulled.
     *
     * @param snapshotRef a reference returned by {@link #snapshot(String)}
     * @param options options for the new session
     * @return the new session, or {@link InvalidArgumentException} when no such snapshot exists here
     */
    @Override
    public Mono<SandboxSession> restore(String snapshotRef, SessionOptions options) {
        return restore(snapshotRef, options, defaults);
    }

    /**
     * Creates a session from a snapshot with its own settings (limits, runtime, lifetime); the image is never pulled.
     *
     * @param snapshotRef a reference returned by {@link #snapshot(String)}
     * @param options options for the new session
     * @param settings settings whose image and pull policy are replaced by the snapshot's
     * @return the new session, or {@link InvalidArgumentException} when no such snapshot exists here
     */
    public Mono<SandboxSession> restore(String snapshotRef, SessionOptions options, DockerSettings settings) {
        return Mono.defer(() -> {
            if (snapshotRef == null || snapshotRef.isBlank()) {
                throw new InvalidArgumentException(
                        "snapshotRef", "snapshotRef must name a snapshot, got '" + snapshotRef + "'");
            }
            return create(options, settings.withImage(snapshotRef).withPullPolicy(DockerSettings.PullPolicy.NEVER))
                    .onErrorMap(
                            e -> e instanceof InvalidArgumentException i
                                    && i.field().equals("image"),
                            e -> new InvalidArgumentException(
                                    "snapshotRef",
                                    "no snapshot '" + snapshotRef + "' on this Docker host: " + e.getMessage()));
        });
    }

    /**
     * Commits a session's container to a local image, which outlives the session. The container is paused while
     * it is committed.
     *
     * @param sessionId the session
     * @return the snapshot's reference, {@value #SNAPSHOT_REPOSITORY}{@code :<session id>-<millis>}
     */
    public Mono<String> snapshot(String sessionId) {
        return Mono.defer(() -> {
            ensureOpen();
            return blocking(() -> {
                List<Container> found = control.listSessions(Map.of(DockerControl.SESSION_LABEL, sessionId), false);
                if (found.isEmpty()) {
                    throw new SessionNotFoundException(sessionId);
                }
                String tag = sessionId + "-" + System.currentTimeMillis();
                control.commit(
                        found.get(0).getId(),
                        SNAPSHOT_REPOSITORY,
                        tag,
                        Map.of(DockerControl.SNAPSHOT_SOURCE_LABEL, sessionId));
                return SNAPSHOT_REPOSITORY + ":" + tag;
            });
        });
    }

    /**
     * Removes a snapshot image. A snapshot that does not exist counts as removed; one that a container still uses is
     * a {@link dev.sandbox.BackendException}.
     *
     * @param snapshotRef the snapshot's reference
     * @return completes when it is gone
     */
    public Mono<Void> deleteSnapshot(String snapshotRef) {
        return Mono.defer(() -> {
            ensureOpen();
            return blocking(() -> {
                        control.removeImage(snapshotRef);
                        return Boolean.TRUE;
                    })
                    .then();
        });
    }

    /**
     * Removes every session container on the daemon that is past its lifetime, has stopped, or was created and never
     * started (after five minutes), whichever client made it. The provider also does this periodically.
     *
     * @return the ids of the sessions removed
     */
    public Mono<List<String>> sweep() {
        return Mono.defer(() -> {
            ensureOpen();
            return blocking(() -> {
                List<String> removed = control.sweep(Instant.now().getEpochSecond());
                // forget sessions whose containers are gone (swept, expired, removed from outside); their handles
                // answer with SessionTerminatedException from now on
                long listedAt = System.nanoTime();
                Set<String> alive = new HashSet<>();
                for (Container c : control.listSessions(Map.of(), true)) {
                    alive.add(c.getLabels().get(DockerControl.SESSION_LABEL));
                }
                sessions.values().removeIf(s -> !alive.contains(s.id) && s.registeredNanos - listedAt < 0);
                if (!removed.isEmpty()) {
                    LOG.info("swept expired docker sessions {}", removed);
                }
                return List.copyOf(removed);
            });
        });
    }

    private DockerSessionState newState(
            String id,
            String containerId,
            Map<String, String> labels,
            Instant createdAt,
            Map<String, String> secrets,
            ContainerExecutor executor) {
        DockerSessionState[] self = new DockerSessionState[1];
        self[0] = new DockerSessionState(id, containerId, labels, createdAt, secrets, executor, reason -> {
            LOG.debug("docker session {} ends: {}", id, reason);
            destroy(self[0], reason).block(Duration.ofMinutes(1));
        });
        return self[0];
    }

    SandboxFiles files(DockerSessionState state, Runnable guard) {
        return new DockerFiles(state, guard);
    }

    /**
     * Changes a session's lifetime and idle timeout: here, and in the container for its keep-alive.
     *
     * @param state the session
     * @param lifetime the new lifetime from now, or unchanged when {@code null}
     * @param idle the new idle timeout, or unchanged when {@code null}
     * @return completes when the container knows
     */
    Mono<Void> setTimers(DockerSessionState state, Duration lifetime, Duration idle) {
        return Mono.defer(() -> {
            if (lifetime != null) {
                state.timers.setLifetime(lifetime);
            }
            if (idle != null) {
                state.timers.setIdleTimeout(idle);
            }
            Instant expires = state.timers.expiresAt();
            Duration idleNow = state.timers.idleTimeout();
            long deadline = expires == null ? 0 : expires.getEpochSecond() + 1;
            return state.executor.setTimers(
                    Long.parseLong(backstopDeadline(deadline)),
                    Long.parseLong(backstopIdle(idleNow)),
                    expires == null ? 0 : expires.toEpochMilli(),
                    idleNow == null ? 0 : idleNow.toMillis());
        });
    }

    private static String backstopDeadline(long deadlineEpochSeconds) {
        return Long.toString(deadlineEpochSeconds > 0 ? deadlineEpochSeconds + LIFETIME_GRACE_SECONDS : 0);
    }

    private static String backstopIdle(Duration idle) {
        return Long.toString(idle == null ? 0 : seconds(idle) + IDLE_GRACE_SECONDS);
    }

    /** The deadline (epoch millis) and idle timeout (millis) a container was created with; 0 for none. */
    private static long[] labelTimers(Map<String, String> labels) {
        long[] out = new long[2];
        try {
            out[0] = Long.parseLong(labels.getOrDefault(DockerControl.EXPIRES_LABEL, "never")) * 1000;
        } catch (NumberFormatException e) {
            out[0] = 0;
        }
        try {
            out[1] = Long.parseLong(labels.getOrDefault(DockerControl.IDLE_LABEL, "none")) * 1000;
        } catch (NumberFormatException e) {
            out[1] = 0;
        }
        return out;
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
        }
        return blocking(() -> {
                    control.removeContainer(state.containerId, "session " + state.id);
                    state.markEnded(reason);
                    sessions.remove(state.id, state);
                    LOG.debug("destroyed docker session {}", state.id);
                    return Boolean.TRUE;
                })
                .doOnError(e -> state.destroying(false))
                .then();
    }

    /**
     * Releases the provider's connections and stops its sweeper, waiting up to 30 seconds; see {@link #closeAsync()}.
     */
    @Override
    public void close() {
        closer.close(CLOSE_TIMEOUT);
    }

    /**
     * Releases the provider without blocking the subscribing thread: stops the sweeper and the session timers, stops
     * the commands its handles started, shuts the exec streams' event loops down, and closes the docker-java client
     * (on {@link Schedulers#boundedElastic()}). Sessions keep running: attach to them from another provider, or
     * destroy them first; the containers' keep-alives enforce their lifetimes from now on. Handles from this provider
     * fail with {@link dev.sandbox.SessionClosedException} afterwards, and the provider refuses new work with {@link
     * dev.sandbox.ProviderClosedException}.
     *
     * @return completes once the connections are closed
     */
    @Override
    public Mono<Void> closeAsync() {
        return closer.closeAsync();
    }

    private Mono<Void> release() {
        if (sweeper != null) {
            sweeper.dispose();
        }
        for (DockerSessionState state : sessions.values()) {
            state.timers.stop(); // the containers' keep-alives take over
            state.runner.killAll();
        }
        sessions.clear();
        return Mono.whenDelayError(
                data.closeAsync(), Mono.fromRunnable(control::close).subscribeOn(Schedulers.boundedElastic()));
    }

    private void ensureOpen() {
        closer.ensureOpen();
    }

    private static <T> Mono<T> blocking(Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
    }

    private static long seconds(Duration d) {
        if (d == null) {
            return 0;
        }
        long s = d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
        return Math.max(1, s);
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
