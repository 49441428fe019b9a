package dev.sandbox.docker;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.SessionTerminatedException;
import dev.sandbox.implementation.docker.DockerControl;
import dev.sandbox.implementation.docker.DockerDataPlane;
import dev.sandbox.implementation.docker.DockerReaper;
import dev.sandbox.implementation.docker.DockerSessions;
import dev.sandbox.implementation.docker.DockerSnapshots;
import dev.sandbox.implementation.docker.DockerSweeper;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The Docker provider: each session is a container on a Docker daemon, and each command an exec in it. Isolation,
 * limits and lifetime come from Docker (and gVisor with {@link DockerSettings.Runtime#RUNSC}).
 *
 * <p>The daemon is found as the {@code docker} CLI finds it: {@code DOCKER_HOST} (a {@code unix://} or {@code
 * tcp://} address), else {@code /var/run/docker.sock}. TLS ({@code DOCKER_TLS_VERIFY}) is not supported yet.
 *
 * <p><b>Sessions.</b> A session is a container running a keep-alive command (under Docker's init, with {@code
 * no-new-privileges} and the limits of {@link DockerSettings}' default profile), named and labelled {@code
 * dev.sandbox.session=<id>} (128 random bits) plus the session's labels. Sessions can outlive this provider and the
 * JVM (one with a chosen lifetime until then, a leased one for a lease, see below): {@link #attach(String)} finds one
 * by its label, {@link #list(Map)} lists running ones, {@link SandboxSession#close()} leaves the container running,
 * and {@link SandboxSession#destroy()} removes it by force. How {@link SessionOptions} combines with {@link DockerSettings} is described there; in short, env goes into
 * the container, secrets only into each command of the handles of this provider instance.
 *
 * <p><b>Lifetime, leases and the reaper.</b> A session's lifetime and idle timeout ({@link
 * SessionOptions#withLifetime(Duration)}, {@link SessionOptions#withIdleTimeout(Duration)}, {@link
 * SandboxSession#setLifetime(Duration)}, {@link SandboxSession#setIdleTimeout(Duration)}) are enforced by the provider
 * that holds the session, as the local provider does (commands fail with {@link dev.sandbox.SessionClosedException}
 * naming the reason). Nothing inside the sandbox decides its end: code there runs as root and can rewrite or stop
 * anything in its container. The authority is the <em>reaper</em>, one small container per daemon ({@code
 * dev-sandbox-reaper}, a static program imported as a local image, never pulled) that the first provider starts, with
 * the daemon's socket mounted and no network. Every second it removes session containers past their deadline (the
 * deadline set at create, as a label, or a later one a provider recorded in the reaper's own state; {@value
 * #LIFETIME_GRACE_SECONDS} s of grace let the holder end the session first and say why), and sessions without a
 * lifetime whose <em>lease</em> has run out: every provider renews the leases of the sessions it holds while it is
 * open, so a session without a lifetime ends about a lease ({@link Builder#lease(Duration)}, a minute by default) after
 * the last JVM that held it died or closed its provider. Give a session a lifetime to keep it past its creator. The
 * reaper exits after ten minutes without sessions and costs one container list call a second while it runs. The
 * container's keep-alive also ends it {@value #LIFETIME_GRACE_SECONDS} s after the deadline, or after {@value
 * #IDLE_GRACE_SECONDS} s more than the idle timeout without any process running in it: a convenience, which
 * sandboxed code may stop. A sweeper in every provider forgets sessions whose containers are gone (every minute by
 * default); {@link #sweep()} has the reaper do a round at once.
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

    /**
     * How a session's commands are reached when its agent is connected over its direct channel, as reported by {@link
     * dev.sandbox.SessionStatus#processLauncher()}: a socket the agent listens on in a host directory mounted into the
     * container, without the daemon in between. See {@link Builder#directChannel(boolean)}.
     */
    public static final String PROCESS_LAUNCHER_DIRECT = "docker-agent-direct";

    /**
     * How a session's commands are reached when its agent is connected through the daemon (one exec of the agent's
     * relay per connection), as reported by {@link dev.sandbox.SessionStatus#processLauncher()}.
     */
    public static final String PROCESS_LAUNCHER_RELAY = "docker-agent-relay";

    /** How long a session without a lifetime outlives its holder by default: see {@link Builder#lease(Duration)}. */
    public static final Duration DEFAULT_LEASE = Duration.ofMinutes(1);

    /** The shortest lease a provider accepts. */
    public static final Duration MIN_LEASE = Duration.ofSeconds(3);

    /** The daemon's socket on its host, mounted into the reaper when the daemon is reached over TCP. */
    public static final String DEFAULT_DOCKER_SOCKET = "/var/run/docker.sock";

    /** The sweeper's default interval. */
    public static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofMinutes(1);

    /** Seconds the container's keep-alive waits past a session's deadline before it ends the container itself. */
    public static final int LIFETIME_GRACE_SECONDS = 5;

    /**
     * Seconds the container's keep-alive adds to a session's idle timeout: the container sees only processes, while
     * the provider also counts file transfers and other calls as activity.
     */
    public static final int IDLE_GRACE_SECONDS = 10;

    private final DockerSettings defaults;
    private final DockerControl control;
    private final DockerSessions sessions;
    private final DockerSnapshots snapshots;
    private final DockerSweeper sweeper;

    /** How long {@link #close()} waits for the connections to close. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private DockerSandboxProvider(Builder b) {
        this.defaults = Objects.requireNonNull(b.settings, "settings").validate(); // build() checked it
        this.control = DockerControl.connect(b.dockerHost);
        DockerDataPlane data;
        try {
            data = new DockerDataPlane(
                    control.dockerHost(), Math.max(2, Runtime.getRuntime().availableProcessors()));
        } catch (RuntimeException e) {
            control.close();
            throw e;
        }
        DockerReaper reaper = null;
        if (b.reaper) {
            String socket = b.reaperDockerSocket;
            if (socket == null) {
                socket = "unix".equals(control.dockerHost().getScheme())
                        ? control.dockerHost().getPath()
                        : DEFAULT_DOCKER_SOCKET;
            }
            reaper = new DockerReaper(control, data, socket);
        }
        this.sessions = new DockerSessions(control, data, reaper, b.lease, b.directChannel);
        this.snapshots = new DockerSnapshots(control, sessions);
        this.sweeper = new DockerSweeper(control, sessions, b.sweepInterval);
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
        private @Nullable DockerSettings settings;
        private @Nullable String dockerHost;
        private @Nullable Duration sweepInterval = DEFAULT_SWEEP_INTERVAL;
        private boolean reaper = true;
        private @Nullable String reaperDockerSocket;
        private Duration lease = DEFAULT_LEASE;
        private boolean directChannel = true;

        private Builder() {}

        /**
         * Turns direct channels on or off (on by default). With a direct channel the SDK reaches a session's agent
         * through a socket the agent listens on in a per-session directory of this host, mounted into the container,
         * instead of through the daemon's exec stream and a relay process: commands start sooner and bytes move
         * faster. It is used when the daemon is reached over its Unix socket on Linux and actually shares this host's
         * files; otherwise (a daemon over TCP, in a VM or another mount namespace, a runtime such as gVisor that keeps
         * sockets inside the sandbox, a session with a {@linkplain DockerSettings#diskLimit() disk limit}) the
         * session uses the relay. {@link dev.sandbox.SessionStatus#processLauncher()} says which: {@link
         * #PROCESS_LAUNCHER_DIRECT} or {@link #PROCESS_LAUNCHER_RELAY}.
         *
         * <p>The directory is {@code dev-sandbox-channels-<uid>-<daemon>/<session>} under {@code java.io.tmpdir},
         * readable by this user only; code in the sandbox can write in the part mounted into it, and the SDK never
         * follows what it puts there (see the README's "Direct channel").
         *
         * <pre>{@code
         * DockerSandboxProvider relayOnly = DockerSandboxProvider.builder()
         *     .settings(DockerSettings.defaults())
         *     .directChannel(false)
         *     .build();
         * }</pre>
         *
         * @param enabled whether sessions may use a direct channel
         * @return this builder
         */
        public Builder directChannel(boolean enabled) {
            this.directChannel = enabled;
            return this;
        }

        /**
         * Sets how long a session without a lifetime outlives the last provider that held it. Every provider renews
         * the leases of the sessions it created or attached to, a third of a lease apart, until it is closed or its JVM
         * dies; the reaper then removes the session once the lease has run out. The default is {@link
         * #DEFAULT_LEASE}; a session with a lifetime ends at its deadline instead, held or not.
         *
         * @param lease at least {@link #MIN_LEASE}, at most a day
         * @return this builder
         */
        public Builder lease(Duration lease) {
            Objects.requireNonNull(lease, "lease");
            if (lease.compareTo(MIN_LEASE) < 0 || lease.compareTo(Duration.ofDays(1)) > 0) {
                throw new InvalidArgumentException(
                        "lease", "lease must be between " + MIN_LEASE + " and one day, got " + lease);
            }
            this.lease = lease;
            return this;
        }

        /**
         * Turns the reaper on or off (on by default). The reaper is a small container, one per daemon, that removes
         * sessions past their deadline or lease even when no client of this SDK is alive anywhere; see the class
         * description. Without it, a session whose holder died is removed only by another provider's sweeper at the
         * deadline it was created with, or by its container's own keep-alive, which code in the sandbox can defeat;
         * sessions without a lifetime are then never removed.
         *
         * @param enabled whether to start and use the reaper
         * @return this builder
         */
        public Builder reaper(boolean enabled) {
            this.reaper = enabled;
            return this;
        }

        /**
         * Sets the path of the daemon's socket on the daemon's host, which the reaper mounts to reach the daemon. By
         * default the path of a {@code unix://} daemon address, or {@link #DEFAULT_DOCKER_SOCKET} for a TCP one.
         *
         * @param path an absolute path on the daemon's host
         * @return this builder
         */
        public Builder reaperDockerSocket(String path) {
            if (path == null || !path.startsWith("/") || path.indexOf('\0') >= 0 || path.indexOf(':') >= 0) {
                throw new InvalidArgumentException(
                        "reaperDockerSocket", "reaperDockerSocket must be an absolute path, got '" + path + "'");
            }
            this.reaperDockerSocket = path;
            return this;
        }

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
        public Builder sweepInterval(@Nullable Duration sweepInterval) {
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
        return sessions.create(options, settings);
    }

    @Override
    public Mono<SandboxSession> attach(String sessionId) {
        return sessions.attach(sessionId);
    }

    /**
     * {@inheritDoc}
     *
     * <p>On Docker a name is the daemon's: a named session's container is called {@code sandbox-named-<name>} and
     * carries the name as a label, so every provider of the daemon sees the name, and the daemon itself refuses a
     * second container with it (409 Conflict), which is what makes {@link #createOrAttach} atomic across JVMs. The
     * name is free once the container is removed, which {@link SandboxSession#destroy()} waits for.
     */
    @Override
    public Mono<SandboxSession> attachByName(String name) {
        return sessions.attachByName(name);
    }

    @Override
    public Flux<SessionInfo> list(Map<String, String> labels) {
        return sessions.list(labels);
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
        return snapshots.restore(snapshotRef, options, settings);
    }

    /**
     * Commits a session's container to a local image, which outlives the session. The container is paused while
     * it is committed. The image stays on the daemon, taking disk space, until {@link #deleteSnapshot(String)} removes
     * it (from the command line: {@code sandbox snapshot rm REF}).
     *
     * <pre>{@code
     * String ref = docker.snapshot(session.id()).block(Duration.ofMinutes(1));
     * SandboxSession copy = docker.restore(ref, SessionOptions.defaults()).block(Duration.ofSeconds(30));
     * // ... once nothing restores from it any more:
     * docker.deleteSnapshot(ref).block(Duration.ofSeconds(30));
     * }</pre>
     *
     * @param sessionId the session
     * @return the snapshot's reference, {@value #SNAPSHOT_REPOSITORY}{@code :<session id>-<millis>}
     */
    public Mono<String> snapshot(String sessionId) {
        return snapshots.snapshot(sessionId);
    }

    /**
     * Removes a snapshot image. A snapshot that does not exist counts as removed; one that a container still uses is
     * a {@link dev.sandbox.BackendException}.
     *
     * @param snapshotRef the snapshot's reference
     * @return completes when it is gone
     */
    public Mono<Void> deleteSnapshot(String snapshotRef) {
        return snapshots.deleteSnapshot(snapshotRef);
    }

    /**
     * Removes every session container on the daemon that is past its deadline or lease, has stopped, or was created
     * and never started (after five minutes), whichever client made it, through a round of the reaper run now. The
     * reaper also does this every second; without it, this provider's sweeper does it by the deadlines set at create.
     *
     * @return the ids of the sessions removed
     */
    public Mono<List<String>> sweep() {
        return sweeper.sweep();
    }

    /**
     * Releases the provider's connections and stops its sweeper, waiting up to 30 seconds; see {@link #closeAsync()}.
     */
    @Override
    public void close() {
        sweeper.close();
        sessions.close(CLOSE_TIMEOUT);
    }

    /**
     * Releases the provider without blocking the subscribing thread: stops the sweeper and the session timers, stops
     * the commands its handles started, shuts the exec streams' event loops down, and closes the docker-java client
     * (on a bounded-elastic thread). Sessions keep running: attach to them from another provider, or destroy them
     * first; the reaper ends them at their deadline, or when their lease runs out for those without one. Handles from this provider fail with
     * {@link dev.sandbox.SessionClosedException} afterwards, and the provider refuses new work with {@link
     * dev.sandbox.ProviderClosedException}.
     *
     * <pre>{@code
     * docker.closeAsync().subscribe(); // from an event loop: nothing waits on this thread
     * }</pre>
     *
     * @return completes once the connections are closed
     */
    @Override
    public Mono<Void> closeAsync() {
        return Mono.defer(() -> {
            sweeper.close();
            return sessions.closeAsync();
        });
    }
}
