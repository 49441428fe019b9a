package dev.sandbox.server.implementation;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.SandboxPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The sessions the server serves: the handles it holds (those it created, which it owns and destroys on shutdown,
 * and those it attached to by id), and the ids of sessions that ended with why, so that a later call learns that
 * the session is closed and why rather than that it never existed.
 */
public final class Sessions {
    private static final Logger LOG = LoggerFactory.getLogger(Sessions.class);
    private static final int MAX_ENDED_REMEMBERED = 4096;

    private final SandboxProvider provider;
    private final @Nullable SandboxPool pool;
    private final int maxSessions;
    private final Map<String, Entry> live = new ConcurrentHashMap<>();
    private final Map<String, Ended> ended = new LinkedHashMap<>(); // guarded by itself
    private final AtomicInteger owned = new AtomicInteger();
    private final Duration lease;
    private final LongSupplier nanos;
    private final Disposable reaper;

    /** The label on sessions created leased, so a restarted server leases them again when their client renews. */
    static final String LEASED_LABEL = Tenant.RESERVED_PREFIX + "leased";

    /**
     * Another tenant's session, answered as a missing one (same type, same message) but not taken as news that the
     * session ended.
     */
    private static final class NotTheTenants extends SessionNotFoundException {
        private static final long serialVersionUID = 1L;

        NotTheTenants(String id) {
            super(id);
        }
    }

    private record Ended(SessionEndReason reason, Tenant tenant) {}

    private static final class Entry {
        final SandboxSession handle;
        final boolean owned;
        final Tenant tenant;
        final AtomicBoolean counted;
        /** When a leased session expires (on the registry's clock of nanoseconds), or 0 when it is not leased. */
        volatile long leaseDeadline;

        Entry(SandboxSession handle, boolean owned, Tenant tenant) {
            this.handle = handle;
            this.owned = owned;
            this.tenant = tenant;
            this.counted = new AtomicBoolean(owned);
        }
    }

    /**
     * Creates the registry with leases: a session created without a chosen lifetime ({@link
     * SessionOptions#lifetimeChosen()}) is destroyed when its lease has not been
     * renewed (by {@link #renew} or any use) for {@code lease}.
     *
     * @param provider the provider whose sessions are served
     * @param maxSessions the most live sessions created through the server at once
     * @param lease how long a leased session lives without a renewal
     */
    public Sessions(SandboxProvider provider, int maxSessions, Duration lease) {
        this(provider, null, maxSessions, lease, Schedulers.parallel(), System::nanoTime);
    }

    /**
     * Creates the registry with leases whose creates a warm pool serves when the client's options allow it (see
     * {@link PoolClaims}); otherwise as {@link #Sessions(SandboxProvider, int, Duration)}.
     *
     * @param provider the provider whose sessions are served
     * @param pool the pool of sessions of the provider made from the default options, or {@code null} for none
     * @param maxSessions the most live sessions created through the server at once
     * @param lease how long a leased session lives without a renewal
     */
    public Sessions(SandboxProvider provider, @Nullable SandboxPool pool, int maxSessions, Duration lease) {
        this(provider, pool, maxSessions, lease, Schedulers.parallel(), System::nanoTime);
    }

    /**
     * Creates the registry with leases timed on the given scheduler and clock (a test's virtual time); otherwise as
     * {@link #Sessions(SandboxProvider, int, Duration)}.
     *
     * @param provider the provider whose sessions are served
     * @param maxSessions the most live sessions created through the server at once
     * @param lease how long a leased session lives without a renewal
     * @param timer where the check for expired leases runs, four times a lease
     * @param nanos the monotonic clock leases are measured on, in nanoseconds
     */
    public Sessions(SandboxProvider provider, int maxSessions, Duration lease, Scheduler timer, LongSupplier nanos) {
        this(provider, null, maxSessions, lease, timer, nanos);
    }

    private Sessions(
            SandboxProvider provider,
            @Nullable SandboxPool pool,
            int maxSessions,
            Duration lease,
            Scheduler timer,
            LongSupplier nanos) {
        this.provider = provider;
        this.pool = pool;
        this.maxSessions = maxSessions;
        this.lease = lease;
        this.nanos = nanos;
        long tick = Math.max(20, Math.min(5_000, lease.toMillis() / 4));
        this.reaper = Flux.interval(Duration.ofMillis(tick), timer)
                .onBackpressureDrop()
                .concatMap(i -> reapExpired(), 1)
                .subscribe();
    }

    /**
     * How long a leased session lives without a renewal.
     *
     * @return the lease
     */
    public Duration lease() {
        return lease;
    }

    /**
     * The lease of a held session of a tenant.
     *
     * @param id the session's id
     * @return the lease in milliseconds, or {@code null} when the session is not leased
     */
    public Long leaseMs(String id) {
        Entry e = live.get(id);
        return e != null && e.leaseDeadline != 0 ? lease.toMillis() : null;
    }

    /**
     * Renews the leases of a tenant's sessions. A session not held (after a restart of the server) is looked up and,
     * when it was created leased, leased again.
     *
     * @param ids the sessions
     * @param tenant who asks: other tenants' sessions are left out
     * @return the ids renewed
     */
    public Mono<List<String>> renew(List<String> ids, Tenant tenant) {
        return Flux.fromIterable(ids)
                .distinct()
                .concatMap(
                        id -> {
                            Entry e = live.get(id);
                            if (e != null) {
                                return e.tenant.equals(tenant) && bump(e) ? Mono.just(id) : Mono.<String>empty();
                            }
                            return lookup(id, tenant)
                                    .flatMap(s -> {
                                        Entry held = live.get(id);
                                        if (held != null
                                                && "true".equals(s.labels().get(LEASED_LABEL))) {
                                            if (held.leaseDeadline == 0) {
                                                held.leaseDeadline = nanos.getAsLong() + lease.toNanos();
                                            }
                                            return Mono.just(id);
                                        }
                                        return Mono.<String>empty();
                                    })
                                    .onErrorResume(t -> Mono.empty());
                        },
                        1)
                .collectList();
    }

    private boolean bump(Entry e) {
        if (e.leaseDeadline == 0) {
            return false;
        }
        e.leaseDeadline = nanos.getAsLong() + lease.toNanos();
        return true;
    }

    /**
     * Leases again the leased sessions of these tenants that the provider still has (a server that stopped without
     * destroying them, or crashed): each gets a fresh lease, so one whose client is gone too ends after it.
     *
     * @param tenants the server's tenants
     * @return completes when they are adopted; failures are logged, not raised
     */
    public Mono<Void> adoptLeased(List<Tenant> tenants) {
        Map<String, Tenant> byMarker = new LinkedHashMap<>();
        tenants.forEach(t -> byMarker.put(t.marker(), t));
        return provider.list(Map.of(LEASED_LABEL, "true"))
                .filter(i -> !live.containsKey(i.id())
                        && byMarker.containsKey(i.labels().get(Tenant.LABEL)))
                .flatMap(
                        i -> provider.attach(i.id())
                                .doOnNext(s -> {
                                    Entry e = new Entry(
                                            s, false, byMarker.get(i.labels().get(Tenant.LABEL)));
                                    e.leaseDeadline = nanos.getAsLong() + lease.toNanos();
                                    if (live.putIfAbsent(i.id(), e) != null) {
                                        s.close().onErrorComplete().subscribe();
                                    }
                                })
                                .onErrorResume(t -> Mono.empty()),
                        4)
                .then()
                .onErrorResume(t -> {
                    LOG.warn("could not look for leased sessions to adopt: {}", t.toString());
                    return Mono.empty();
                });
    }

    /** Stops destroying expired leased sessions; used when the server stops or fails to start. */
    public void stopLeases() {
        reaper.dispose();
    }

    /** Destroys the leased sessions whose leases ran out. */
    private Mono<Void> reapExpired() {
        long now = nanos.getAsLong();
        List<Entry> expired = new ArrayList<>();
        for (Entry e : live.values()) {
            long deadline = e.leaseDeadline;
            if (deadline != 0 && now - deadline > 0) {
                expired.add(e);
            }
        }
        return Flux.fromIterable(expired)
                .flatMap(
                        e -> {
                            LOG.info("session {} lease expired: destroying it", e.handle.id());
                            return e.handle
                                    .destroy()
                                    .doOnSuccess(v -> forget(e.handle.id(), SessionEndReason.LIFETIME_EXPIRED))
                                    .onErrorResume(t -> {
                                        LOG.warn(
                                                "could not destroy expired session {}: {}",
                                                e.handle.id(),
                                                t.toString());
                                        observe(e.handle.id(), t);
                                        return Mono.empty();
                                    });
                        },
                        8)
                .then();
    }

    /**
     * The provider.
     *
     * @return the provider
     */
    public SandboxProvider provider() {
        return provider;
    }

    /**
     * How many live sessions the server created.
     *
     * @return the count
     */
    public int ownedCount() {
        return owned.get();
    }

    /**
     * Creates a session for a tenant, refusing with 429 when the server already owns its maximum of live sessions.
     *
     * @param options the options, without labels under {@link Tenant#RESERVED_PREFIX}
     * @param tenant whose session it is: it gets the tenant's label
     * @return the new session's handle
     */
    public Mono<SandboxSession> create(SessionOptions options, Tenant tenant) {
        for (String key : options.labels().keySet()) {
            if (key.startsWith(Tenant.RESERVED_PREFIX)) {
                return Mono.error(new InvalidArgumentException(
                        "labels",
                        "labels under '" + Tenant.RESERVED_PREFIX + "' are the server's own, got '" + key + "'"));
            }
        }
        // leased unless the client chose a lifetime (the default one, or none, is leased): see lifetimeChosen()
        boolean leased = !options.lifetimeChosen();
        SessionOptions marked = options.withLabel(Tenant.LABEL, tenant.marker());
        if (leased) {
            marked = marked.withLabel(LEASED_LABEL, "true");
        }
        String name = options.name().orElse(null);
        if (name != null) {
            // the provider gets the tenant's own name for it: another tenant's of the same name is another name
            marked = marked.withName(TenantNames.inner(tenant, name)).withLabel(TenantNames.LABEL, name);
        }
        SessionOptions toCreate = marked;
        // a warm session cannot take a name: a named one is always created
        SandboxPool warm = name == null ? pool : null;
        // the server's labels (the tenant's, the lease's) go on a warm session with the client's, at the claim
        Claim claim = warm == null ? null : PoolClaims.of(toCreate);
        return reserve()
                .then(Mono.defer(() -> (claim == null
                                ? provider.create(toCreate)
                                : warm.acquire(claim)
                                        // a provider that cannot label a running session: the warm one was given
                                        // back, and the session is created with its labels
                                        .onErrorResume(
                                                UnsupportedFeatureException.class, t -> provider.create(toCreate)))
                        .doOnNext(s -> {
                            Entry e = new Entry(s, true, tenant);
                            if (leased) {
                                e.leaseDeadline = nanos.getAsLong() + lease.toNanos();
                            }
                            live.put(s.id(), e);
                        })
                        .doOnError(e -> owned.decrementAndGet())
                        .doOnCancel(owned::decrementAndGet)))
                // the error names the tenant's name, never the provider's
                .onErrorMap(
                        dev.sandbox.SessionNameInUseException.class,
                        e -> new dev.sandbox.SessionNameInUseException(name == null ? "" : name, e.isRetryable()));
    }

    /**
     * A handle to the tenant's live session with this name; another tenant's session of the same name is not found.
     *
     * @param name the tenant's name for the session
     * @param tenant who asks
     * @return the handle, or {@link SessionNotFoundException} naming the name
     */
    public Mono<SandboxSession> attachByName(String name, Tenant tenant) {
        return Mono.defer(() -> {
            SessionOptions.validateName(name);
            return provider.attachByName(TenantNames.inner(tenant, name))
                    .onErrorMap(SessionNotFoundException.class, e -> SessionNotFoundException.named(name))
                    .flatMap(s -> {
                        if (!tenant.owns(s.labels()) || !name.equals(TenantNames.of(s.labels()))) {
                            return s.close().onErrorComplete().then(Mono.error(SessionNotFoundException.named(name)));
                        }
                        return hold(s, tenant)
                                .onErrorMap(NotTheTenants.class, e -> SessionNotFoundException.named(name));
                    });
        });
    }

    /** Takes a slot, first forgetting owned sessions that have ended when at the limit. */
    private Mono<Void> reserve() {
        return Mono.defer(() -> {
            if (owned.incrementAndGet() <= maxSessions) {
                return Mono.empty();
            }
            owned.decrementAndGet();
            return prune().then(Mono.defer(() -> {
                if (owned.incrementAndGet() <= maxSessions) {
                    return Mono.empty();
                }
                owned.decrementAndGet();
                return Mono.error(new HttpError(
                        429,
                        "TooManySessions",
                        "the server already runs its maximum of " + maxSessions + " sessions; destroy one first"));
            }));
        });
    }

    /** Pings the owned sessions and forgets those that have ended. */
    private Mono<Void> prune() {
        List<Entry> entries = new ArrayList<>(live.values());
        return Flux.fromIterable(entries)
                .filter(e -> e.owned)
                .flatMap(e -> e.handle.ping().then().onErrorResume(t -> {
                    observe(e.handle.id(), t);
                    return Mono.empty();
                }))
                .then();
    }

    /**
     * The handle for an operation on a session: a held one, an error saying why the session ended, or a new handle
     * from the provider.
     *
     * @param id the session's id
     * @param tenant who asks: another tenant's session is not found, as a missing one
     * @return the handle
     */
    public Mono<SandboxSession> lookup(String id, Tenant tenant) {
        return Mono.defer(() -> {
            Entry e = live.get(id);
            if (e != null) {
                if (!e.tenant.equals(tenant)) {
                    return Mono.error(new NotTheTenants(id));
                }
                bump(e); // using a leased session renews its lease
                return Mono.just(e.handle);
            }
            SessionEndReason reason = endedReason(id, tenant);
            if (reason != null) {
                return Mono.error(new SessionClosedException(id, reason));
            }
            return attachOwn(id, tenant);
        });
    }

    /** A new handle from the provider for a session of the tenant; any other session is not found. */
    private Mono<SandboxSession> attachOwn(String id, Tenant tenant) {
        return provider.attach(id).flatMap(s -> {
            if (!tenant.owns(s.labels())) {
                return s.close().onErrorComplete().then(Mono.error(new NotTheTenants(id)));
            }
            return hold(s, tenant);
        });
    }

    /** Keeps a new handle to a session of the tenant, or gives the one already held. */
    private Mono<SandboxSession> hold(SandboxSession s, Tenant tenant) {
        String id = s.id();
        Entry held = live.computeIfAbsent(id, k -> new Entry(s, false, tenant));
        if (held.handle != s) {
            s.close().onErrorComplete().subscribe();
        }
        return held.tenant.equals(tenant) ? Mono.just(held.handle) : Mono.error(new NotTheTenants(id));
    }

    /**
     * The handle for attaching to a session: fails with {@link SessionNotFoundException} when it ended or never
     * existed, as the provider's own {@code attach} does.
     *
     * @param id the session's id
     * @param tenant who asks: another tenant's session is not found, as a missing one
     * @return the handle
     */
    public Mono<SandboxSession> attach(String id, Tenant tenant) {
        return Mono.defer(() -> {
            if (endedReason(id, tenant) != null) {
                return Mono.error(new SessionNotFoundException(id));
            }
            Entry e = live.get(id);
            if (e != null && !e.tenant.equals(tenant)) {
                return Mono.error(new NotTheTenants(id));
            }
            return attachOwn(id, tenant)
                    .onErrorResume(
                            t -> t instanceof SessionNotFoundException && !(t instanceof NotTheTenants),
                            t -> endedWithReason(id).then(Mono.error(t)));
        });
    }

    /** A held session the provider no longer has: its own handle knows why it ended, when it can tell. */
    private Mono<Void> endedWithReason(String id) {
        Entry e = live.get(id);
        if (e == null) {
            return Mono.empty();
        }
        return e.handle
                .ping()
                .then(Mono.fromRunnable(() -> forget(id, SessionEndReason.TERMINATED)))
                .onErrorResume(t -> {
                    observe(id, t instanceof SessionClosedException ? t : new SessionNotFoundException(id));
                    return Mono.empty();
                })
                .then();
    }

    /**
     * Lists a tenant's sessions by labels, without the server's own labels.
     *
     * @param labels labels every session must have
     * @param tenant whose sessions
     * @return the sessions
     */
    public Flux<SessionInfo> list(Map<String, String> labels, Tenant tenant) {
        Map<String, String> filter = new LinkedHashMap<>();
        labels.forEach((k, v) -> {
            if (!k.startsWith(Tenant.RESERVED_PREFIX)) {
                filter.put(k, v);
            }
        });
        filter.put(Tenant.LABEL, tenant.marker());
        return provider.list(filter)
                .filter(i -> tenant.owns(i.labels()))
                .map(i -> new SessionInfo(
                        i.id(),
                        i.provider(),
                        Tenant.visible(i.labels()),
                        i.createdAt(),
                        java.util.Optional.ofNullable(TenantNames.of(i.labels()))));
    }

    /**
     * Destroys a session; idempotent for a session that already ended.
     *
     * @param id the session's id
     * @param tenant who asks
     * @return completes when it is gone
     */
    public Mono<Void> destroy(String id, Tenant tenant) {
        return Mono.defer(() -> {
            if (endedReason(id, tenant) != null) {
                return Mono.empty();
            }
            return lookup(id, tenant)
                    .flatMap(s ->
                            s.destroy().then(Mono.<Void>fromRunnable(() -> forget(id, SessionEndReason.DESTROYED))))
                    .onErrorResume(SessionClosedException.class, t -> {
                        forget(id, t.reason());
                        return Mono.empty();
                    });
        });
    }

    /**
     * Notes what an operation's error says about its session: a closed session is forgotten with its reason.
     *
     * @param id the session's id
     * @param t the error
     */
    public void observe(String id, Throwable t) {
        if (!live.containsKey(id) || t instanceof NotTheTenants) {
            return; // only sessions the server held are remembered as ended; unknown ids stay unknown
        }
        if (t instanceof SessionClosedException c && c.reason() != SessionEndReason.HANDLE_CLOSED) {
            forget(id, c.reason());
        } else if (t instanceof SessionNotFoundException) {
            forget(id, SessionEndReason.TERMINATED);
        }
    }

    private void forget(String id, SessionEndReason reason) {
        Entry e = live.remove(id);
        if (e == null) {
            return;
        }
        if (e.counted.compareAndSet(true, false)) {
            owned.decrementAndGet();
        }
        synchronized (ended) {
            ended.putIfAbsent(id, new Ended(reason, e.tenant));
            if (ended.size() > MAX_ENDED_REMEMBERED) {
                ended.remove(ended.keySet().iterator().next());
            }
        }
    }

    private SessionEndReason endedReason(String id, Tenant tenant) {
        synchronized (ended) {
            Ended e = ended.get(id);
            return e != null && e.tenant.equals(tenant) ? e.reason : null;
        }
    }

    /**
     * Destroys every live session the server created; used on shutdown. Blocks up to the timeout.
     *
     * @param timeout the longest wait
     */
    public void destroyOwned(Duration timeout) {
        reaper.dispose();
        List<Entry> entries = new ArrayList<>(live.values());
        try {
            Flux.fromIterable(entries)
                    .filter(e -> e.owned)
                    .flatMap(e -> e.handle
                            .destroy()
                            .doOnSuccess(v -> forget(e.handle.id(), SessionEndReason.DESTROYED))
                            .onErrorResume(t -> {
                                LOG.warn("could not destroy session {} on shutdown: {}", e.handle.id(), t.toString());
                                return Mono.empty();
                            }))
                    .then()
                    .block(timeout);
        } catch (RuntimeException e) {
            LOG.warn("destroying the server's sessions did not finish within {}: {}", timeout, e.toString());
        }
    }
}
