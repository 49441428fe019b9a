package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.ProviderClosedException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * The application's provider as the starter hands it out: a thin decorator of another {@link SandboxProvider} that
 * knows which sessions the application created through it, applies the configured session defaults, and destroys
 * those sessions (and only those) when it is closed, before closing the provider it wraps.
 *
 * <p><b>How it knows its sessions.</b> Every session created through {@link #create} or {@link #restore} gets the label
 * {@value #OWNER_LABEL} with a value unique to this instance ({@link #owner()}). Shutdown lists the sessions with that
 * label, through the wrapped provider, and destroys them, waiting at most the shutdown timeout; nothing is kept in
 * memory per session. A session made by another client of the same Docker daemon or sandbox server, or by another
 * provider instance of this JVM, lacks the label and is left alone. So is a session created directly on the wrapped
 * provider, unless its options went through {@link #tracked(SessionOptions)} first, which is how a provider-specific
 * call (Docker's {@code create(options, settings)}) takes part:
 *
 * <pre>{@code
 * DockerSandboxProvider docker = (DockerSandboxProvider) managed.delegate();
 * SandboxSession session = docker.create(managed.tracked(options), settings).block(Duration.ofSeconds(60));
 * }</pre>
 *
 * <p>In a Spring application the context closes this provider after the beans that use it (and after the web server's
 * graceful shutdown), so requests still running are not cut short by it. An application that defines its own {@code
 * SandboxProvider} bean gets no such shutdown unless it wraps its provider the same way:
 *
 * <pre>{@code
 * @Bean
 * SandboxProvider sandboxProvider() {
 *     return ManagedSandboxProvider.builder(LocalSandboxProvider.create())
 *             .shutdownTimeout(Duration.ofSeconds(10))
 *             .build();
 * }
 * }</pre>
 */
public final class ManagedSandboxProvider implements SandboxProvider {
    private static final Logger LOG = LoggerFactory.getLogger(ManagedSandboxProvider.class);

    /** The label that marks the sessions created through an instance; its value is {@link #owner()}. */
    public static final String OWNER_LABEL = "spring.sandbox.owner";

    /** How many sessions shutdown destroys at once. */
    private static final int DESTROY_CONCURRENCY = 8;

    private final SandboxProvider delegate;
    private final String owner = UUID.randomUUID().toString();
    private final @Nullable Duration lifetime;
    private final @Nullable Duration idleTimeout;
    private final Map<String, String> labels;
    private final @Nullable NetworkPolicy network;
    private final Duration shutdownTimeout;
    private final AtomicBoolean closing = new AtomicBoolean();
    /** Creates and restores under way on the wrapped provider; shutdown waits for them before it lists. */
    private final AtomicInteger creating = new AtomicInteger();
    /** Emitted once closing has begun and no create is under way. */
    private final Sinks.Empty<Void> settled = Sinks.empty();

    private final Mono<Void> release;

    private ManagedSandboxProvider(Builder b) {
        this.delegate = b.delegate;
        this.lifetime = b.lifetime;
        this.idleTimeout = b.idleTimeout;
        this.labels = Map.copyOf(b.labels);
        this.network = b.network;
        this.shutdownTimeout = b.shutdownTimeout;
        // a create already under way when closing begins ends before the listing, so its session is destroyed too
        this.release = Mono.defer(() -> creationsSettled()
                        .then(destroySessions())
                        .timeout(shutdownTimeout)
                        .onErrorResume(e -> {
                            LOG.warn(
                                    "the sessions this application created on provider {} were not all destroyed: {}",
                                    delegate.name(),
                                    e instanceof TimeoutException
                                            ? "the shutdown timeout of " + shutdownTimeout + " ran out"
                                            : e.toString());
                            return Mono.empty();
                        })
                        .then(delegate.closeAsync()))
                .cache();
    }

    /**
     * A builder for a managed provider over {@code delegate}.
     *
     * <pre>{@code
     * ManagedSandboxProvider provider = ManagedSandboxProvider.builder(LocalSandboxProvider.create())
     *         .lifetime(Duration.ofMinutes(15))
     *         .build();
     * }</pre>
     *
     * @param delegate the provider that runs the sessions; closed when the managed provider is
     * @return a new builder
     */
    public static Builder builder(SandboxProvider delegate) {
        return new Builder(Objects.requireNonNull(delegate, "delegate"));
    }

    /**
     * The provider this one wraps, for its provider-specific operations (such as Docker's snapshots).
     *
     * @return the wrapped provider
     */
    public SandboxProvider delegate() {
        return delegate;
    }

    /**
     * The value of {@value #OWNER_LABEL} on the sessions created through this instance.
     *
     * @return a random id, fixed for the instance's life
     */
    public String owner() {
        return owner;
    }

    /**
     * How long closing waits for this instance's sessions to be destroyed.
     *
     * @return the shutdown timeout
     */
    public Duration shutdownTimeout() {
        return shutdownTimeout;
    }

    /**
     * The options a session created through this instance gets: {@code options} with the configured defaults where it
     * leaves them unset (a lifetime when it keeps {@link SessionOptions#DEFAULT_LIFETIME} without having chosen it, an
     * idle timeout when it has none, labels whose keys it lacks, the network policy when it sets none) and the {@value
     * #OWNER_LABEL} label.
     *
     * @param options the caller's options
     * @return the options to create the session with
     */
    public SessionOptions tracked(SessionOptions options) {
        SessionOptions out = Objects.requireNonNull(options, "options");
        if (lifetime != null && !out.lifetimeChosen() && out.lifetime().isPresent()) {
            out = out.withLifetime(lifetime);
        }
        if (idleTimeout != null && out.idleTimeout().isEmpty()) {
            out = out.withIdleTimeout(idleTimeout);
        }
        for (Map.Entry<String, String> label : labels.entrySet()) {
            if (!out.labels().containsKey(label.getKey())) {
                out = out.withLabel(label.getKey(), label.getValue());
            }
        }
        if (network != null && out.network().mode() == NetworkPolicy.Mode.NONE) {
            out = out.withNetwork(network);
        }
        return out.withLabel(OWNER_LABEL, owner);
    }

    @Override
    public String name() {
        return delegate.name();
    }

    /**
     * Creates a session on the wrapped provider with {@link #tracked(SessionOptions) tracked} options.
     *
     * @param options workdir, environment, secrets and labels
     * @return the new session, or {@link ProviderClosedException} once closing has begun
     */
    @Override
    public Mono<SandboxSession> create(SessionOptions options) {
        return creation(() -> delegate.create(tracked(options)));
    }

    /**
     * Restores a snapshot on the wrapped provider with {@link #tracked(SessionOptions) tracked} options.
     *
     * @param snapshotRef the snapshot's reference
     * @param options options for the new session
     * @return the new session
     */
    @Override
    public Mono<SandboxSession> restore(String snapshotRef, SessionOptions options) {
        return creation(() -> delegate.restore(snapshotRef, tracked(options)));
    }

    /**
     * Runs a create or restore that closing waits for. One that finishes after closing began destroys its session
     * and fails with {@link ProviderClosedException}, so no session outlives the shutdown.
     */
    private Mono<SandboxSession> creation(Supplier<Mono<SandboxSession>> create) {
        return Mono.defer(() -> {
            if (closing.get()) {
                return Mono.error(new ProviderClosedException(delegate.name()));
            }
            creating.incrementAndGet();
            if (closing.get()) {
                created();
                return Mono.error(new ProviderClosedException(delegate.name()));
            }
            return create.get()
                    .flatMap(session -> closing.get()
                            ? session.destroy()
                                    .onErrorResume(e -> Mono.empty())
                                    .then(Mono.<SandboxSession>error(new ProviderClosedException(delegate.name())))
                            : Mono.just(session))
                    .doFinally(signal -> created());
        });
    }

    private void created() {
        if (creating.decrementAndGet() == 0 && closing.get()) {
            settled.tryEmitEmpty();
        }
    }

    /** Completes once no create is under way; only after closing began (no new one starts then). */
    private Mono<Void> creationsSettled() {
        return Mono.defer(() -> creating.get() == 0 ? Mono.<Void>empty() : settled.asMono());
    }

    @Override
    public Mono<SandboxSession> attach(String sessionId) {
        return delegate.attach(sessionId);
    }

    /**
     * {@inheritDoc}
     *
     * <p>A session found by name was not created through this instance: its shutdown leaves it, as after {@link
     * #attach}. {@link #createOrAttach} creates through {@link #create}, so a session it creates is destroyed at
     * shutdown like any other this instance made.
     */
    @Override
    public Mono<SandboxSession> attachByName(String name) {
        return delegate.attachByName(name);
    }

    @Override
    public Flux<SessionInfo> list(Map<String, String> labels) {
        return delegate.list(labels);
    }

    /**
     * The sessions created through this instance that still exist.
     *
     * @return their descriptions, as the wrapped provider lists them
     */
    public Flux<SessionInfo> sessions() {
        return delegate.list(Map.of(OWNER_LABEL, owner));
    }

    /**
     * Destroys every session created through this instance that still exists; one that is already gone is skipped,
     * and one that cannot be destroyed is logged while the others go on. It does not wait by itself: bound it with a
     * timeout.
     *
     * @return completes when each of them was destroyed or given up on
     */
    public Mono<Void> destroySessions() {
        return sessions()
                .flatMap(
                        info -> delegate.attach(info.id())
                                .flatMap(SandboxSession::destroy)
                                .onErrorResume(SessionNotFoundException.class, e -> Mono.empty())
                                .onErrorResume(e -> {
                                    LOG.warn("could not destroy session {}: {}", info.id(), e.toString());
                                    return Mono.empty();
                                }),
                        DESTROY_CONCURRENCY)
                .then();
    }

    /**
     * Destroys the sessions created through this instance, waiting at most the shutdown timeout, then closes the
     * wrapped provider. From the start, {@link #create} fails with {@link ProviderClosedException}; a create already
     * under way is waited for, and its session destroyed with the others. Idempotent; on a
     * Reactor non-blocking thread it starts the release and returns at once, as {@link SandboxProvider#close()} says.
     */
    @Override
    public void close() {
        Mono<Void> closed = closeAsync();
        if (Schedulers.isInNonBlockingThread()) {
            closed.subscribe(null, e -> LOG.warn("provider {} did not close cleanly: {}", name(), e.toString()));
            return;
        }
        // the destroy step is bounded by the shutdown timeout and each provider bounds its own close
        closed.block(shutdownTimeout.plus(Duration.ofMinutes(1)));
    }

    /**
     * The release of {@link #close()} without blocking: completes once the sessions were destroyed (or the shutdown
     * timeout ran out) and the wrapped provider is closed. Idempotent.
     *
     * @return completes when released
     */
    @Override
    public Mono<Void> closeAsync() {
        return Mono.defer(() -> {
            closing.set(true);
            return release;
        });
    }

    @Override
    public String toString() {
        return "ManagedSandboxProvider{" + delegate + ", owner=" + owner + "}";
    }

    /**
     * Configures a {@link ManagedSandboxProvider}.
     *
     * <pre>{@code
     * ManagedSandboxProvider provider = ManagedSandboxProvider.builder(docker)
     *         .idleTimeout(Duration.ofMinutes(2))
     *         .label("team", "search")
     *         .shutdownTimeout(Duration.ofSeconds(20))
     *         .build();
     * }</pre>
     */
    public static final class Builder {
        private final SandboxProvider delegate;
        private @Nullable Duration lifetime;
        private @Nullable Duration idleTimeout;
        private final Map<String, String> labels = new LinkedHashMap<>();
        private Duration shutdownTimeout = Duration.ofSeconds(30);
        private @Nullable NetworkPolicy network;

        private Builder(SandboxProvider delegate) {
            this.delegate = delegate;
        }

        /**
         * Sets the lifetime of sessions whose options keep the SDK's default one.
         *
         * @param lifetime a positive duration, or {@code null} for the SDK's default
         * @return this builder
         * @throws InvalidArgumentException when it is not positive
         */
        public Builder lifetime(@Nullable Duration lifetime) {
            this.lifetime = positiveOrNull("lifetime", lifetime);
            return this;
        }

        /**
         * Sets the idle timeout of sessions whose options set none.
         *
         * @param idleTimeout a positive duration, or {@code null} for none
         * @return this builder
         * @throws InvalidArgumentException when it is not positive
         */
        public Builder idleTimeout(@Nullable Duration idleTimeout) {
            this.idleTimeout = positiveOrNull("idleTimeout", idleTimeout);
            return this;
        }

        /**
         * Adds a label to every session whose options lack its key.
         *
         * @param key a non-empty key, not {@value #OWNER_LABEL}
         * @param value the value
         * @return this builder
         * @throws InvalidArgumentException when the key is empty or the owner label's
         */
        public Builder label(String key, String value) {
            if (key == null || key.isEmpty() || key.equals(OWNER_LABEL)) {
                throw new InvalidArgumentException(
                        "labels",
                        "a session label key must be non-empty and not " + OWNER_LABEL + ", got '" + key + "'");
            }
            labels.put(key, Objects.requireNonNull(value, key));
            return this;
        }

        /**
         * Sets the network policy of sessions whose options set none.
         *
         * @param network the policy, or {@code null} for none (no egress)
         * @return this builder
         */
        public Builder network(@Nullable NetworkPolicy network) {
            this.network = network;
            return this;
        }

        /**
         * Sets how long closing waits for the sessions to be destroyed (30 seconds unless set).
         *
         * @param shutdownTimeout a positive duration
         * @return this builder
         * @throws InvalidArgumentException when it is not positive
         */
        public Builder shutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout =
                    Objects.requireNonNull(positiveOrNull("shutdownTimeout", shutdownTimeout), "shutdownTimeout");
            return this;
        }

        /**
         * Builds the provider.
         *
         * @return the managed provider
         */
        public ManagedSandboxProvider build() {
            return new ManagedSandboxProvider(this);
        }

        private static @Nullable Duration positiveOrNull(String field, @Nullable Duration value) {
            if (value != null && (value.isZero() || value.isNegative())) {
                throw new InvalidArgumentException(field, field + " must be positive, got " + value);
            }
            return value;
        }
    }
}
