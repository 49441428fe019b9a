package dev.sandbox.server.implementation;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The sessions the server serves: the handles it holds (those it created, which it owns and destroys on shutdown,
 * and those it attached to by id), and the ids of sessions that ended with why, so that a later call learns that
 * the session is closed and why rather than that it never existed.
 */
public final class Sessions {
    private static final Logger LOG = LoggerFactory.getLogger(Sessions.class);
    private static final int MAX_ENDED_REMEMBERED = 4096;

    private final SandboxProvider provider;
    private final int maxSessions;
    private final Map<String, Entry> live = new ConcurrentHashMap<>();
    private final Map<String, SessionEndReason> ended = new LinkedHashMap<>(); // guarded by itself
    private final AtomicInteger owned = new AtomicInteger();

    private static final class Entry {
        final SandboxSession handle;
        final boolean owned;
        final AtomicBoolean counted;

        Entry(SandboxSession handle, boolean owned) {
            this.handle = handle;
            this.owned = owned;
            this.counted = new AtomicBoolean(owned);
        }
    }

    /**
     * Creates the registry.
     *
     * @param provider the provider whose sessions are served
     * @param maxSessions the most live sessions created through the server at once
     */
    public Sessions(SandboxProvider provider, int maxSessions) {
        this.provider = provider;
        this.maxSessions = maxSessions;
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
     * Creates a session, refusing with 429 when the server already owns its maximum of live sessions.
     *
     * @param options the options
     * @return the new session's handle
     */
    public Mono<SandboxSession> create(SessionOptions options) {
        return reserve()
                .then(Mono.defer(() -> provider.create(options)
                        .doOnNext(s -> live.put(s.id(), new Entry(s, true)))
                        .doOnError(e -> owned.decrementAndGet())
                        .doOnCancel(owned::decrementAndGet)));
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
     * @return the handle
     */
    public Mono<SandboxSession> lookup(String id) {
        return Mono.defer(() -> {
            Entry e = live.get(id);
            if (e != null) {
                return Mono.just(e.handle);
            }
            SessionEndReason reason = endedReason(id);
            if (reason != null) {
                return Mono.error(new SessionClosedException(id, reason));
            }
            return provider.attach(id).map(s -> live.computeIfAbsent(id, k -> new Entry(s, false)).handle);
        });
    }

    /**
     * The handle for attaching to a session: fails with {@link SessionNotFoundException} when it ended or never
     * existed, as the provider's own {@code attach} does.
     *
     * @param id the session's id
     * @return the handle
     */
    public Mono<SandboxSession> attach(String id) {
        return Mono.defer(() -> {
            if (endedReason(id) != null) {
                return Mono.error(new SessionNotFoundException(id));
            }
            return provider.attach(id)
                    .map(fresh -> live.computeIfAbsent(id, k -> new Entry(fresh, false)).handle)
                    .onErrorResume(
                            SessionNotFoundException.class,
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
     * Lists the provider's sessions by labels.
     *
     * @param labels labels every session must have
     * @return the sessions
     */
    public Flux<SessionInfo> list(Map<String, String> labels) {
        return provider.list(labels);
    }

    /**
     * Destroys a session; idempotent for a session that already ended.
     *
     * @param id the session's id
     * @return completes when it is gone
     */
    public Mono<Void> destroy(String id) {
        return Mono.defer(() -> {
            if (endedReason(id) != null) {
                return Mono.empty();
            }
            return lookup(id)
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
        if (!live.containsKey(id)) {
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
        if (e != null && e.counted.compareAndSet(true, false)) {
            owned.decrementAndGet();
        }
        synchronized (ended) {
            ended.putIfAbsent(id, reason);
            if (ended.size() > MAX_ENDED_REMEMBERED) {
                ended.remove(ended.keySet().iterator().next());
            }
        }
    }

    private SessionEndReason endedReason(String id) {
        synchronized (ended) {
            return ended.get(id);
        }
    }

    /**
     * Destroys every live session the server created; used on shutdown. Blocks up to the timeout.
     *
     * @param timeout the longest wait
     */
    public void destroyOwned(Duration timeout) {
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
