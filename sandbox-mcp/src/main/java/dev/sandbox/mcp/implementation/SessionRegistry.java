package dev.sandbox.mcp.implementation;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SandboxStateException;
import dev.sandbox.SessionOptions;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.SandboxPool;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The sessions an MCP server created, each owned by the caller that created it (the stdio client, or the token of an
 * HTTP request): a caller sees, uses and destroys only its own, and never a session the server did not create. At most
 * {@code max} live at once; all are destroyed by {@link #destroyAll(Duration)}.
 */
public final class SessionRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(SessionRegistry.class);

    /**
     * One created session.
     *
     * @param session the session
     * @param owner who created it
     * @param createdAt when
     * @param lifetime the lifetime it was created with, or {@code null} for unlimited
     */
    public record Entry(SandboxSession session, String owner, Instant createdAt, Duration lifetime) {
        /**
         * The session's id.
         *
         * @return the id
         */
        public String id() {
            return session.id();
        }

        /**
         * The session's labels.
         *
         * @return the labels
         */
        public Map<String, String> labels() {
            return session.labels();
        }
    }

    private final SandboxProvider provider;
    private final @Nullable SandboxPool pool;
    private final int max;
    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final AtomicInteger reserved = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Creates an empty registry.
     *
     * @param provider where sessions are created
     * @param max the most sessions at once
     */
    public SessionRegistry(SandboxProvider provider, int max) {
        this(provider, null, max);
    }

    /**
     * Creates an empty registry whose creates without labels take a session from a warm pool.
     *
     * @param provider where sessions are created
     * @param pool the pool of sessions of the provider made from the server's session options, or {@code null}
     * @param max the most sessions at once
     */
    public SessionRegistry(SandboxProvider provider, @Nullable SandboxPool pool, int max) {
        this.provider = provider;
        this.pool = pool;
        this.max = max;
    }

    /**
     * Where a session of these options comes from: the pool when there is one, with the labels and the lifetime the
     * call chose set at the claim, else a cold create. The options are the server's session options with, at most,
     * labels and a lifetime the call chose, so the claim makes a warm session what the create would have.
     */
    private Mono<SandboxSession> make(SessionOptions options) {
        if (pool == null) {
            return provider.create(options);
        }
        Claim claim = Claim.defaults();
        for (Map.Entry<String, String> e : options.labels().entrySet()) {
            claim = claim.withLabel(e.getKey(), e.getValue());
        }
        if (options.lifetimeChosen() && options.lifetime().isPresent()) {
            claim = claim.withLifetime(options.lifetime().get());
        }
        return pool.acquire(claim)
                // a provider that cannot label a running session: the warm one was given back; created with them
                .onErrorResume(UnsupportedFeatureException.class, t -> provider.create(options));
    }

    /**
     * The provider's name.
     *
     * @return the name
     */
    public String providerName() {
        return provider.name();
    }

    /**
     * The most sessions at once.
     *
     * @return the limit
     */
    public int max() {
        return max;
    }

    /**
     * Creates a session for an owner.
     *
     * @param owner the owner
     * @param options the session's options
     * @return the entry; {@link SandboxStateException} when {@code max} sessions are live or the server stopped
     */
    public Mono<Entry> create(String owner, SessionOptions options) {
        return Mono.defer(() -> {
            if (closed.get()) {
                return Mono.error(new SandboxStateException("this MCP server is stopping"));
            }
            forgetExpired();
            if (reserved.incrementAndGet() > max) {
                reserved.decrementAndGet();
                return Mono.error(new SandboxStateException("this MCP server already has " + max
                        + " sessions, the most it keeps at once: destroy one with destroy_session first"));
            }
            Duration lifetime = options.lifetime().orElse(null);
            return make(options)
                    .flatMap(session -> {
                        Entry entry = new Entry(session, owner, Instant.now(), lifetime);
                        entries.put(session.id(), entry);
                        if (closed.get() && entries.remove(session.id(), entry)) {
                            // stopped while creating: destroyAll may have missed it
                            return session.destroy()
                                    .onErrorResume(e -> Mono.empty())
                                    .then(Mono.<Entry>error(new SandboxStateException("this MCP server is stopping")));
                        }
                        return Mono.just(entry);
                    })
                    .doOnError(e -> reserved.decrementAndGet())
                    .doOnCancel(reserved::decrementAndGet);
        });
    }

    /**
     * An owner's session.
     *
     * @param owner the owner
     * @param id the session's id
     * @return the entry, or {@code null} when the owner has no such session
     */
    public Entry get(String owner, String id) {
        forgetExpired();
        Entry e = entries.get(id);
        return e != null && e.owner().equals(owner) ? e : null;
    }

    /**
     * An owner's sessions, oldest first.
     *
     * @param owner the owner
     * @return the entries
     */
    public List<Entry> list(String owner) {
        forgetExpired();
        List<Entry> out = new ArrayList<>();
        for (Entry e : entries.values()) {
            if (e.owner().equals(owner)) {
                out.add(e);
            }
        }
        out.sort(Comparator.comparing(Entry::createdAt).thenComparing(Entry::id));
        return out;
    }

    /**
     * Forgets a session that ended by itself (its lifetime ran out), so it no longer counts.
     *
     * @param entry the entry
     */
    public void forget(Entry entry) {
        if (entries.remove(entry.id(), entry)) {
            reserved.decrementAndGet();
        }
    }

    /**
     * Forgets the sessions whose lifetime has run out, so they no longer count or show: the provider ends them (and
     * a destroy is sent in case it has not yet).
     */
    private void forgetExpired() {
        Instant now = Instant.now();
        for (Entry e : entries.values()) {
            if (e.lifetime() != null && e.createdAt().plus(e.lifetime()).isBefore(now) && entries.remove(e.id(), e)) {
                reserved.decrementAndGet();
                e.session().destroy().onErrorResume(t -> Mono.empty()).subscribe();
            }
        }
    }

    /**
     * Destroys an owner's session.
     *
     * @param owner the owner
     * @param id the session's id
     * @return {@code true} once destroyed, {@code false} when the owner has no such session
     */
    public Mono<Boolean> destroy(String owner, String id) {
        return Mono.defer(() -> {
            Entry e = get(owner, id);
            if (e == null || !entries.remove(id, e)) {
                return Mono.just(false);
            }
            reserved.decrementAndGet();
            return e.session().destroy().thenReturn(true);
        });
    }

    /**
     * Destroys every session and refuses new ones. Blocks, at most {@code timeout}.
     *
     * @param timeout how long destroying may take
     */
    public void destroyAll(Duration timeout) {
        closed.set(true);
        List<Entry> all = new ArrayList<>(entries.values());
        all.forEach(e -> entries.remove(e.id(), e));
        if (all.isEmpty()) {
            return;
        }
        try {
            Flux.fromIterable(all)
                    .flatMap(e -> e.session().destroy().onErrorResume(t -> {
                        LOG.warn("could not destroy session {}: {}", e.id(), t.toString());
                        return Mono.empty();
                    }))
                    .then()
                    .block(timeout);
        } catch (RuntimeException e) {
            LOG.warn("destroying {} sessions took longer than {}", all.size(), timeout);
        }
    }
}
