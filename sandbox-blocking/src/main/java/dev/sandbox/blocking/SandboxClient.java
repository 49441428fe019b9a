package dev.sandbox.blocking;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.SessionStatus;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.SandboxPool;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A blocking client for one sandbox session, for code that does not use Reactor. It adapts the reactive {@link
 * SandboxSession}: every call subscribes to the session's operation and waits for it. Functions are grouped in
 * sub-clients: {@link #process()} runs commands, in the foreground or the background, {@link #files()} reads and
 * writes the session's files, and {@link #pty()} runs interactive commands on terminals. The session's lifetime can be
 * changed with {@link #setLifetime(Duration)} and {@link #setIdleTimeout(Duration)}; {@link #ping()} says when and
 * why it ends.
 *
 * <p>An operation has the name it has in the reactive API and means the same there and here: {@code
 * session.exec(options)} is {@code client.process().exec(options)}, {@code session.files().stat(path)} is {@code
 * client.files().stat(path)}, and {@code exit()} waits for the exit on both sides. In the PTY sub-client its name
 * stands for the "pty" of the session's methods: {@code session.attachPty(id)} is {@code client.pty().attach(id)},
 * and {@code session.pty(options)}, which has no verb, is {@code client.pty().open(options)}. Where the reactive
 * method returns a {@code Mono}, the blocking one returns its value once it is there; where it returns a {@code
 * Flux}, the blocking one returns a stream to read, with a bounded buffer.
 *
 * <p>Every waiting call is bounded by a timeout ({@link #DEFAULT_TIMEOUT} unless set with {@link
 * Builder#defaultTimeout(Duration)}, and overridable per call). When it runs out, the operation is cancelled (a
 * command is killed) and {@link dev.sandbox.SandboxTimeoutException} is thrown. A thread interrupted while waiting
 * gets the operation cancelled, its interrupt flag restored, and a {@link SandboxInterruptedException}. Calling a
 * blocking method on a Reactor non-blocking thread (such as {@code Schedulers.parallel()}) fails at once with {@link
 * IllegalStateException}. Errors of the SDK ({@link dev.sandbox.SandboxException} and its subclasses) are thrown as
 * the reactive API signalled them, with Reactor's wrappers removed.
 *
 * <p>What {@link #close()} does depends on how the client was made: {@link #local()} destroys its session and closes
 * the provider it created; {@link #create(SandboxProvider, SessionOptions)} destroys its session and leaves the
 * provider open; {@link #attach(SandboxSession)} only releases the handle. After close every call fails with {@link
 * dev.sandbox.SessionClosedException}. The client is thread-safe.
 *
 * <pre>{@code
 * try (SandboxClient client = SandboxClient.local()) {
 *     System.out.println(client.ping().status());
 *     ExecResult result = client.process().run(ExecOptions.of("python3", "-V"));
 *     System.out.println(result.exitCode() + " " + result.stdout());
 * }
 * }</pre>
 */
public final class SandboxClient implements AutoCloseable {

    /** How long a call waits when no other timeout is configured: 5 minutes. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);

    /** How many events an {@link ExecStream} or {@link ProcessOutput} buffers ahead of its reader unless configured: 256. */
    public static final int DEFAULT_STREAM_PREFETCH = 256;

    /** What close() does with the session. */
    private enum Ending {
        DESTROY,
        RELEASE
    }

    private final ClientCore core;
    private final Ending ending;
    private final @Nullable SandboxProvider ownedProvider;
    private final ProcessClient process;
    private final FileClient files;
    private final PtyClient pty;
    private final PortClient ports;
    private final NetworkClient network;

    private SandboxClient(ClientCore core, Ending ending, @Nullable SandboxProvider ownedProvider) {
        this.core = core;
        this.ending = ending;
        this.ownedProvider = ownedProvider;
        this.process = new ProcessClient(core);
        this.files = new FileClient(core);
        this.pty = new PtyClient(core);
        this.ports = new PortClient(core);
        this.network = new NetworkClient(core);
    }

    /**
     * A client for a fresh session of a new {@link LocalSandboxProvider} (host processes, <b>no isolation</b>), with
     * {@link SessionOptions#defaults()} and the default timeout. {@link #close()} destroys the session and closes the
     * provider.
     *
     * <pre>{@code
     * try (SandboxClient client = SandboxClient.local()) {
     *     client.process().run(ExecOptions.of("uname", "-a"));
     * }
     * }</pre>
     *
     * @return the client
     */
    public static SandboxClient local() {
        return builder().local();
    }

    /**
     * A client for a new session of {@code provider}, with the default timeout. {@link #close()} destroys the
     * session; the provider stays open and remains yours to close.
     *
     * <pre>{@code
     * try (SandboxClient client = SandboxClient.create(provider, SessionOptions.defaults().withEnv("CI", "1"))) {
     *     client.process().run(ExecOptions.of("make", "test"));
     * }
     * }</pre>
     *
     * @param provider where to create the session
     * @param options the session's options
     * @return the client
     */
    public static SandboxClient create(SandboxProvider provider, SessionOptions options) {
        return builder().create(provider, options);
    }

    /**
     * A client for an existing session handle, with the default timeout. {@link #close()} releases the handle only;
     * the session stays with its provider.
     *
     * <pre>{@code
     * SandboxSession session = provider.attach(sessionId).block(Duration.ofSeconds(10));
     * try (SandboxClient client = SandboxClient.attach(session)) {
     *     client.process().run(ExecOptions.of("ls"));
     * }
     * }</pre>
     *
     * @param session the session to use
     * @return the client
     */
    public static SandboxClient attach(SandboxSession session) {
        return builder().attach(session);
    }

    /**
     * A client for an existing session of {@code provider}, found by its id (for example one a previous run created
     * and left running), with the default timeout. {@link #close()} releases the handle only; the session stays with
     * its provider.
     *
     * <pre>{@code
     * try (SandboxClient client = SandboxClient.attach(provider, savedSessionId)) {
     *     client.process().process(savedProcessId).output(0, 0).forEach(System.out::println);
     * }
     * }</pre>
     *
     * @param provider the provider that holds the session
     * @param sessionId the session's id
     * @return the client
     * @throws dev.sandbox.SessionNotFoundException when the provider has no such session
     */
    public static SandboxClient attach(SandboxProvider provider, String sessionId) {
        return builder().attach(provider, sessionId);
    }

    /**
     * A client for the live session of {@code provider} with this name ({@link SandboxProvider#attachByName}), with
     * the default timeout. {@link #close()} releases the handle only; the session stays with its provider.
     *
     * <pre>{@code
     * try (SandboxClient client = SandboxClient.attachByName(provider, "nightly-build")) {
     *     client.process().run(ExecOptions.of("make"));
     * }
     * }</pre>
     *
     * @param provider the provider that holds the session
     * @param name the session's name
     * @return the client
     * @throws dev.sandbox.SessionNotFoundException when no live session has the name
     * @throws dev.sandbox.UnsupportedFeatureException when the provider has no names
     */
    public static SandboxClient attachByName(SandboxProvider provider, String name) {
        return builder().attachByName(provider, name);
    }

    /**
     * A client for the session of {@code provider} with this name, created with {@code options} when there is none
     * ({@link SandboxProvider#createOrAttach}): callers racing on one name share one session. Because the session is
     * shared, {@link #close()} releases the handle only, whether this caller created it or not; end it with {@code
     * provider.attachByName(name).flatMap(SandboxSession::destroy)}.
     *
     * <pre>{@code
     * try (SandboxClient client = SandboxClient.createOrAttach(provider, "team-cache", SessionOptions.defaults())) {
     *     client.files().write("/tmp/seen", data);
     * }
     * }</pre>
     *
     * @param provider where the session is found or created
     * @param name the session's name
     * @param options options for the session when it is created
     * @return the client
     * @throws dev.sandbox.SessionNameInUseException (retryable) when an ending session held the name too long
     * @throws dev.sandbox.UnsupportedFeatureException when the provider has no names
     */
    public static SandboxClient createOrAttach(SandboxProvider provider, String name, SessionOptions options) {
        return builder().createOrAttach(provider, name, options);
    }

    /**
     * A client for a session taken from a pool, customised by the claim; {@link #close()} gives the session back to the
     * pool, which destroys it and makes a fresh one. Waits at most for the default timeout, and the pool's acquire
     * timeout.
     *
     * <pre>{@code
     * try (SandboxClient client = SandboxClient.acquire(pool, Claim.defaults().withEnv("TENANT", "acme"))) {
     *     client.process().run(ExecOptions.shell("echo $TENANT"));
     * }
     * }</pre>
     *
     * @param pool the pool
     * @param claim what to make of the session
     * @return the client
     * @throws dev.sandbox.pool.PoolAtCapacityException when the pool had no session for this caller in time
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public static SandboxClient acquire(SandboxPool pool, Claim claim) {
        return builder().acquire(pool, claim);
    }

    /**
     * A builder for clients with settings other than the defaults.
     *
     * <pre>{@code
     * SandboxClient client = SandboxClient.builder().defaultTimeout(Duration.ofSeconds(30)).local();
     * }</pre>
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The sub-client that runs commands.
     *
     * <pre>{@code
     * ExecResult result = client.process().run(ExecOptions.of("id", "-u"));
     * }</pre>
     *
     * @return the process sub-client
     */
    public ProcessClient process() {
        return process;
    }

    /**
     * The sub-client for the session's files; the blocking form of {@link SandboxSession#files()}.
     *
     * <pre>{@code
     * client.files().write("input.txt", data);
     * byte[] out = client.files().readAllBytes("output.txt", 1 << 20);
     * }</pre>
     *
     * @return the file sub-client
     */
    public FileClient files() {
        return files;
    }

    /**
     * The sub-client for pseudo-terminals: open one, attach to one by id, then type into it, read its screen, resize
     * and signal it through the returned handle.
     *
     * <pre>{@code
     * PtySessionHandle shell = client.pty().open(PtyOptions.shell());
     * shell.write("exit 7\n");
     * int code = shell.exit(Duration.ofSeconds(10)).code();
     * }</pre>
     *
     * @return the PTY sub-client
     */
    public PtyClient pty() {
        return pty;
    }

    /**
     * The sub-client for port forwards to servers in the session; the blocking form of {@link
     * SandboxSession#ports()}.
     *
     * <pre>{@code
     * try (PortClient.Forward web = client.ports().forward(8080)) {
     *     System.out.println("http://" + web.hostString() + "/");
     * }
     * }</pre>
     *
     * @return the port sub-client
     */
    public PortClient ports() {
        return ports;
    }

    /**
     * The sub-client for the session's network: its egress policy and its proxy's decisions; the blocking form of
     * {@link SandboxSession#network()}.
     *
     * <pre>{@code
     * client.network().update(NetworkPolicy.allowlist(EgressRule.domain("pypi.org").ports(443)));
     * }</pre>
     *
     * @return the network sub-client
     */
    public NetworkClient network() {
        return network;
    }

    /**
     * Sets the session to end {@code fromNow} from now, replacing its current lifetime (sessions start with {@link
     * SessionOptions#DEFAULT_LIFETIME} unless created with another). Use it to extend a session that is still needed.
     *
     * <pre>{@code
     * client.setLifetime(Duration.ofHours(1));
     * Instant end = client.ping().expiresAt();
     * }</pre>
     *
     * @param fromNow a positive duration
     * @throws dev.sandbox.InvalidArgumentException when it is not positive
     * @throws dev.sandbox.SessionClosedException when the session has ended; its reason says why
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void setLifetime(Duration fromNow) {
        Blocking.checkCanBlock("SandboxClient.setLifetime");
        Blocking.requirePositive(fromNow, "lifetime");
        core.ensureOpen();
        Blocking.await(
                core.session.setLifetime(fromNow),
                core.defaultTimeout,
                "SandboxClient.setLifetime",
                "lifetime change of session " + sessionId());
    }

    /**
     * Adds labels to the running session, replacing the values of keys it already has: {@link #labels()}, and the
     * provider's {@code list} and {@code attach}, show them from then on. As {@link SandboxSession#addLabels}.
     *
     * <pre>{@code
     * client.addLabels(Map.of("tenant", "acme"));
     * }</pre>
     *
     * @param labels the labels to add, not empty
     * @throws dev.sandbox.InvalidArgumentException naming {@code labels} for an empty map, an empty key, a missing
     *     value or a key the provider keeps for itself
     * @throws dev.sandbox.UnsupportedFeatureException when the provider cannot change labels after create
     * @throws dev.sandbox.SessionClosedException when the session has ended; its reason says why
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void addLabels(Map<String, String> labels) {
        Blocking.checkCanBlock("SandboxClient.addLabels");
        core.ensureOpen();
        Blocking.await(
                core.session.addLabels(labels),
                core.defaultTimeout,
                "SandboxClient.addLabels",
                "label change of session " + sessionId());
    }

    /**
     * Pauses the session: its processes are frozen with their memory kept and its idle clock stops, until {@link
     * #resume()} (or, with auto-resume, the next call). As {@link SandboxSession#pause()}; idempotent.
     *
     * <pre>{@code
     * client.pause();
     * client.ping().status(); // "paused"
     * }</pre>
     *
     * @throws dev.sandbox.UnsupportedFeatureException when the provider cannot pause a session
     * @throws dev.sandbox.SessionClosedException when the session has ended; its reason says why
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void pause() {
        Blocking.checkCanBlock("SandboxClient.pause");
        core.ensureOpen();
        Blocking.await(
                core.session.pause(), core.defaultTimeout, "SandboxClient.pause", "pause of session " + sessionId());
    }

    /**
     * Resumes a paused session: its processes run on where they stopped and its idle clock starts again. As {@link
     * SandboxSession#resume()}; idempotent.
     *
     * <pre>{@code
     * client.resume();
     * }</pre>
     *
     * @throws dev.sandbox.UnsupportedFeatureException when the provider cannot pause a session
     * @throws dev.sandbox.SessionClosedException when the session has ended; its reason says why
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void resume() {
        Blocking.checkCanBlock("SandboxClient.resume");
        core.ensureOpen();
        Blocking.await(
                core.session.resume(), core.defaultTimeout, "SandboxClient.resume", "resume of session " + sessionId());
    }

    /**
     * Sets (or replaces) the session's idle timeout: the session ends after this long without activity (no command
     * started or running, no file operation), counted from its last activity.
     *
     * <pre>{@code
     * client.setIdleTimeout(Duration.ofMinutes(10));
     * }</pre>
     *
     * @param idleTimeout a positive duration
     * @throws dev.sandbox.InvalidArgumentException when it is not positive
     * @throws dev.sandbox.SessionClosedException when the session has ended; its reason says why
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void setIdleTimeout(Duration idleTimeout) {
        Blocking.checkCanBlock("SandboxClient.setIdleTimeout");
        Blocking.requirePositive(idleTimeout, "idleTimeout");
        core.ensureOpen();
        Blocking.await(
                core.session.setIdleTimeout(idleTimeout),
                core.defaultTimeout,
                "SandboxClient.setIdleTimeout",
                "idle timeout change of session " + sessionId());
    }

    /**
     * Checks that the session is usable and reports its activity, waiting at most for the default timeout.
     *
     * <pre>{@code
     * SessionStatus status = client.ping();
     * System.out.println(status.status() + ", " + status.execsRunning() + " commands running, ends at "
     *         + status.expiresAt());
     * }</pre>
     *
     * @return the session's status, including when it will end ({@link SessionStatus#expiresAt()}, {@link
     *     SessionStatus#idleTimeout()})
     * @throws dev.sandbox.SessionClosedException after {@link #close()}
     * @throws dev.sandbox.SandboxTimeoutException when the session did not answer in time
     * @throws SandboxInterruptedException when the thread was interrupted
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public SessionStatus ping() {
        return ping(core.defaultTimeout);
    }

    /**
     * Checks that the session is usable and reports its activity, waiting at most for {@code timeout}.
     *
     * <pre>{@code
     * SessionStatus status = client.ping(Duration.ofSeconds(2));
     * }</pre>
     *
     * @param timeout how long to wait; positive
     * @return the session's status
     * @throws dev.sandbox.SessionClosedException after {@link #close()}
     * @throws dev.sandbox.SandboxTimeoutException when the session did not answer in time
     * @throws SandboxInterruptedException when the thread was interrupted
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public SessionStatus ping(Duration timeout) {
        Blocking.checkCanBlock("SandboxClient.ping");
        Blocking.requirePositive(timeout, "timeout");
        core.ensureOpen();
        return Blocking.awaitValue(
                core.session.ping(), timeout, "SandboxClient.ping", "ping of session " + sessionId());
    }

    /**
     * Samples the session's resource use, the blocking form of {@link SandboxSession#stats(Duration)}: a first
     * sample at once, then one per interval, read by iterating the returned stream.
     *
     * <pre>{@code
     * try (SessionStatsStream stats = client.stats(Duration.ofSeconds(2))) {
     *     SessionStats first = stats.iterator().next();
     *     System.out.println(first.pids() + " processes");
     * }
     * }</pre>
     *
     * @param interval the time between samples, 100 ms to 24 h
     * @return the samples; close it to stop sampling
     * @throws dev.sandbox.InvalidArgumentException naming {@code interval} when it is missing or out of range
     * @throws dev.sandbox.SessionClosedException after {@link #close()}
     */
    public SessionStatsStream stats(Duration interval) {
        dev.sandbox.SessionStats.checkInterval(interval);
        core.ensureOpen();
        return SessionStatsStream.open(
                core.session.stats(interval), interval.plus(core.defaultTimeout), "stats of session " + sessionId());
    }

    /**
     * The id of the client's session, for example to attach to it again through its provider.
     *
     * <pre>{@code
     * log.info("sandbox session {}", client.sessionId());
     * }</pre>
     *
     * @return the session id
     */
    public String sessionId() {
        return core.session.id();
    }

    /**
     * The session's name, as {@link SandboxSession#name()}.
     *
     * <pre>{@code
     * String name = client.name().orElse("(unnamed)");
     * }</pre>
     *
     * @return the name, or empty for an unnamed session
     */
    public java.util.Optional<String> name() {
        return core.session.name();
    }

    /**
     * The session's labels, those {@link #addLabels added} since its create included, as {@link
     * SandboxSession#labels()}.
     *
     * <pre>{@code
     * String tenant = client.labels().get("tenant");
     * }</pre>
     *
     * @return an unmodifiable map
     */
    public Map<String, String> labels() {
        return core.session.labels();
    }

    /**
     * The timeout calls use when none is passed.
     *
     * <pre>{@code
     * Duration limit = client.defaultTimeout();
     * }</pre>
     *
     * @return the default timeout
     */
    public Duration defaultTimeout() {
        return core.defaultTimeout;
    }

    /**
     * Ends the client: destroys the session (for clients made by {@link #local()} and {@link #create}, killing its
     * commands) or releases the handle (for {@link #attach}), then closes the provider if the client created it.
     * This closes the client, which owns the session it created: for an attached client it is {@link
     * SandboxSession#close()}, for the others {@link SandboxSession#destroy()}. Waits at most for the default timeout. Open {@link ExecStream}s see their commands end. Idempotent: only the
     * first call does anything.
     *
     * <pre>{@code
     * SandboxClient client = SandboxClient.local();
     * try {
     *     client.process().run(ExecOptions.of("true"));
     * } finally {
     *     client.close();
     * }
     * }</pre>
     *
     * @throws dev.sandbox.SandboxException when the session could not be destroyed (the provider is closed anyway)
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    @Override
    public void close() {
        Blocking.checkCanBlock("SandboxClient.close");
        if (!core.closed.compareAndSet(false, true)) {
            return;
        }
        try {
            if (ending == Ending.DESTROY) {
                Blocking.await(
                        core.session.destroy(),
                        core.defaultTimeout,
                        "SandboxClient.close",
                        "destroy of session " + sessionId());
            } else {
                Blocking.await(
                        core.session.close(),
                        core.defaultTimeout,
                        "SandboxClient.close",
                        "close of session handle " + sessionId());
            }
        } finally {
            if (ownedProvider != null) {
                ownedProvider.close();
            }
        }
    }

    @Override
    public String toString() {
        return "SandboxClient{session=" + sessionId() + ", defaultTimeout=" + core.defaultTimeout + ", closed="
                + core.closed.get() + "}";
    }

    /**
     * Settings for a {@link SandboxClient}, ending in the call that makes the client. Builders are not thread-safe
     * and can make several clients.
     *
     * <pre>{@code
     * SandboxClient client = SandboxClient.builder()
     *     .defaultTimeout(Duration.ofSeconds(30))
     *     .streamPrefetch(64)
     *     .create(provider, SessionOptions.defaults());
     * }</pre>
     */
    public static final class Builder {
        private Duration defaultTimeout = DEFAULT_TIMEOUT;
        private int streamPrefetch = DEFAULT_STREAM_PREFETCH;

        private Builder() {}

        /**
         * Sets how long calls wait when no timeout is passed to them ({@link #DEFAULT_TIMEOUT} unless set). For a
         * stream ({@link ExecStream}, {@link ProcessOutput}, {@link FileWatch}, {@link PtyOutput}) it bounds each wait
         * for the next element. A very long duration, such as {@code Duration.ofDays(365)}, waits practically without
         * limit.
         *
         * <pre>{@code
         * SandboxClient.builder().defaultTimeout(Duration.ofSeconds(30)).local();
         * }</pre>
         *
         * @param timeout a positive duration
         * @return this builder
         * @throws InvalidArgumentException when the timeout is zero or negative
         */
        public Builder defaultTimeout(Duration timeout) {
            this.defaultTimeout = Blocking.requirePositive(timeout, "defaultTimeout");
            return this;
        }

        /**
         * Sets how many events an {@link ExecStream} or a {@link ProcessOutput} buffers ahead of its reader ({@link
         * #DEFAULT_STREAM_PREFETCH} unless set). More keeps a fast command busier while the reader works; fewer holds
         * less memory.
         *
         * <pre>{@code
         * SandboxClient.builder().streamPrefetch(32).local();
         * }</pre>
         *
         * @param prefetch at least 1
         * @return this builder
         * @throws InvalidArgumentException when the prefetch is less than 1
         */
        public Builder streamPrefetch(int prefetch) {
            if (prefetch < 1) {
                throw new InvalidArgumentException(
                        "streamPrefetch", "streamPrefetch must be at least 1, got " + prefetch);
            }
            this.streamPrefetch = prefetch;
            return this;
        }

        /**
         * Makes a client for a fresh session of a new {@link LocalSandboxProvider} with default options; see {@link
         * SandboxClient#local()}.
         *
         * <pre>{@code
         * SandboxClient client = SandboxClient.builder().defaultTimeout(Duration.ofMinutes(1)).local();
         * }</pre>
         *
         * @return the client
         */
        public SandboxClient local() {
            return local(SessionOptions.defaults());
        }

        /**
         * Makes a client for a fresh session of a new {@link LocalSandboxProvider}; {@link SandboxClient#close()}
         * destroys the session and closes the provider.
         *
         * <pre>{@code
         * SandboxClient client = SandboxClient.builder().local(SessionOptions.defaults().withWorkdir("/srv/job"));
         * }</pre>
         *
         * @param options the session's options
         * @return the client
         * @throws dev.sandbox.SandboxException when the session cannot be created (the provider is closed again)
         */
        public SandboxClient local(SessionOptions options) {
            Objects.requireNonNull(options, "options");
            Blocking.checkCanBlock("SandboxClient.local");
            LocalSandboxProvider provider = LocalSandboxProvider.create();
            try {
                return new SandboxClient(newSession(provider, options), Ending.DESTROY, provider);
            } catch (RuntimeException | Error e) {
                provider.close();
                throw e;
            }
        }

        /**
         * Makes a client for a new session of {@code provider}; {@link SandboxClient#close()} destroys the session
         * and leaves the provider open.
         *
         * <pre>{@code
         * SandboxClient client = SandboxClient.builder().create(provider, SessionOptions.defaults());
         * }</pre>
         *
         * @param provider where to create the session
         * @param options the session's options
         * @return the client
         * @throws dev.sandbox.SandboxException when the session cannot be created
         */
        public SandboxClient create(SandboxProvider provider, SessionOptions options) {
            Objects.requireNonNull(provider, "provider");
            Objects.requireNonNull(options, "options");
            Blocking.checkCanBlock("SandboxClient.create");
            return new SandboxClient(newSession(provider, options), Ending.DESTROY, null);
        }

        /**
         * Makes a client for an existing session handle; {@link SandboxClient#close()} releases the handle only.
         *
         * <pre>{@code
         * SandboxClient client = SandboxClient.builder().defaultTimeout(Duration.ofSeconds(10)).attach(session);
         * }</pre>
         *
         * @param session the session to use
         * @return the client
         */
        public SandboxClient attach(SandboxSession session) {
            Objects.requireNonNull(session, "session");
            return new SandboxClient(new ClientCore(session, defaultTimeout, streamPrefetch), Ending.RELEASE, null);
        }

        /**
         * Makes a client for an existing session of {@code provider}, found by its id; {@link SandboxClient#close()}
         * releases the handle only.
         *
         * <pre>{@code
         * SandboxClient client = SandboxClient.builder().defaultTimeout(Duration.ofHours(1)).attach(provider, id);
         * }</pre>
         *
         * @param provider the provider that holds the session
         * @param sessionId the session's id
         * @return the client
         * @throws dev.sandbox.SessionNotFoundException when the provider has no such session
         * @throws IllegalStateException when called on a Reactor non-blocking thread
         */
        public SandboxClient attach(SandboxProvider provider, String sessionId) {
            Objects.requireNonNull(provider, "provider");
            Objects.requireNonNull(sessionId, "sessionId");
            Blocking.checkCanBlock("SandboxClient.attach");
            SandboxSession session = Blocking.awaitValue(
                    provider.attach(sessionId),
                    defaultTimeout,
                    "SandboxClient.attach",
                    "attach to " + provider.name() + " session " + sessionId);
            return attach(session);
        }

        /**
         * Makes a client for the live session with this name; {@link SandboxClient#close()} releases the handle only.
         *
         * <pre>{@code
         * SandboxClient client = SandboxClient.builder().defaultTimeout(Duration.ofMinutes(5)).attachByName(provider, "ci");
         * }</pre>
         *
         * @param provider the provider that holds the session
         * @param name the session's name
         * @return the client
         * @throws dev.sandbox.SessionNotFoundException when no live session has the name
         * @throws IllegalStateException when called on a Reactor non-blocking thread
         */
        public SandboxClient attachByName(SandboxProvider provider, String name) {
            Objects.requireNonNull(provider, "provider");
            Objects.requireNonNull(name, "name");
            Blocking.checkCanBlock("SandboxClient.attachByName");
            return attach(Blocking.awaitValue(
                    provider.attachByName(name),
                    defaultTimeout,
                    "SandboxClient.attachByName",
                    "attach to " + provider.name() + " session named " + name));
        }

        /**
         * Makes a client for the session with this name, created when there is none; {@link SandboxClient#close()}
         * releases the handle only, the session being shared by name.
         *
         * <pre>{@code
         * SandboxClient client = SandboxClient.builder().createOrAttach(provider, "ci", SessionOptions.defaults());
         * }</pre>
         *
         * @param provider where the session is found or created
         * @param name the session's name
         * @param options options for the session when it is created
         * @return the client
         * @throws IllegalStateException when called on a Reactor non-blocking thread
         */
        public SandboxClient createOrAttach(SandboxProvider provider, String name, SessionOptions options) {
            Objects.requireNonNull(provider, "provider");
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(options, "options");
            Blocking.checkCanBlock("SandboxClient.createOrAttach");
            // the wait for an ending holder is bounded by the provider; the default timeout bounds the whole call
            return attach(Blocking.awaitValue(
                    provider.createOrAttach(name, options),
                    defaultTimeout,
                    "SandboxClient.createOrAttach",
                    "create or attach " + provider.name() + " session named " + name));
        }

        /**
         * Makes a client for a session taken from a pool; {@link SandboxClient#close()} gives it back, destroyed.
         *
         * <pre>{@code
         * SandboxClient client = SandboxClient.builder().defaultTimeout(Duration.ofSeconds(30)).acquire(pool, claim);
         * }</pre>
         *
         * @param pool the pool
         * @param claim what to make of the session
         * @return the client
         * @throws dev.sandbox.pool.PoolAtCapacityException when the pool had no session for this caller in time
         * @throws IllegalStateException when called on a Reactor non-blocking thread
         */
        public SandboxClient acquire(SandboxPool pool, Claim claim) {
            Objects.requireNonNull(pool, "pool");
            Objects.requireNonNull(claim, "claim");
            Blocking.checkCanBlock("SandboxClient.acquire");
            SandboxSession session = Blocking.awaitValue(
                    pool.acquire(claim), defaultTimeout, "SandboxClient.acquire", "acquire from a sandbox pool");
            // a pooled session's close gives it back to the pool, which destroys it
            return new SandboxClient(new ClientCore(session, defaultTimeout, streamPrefetch), Ending.RELEASE, null);
        }

        private ClientCore newSession(SandboxProvider provider, SessionOptions options) {
            SandboxSession session = Blocking.awaitValue(
                    provider.create(options),
                    defaultTimeout,
                    "SandboxClient.create",
                    "creation of a " + provider.name() + " session");
            return new ClientCore(session, defaultTimeout, streamPrefetch);
        }
    }
}
