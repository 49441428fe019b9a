package dev.sandbox.implementation.pool;

import dev.sandbox.ProviderClosedException;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.PoolAtCapacityException;
import dev.sandbox.pool.PoolStats;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.util.retry.Retry;

/**
 * The state of a {@code SandboxPool}: warm sessions, waiting callers, creates in flight, and the rules that start
 * creates (the cap on sessions alive, on creates in flight, the refill rate and the back-off after failures). Every
 * change happens under one lock that is never held while calling out: a provider's create, a session's destroy and a
 * caller's sink are all called after the lock is released. Internal.
 */
public final class PoolEngine {
    private static final Logger LOG = LoggerFactory.getLogger(PoolEngine.class);
    private static final Duration MIN_BACKOFF = Duration.ofMillis(100);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
    /** How often handed-out sessions are looked at for an end nobody gave back. */
    static final Duration AUDIT_EVERY = Duration.ofSeconds(5);

    private final SandboxProvider provider;
    private final SessionOptions warmOptions;
    private final SessionOptions template;
    private final int warmTarget;
    private final int maxSessions;
    private final int maxCreates;
    private final int maxWaiting;
    private final Duration acquireTimeout;
    private final long nanosPerCreate;

    private final Object lock = new Object();
    private final Deque<SandboxSession> warm = new ArrayDeque<>();
    private final Deque<Waiter> waiters = new ArrayDeque<>();
    /** The sessions handed out (or being customised) and not given back: {@link #inUse} of them. */
    private final Set<SandboxSession> out = Collections.newSetFromMap(new IdentityHashMap<>());
    /** The periodic look for handed-out sessions that ended without being given back. */
    private @Nullable Disposable audit;

    private int inUse;
    private int creating;
    private int destroying;
    private long acquired;
    private long coldAcquires;
    private long createFailures;
    private long rejected;
    private int failuresInARow;
    private Throwable lastFailure;
    /** When the next create may start (the refill rate and the back-off), in {@link System#nanoTime()}. */
    private long nextCreateNanos = System.nanoTime();

    private Disposable scheduledPump;
    private boolean closed;
    /** Completes once the pool is closed and no create or destroy it started is still running. */
    private final Sinks.Empty<Void> drained = Sinks.empty();

    /**
     * Sets up a pool; nothing is created before {@link #start()}.
     *
     * @param provider where sessions are created
     * @param template the options of every session
     * @param warmTarget sessions kept warm
     * @param maxSessions sessions alive at most
     * @param maxCreates creates in flight at most
     * @param maxWaiting callers waiting at most
     * @param acquireTimeout how long a caller waits
     * @param refillPerSecond creates started per second at most
     */
    public PoolEngine(
            SandboxProvider provider,
            SessionOptions template,
            int warmTarget,
            int maxSessions,
            int maxCreates,
            int maxWaiting,
            Duration acquireTimeout,
            double refillPerSecond) {
        this.provider = provider;
        this.template = template;
        this.warmOptions = template.withUnlimitedLifetime(); // leased while warm; the lifetime starts at the claim
        this.warmTarget = warmTarget;
        this.maxSessions = maxSessions;
        this.maxCreates = maxCreates;
        this.maxWaiting = maxWaiting;
        this.acquireTimeout = acquireTimeout;
        this.nanosPerCreate = (long) (1e9 / refillPerSecond);
    }

    /** Starts filling the pool. */
    public void start() {
        pump();
        audit = Flux.interval(AUDIT_EVERY, AUDIT_EVERY)
                .onBackpressureDrop()
                .concatMap(t -> audit(), 1)
                .subscribe();
    }

    /**
     * Finds the handed-out sessions that ended without being given back (a lifetime that ran out, a destroy through
     * another handle, a container that died) and frees their places, so that the cap counts only sessions alive.
     */
    private Mono<Void> audit() {
        List<SandboxSession> held;
        synchronized (lock) {
            held = new ArrayList<>(out);
        }
        return Flux.fromIterable(held)
                .flatMap(
                        s -> s.ping()
                                .map(status -> status.endReason() != null)
                                .onErrorResume(e -> Mono.just(
                                        e instanceof SessionClosedException || e instanceof SessionNotFoundException))
                                .filter(ended -> ended)
                                .flatMap(ended -> {
                                    LOG.debug("pooled session {} ended while handed out; its place is free", s.id());
                                    return release(s);
                                }),
                        8)
                .then()
                .onErrorResume(e -> Mono.empty());
    }

    /**
     * One acquire's subscription: its place in the queue while it waits, and whether its caller cancelled. A session
     * handed to a sink whose caller cancels at that very moment can be dropped by {@code MonoCreate} without the
     * discard hook (it checks the cancel's state before the cancel marks the sink disposed), so {@link #hand} gives
     * back a session its caller cancelled and never received.
     */
    private static final class Acquisition extends AtomicReference<Waiter> {
        private static final long serialVersionUID = 1L;

        /** The caller cancelled (set before the cancel reaches the sink). */
        volatile boolean cancelled;
    }

    /** One caller waiting for a session. */
    private static final class Waiter {
        final MonoSink<SandboxSession> sink;
        final Claim claim;
        final Acquisition queued;
        Disposable timer;
        boolean done;

        Waiter(MonoSink<SandboxSession> sink, Claim claim, Acquisition queued) {
            this.sink = sink;
            this.claim = claim;
            this.queued = queued;
        }
    }

    /**
     * Takes a session for a caller.
     *
     * @param claim what to make of it
     * @return the customised session
     */
    public Mono<SandboxSession> acquire(Claim claim) {
        return Mono.defer(() -> {
            Acquisition acquisition = new Acquisition();
            return Mono.<SandboxSession>create(sink -> {
                        sink.onCancel(() -> {
                            Waiter w = acquisition.get();
                            if (w != null) {
                                cancel(w);
                            }
                        });
                        admit(claim, sink, acquisition, 0);
                    })
                    .doOnNext(s -> ((PooledSession) s).delivered())
                    // before the cancel reaches the sink: hand sees it whatever the sink did with the session
                    .doOnCancel(() -> acquisition.cancelled = true)
                    // a caller that cancelled while its session was being customised never sees it: given back
                    .doOnDiscard(PooledSession.class, PoolEngine::giveBack);
        });
    }

    private static void giveBack(PooledSession p) {
        p.destroy().subscribe(null, e -> LOG.debug("cannot give back session {}: {}", p.id(), e.toString()));
    }

    /** A warm session at once, else a place in the queue, else the refusal; {@code attempt} counts dead warm ones. */
    private void admit(Claim claim, MonoSink<SandboxSession> sink, Acquisition queued, int attempt) {
        SandboxSession now = null;
        RuntimeException refused = null;
        synchronized (lock) {
            if (closed) {
                refused = new ProviderClosedException("pool");
            } else if (waiters.isEmpty() && !warm.isEmpty()) {
                now = warm.poll();
                out.add(now);
                inUse++;
                acquired++;
            } else if (waiters.size() >= maxWaiting) {
                rejected++;
                refused = new PoolAtCapacityException(
                        "the sandbox pool is at capacity: " + describe() + "; " + maxWaiting + " callers wait already",
                        lastFailure);
            } else {
                Waiter w = new Waiter(sink, claim, queued);
                w.timer = Mono.delay(acquireTimeout).subscribe(t -> timeOut(w)); // a timer only: no call out
                waiters.add(w);
                queued.set(w);
            }
        }
        if (refused != null) {
            sink.error(refused);
            return;
        }
        if (now != null) {
            hand(now, claim, sink, queued, attempt);
        }
        pump();
    }

    private void timeOut(Waiter w) {
        String state;
        synchronized (lock) {
            if (w.done) {
                return;
            }
            w.done = true;
            waiters.remove(w);
            rejected++;
            state = describe();
        }
        w.sink.error(new PoolAtCapacityException(
                "no sandbox came from the pool within " + acquireTimeout + " (" + state + ")", lastFailure()));
    }

    private void cancel(Waiter w) {
        synchronized (lock) {
            if (w.done) {
                return;
            }
            w.done = true;
            waiters.remove(w);
        }
        w.timer.dispose();
        pump(); // a create started for this caller now fills the pool instead
    }

    private Throwable lastFailure() {
        synchronized (lock) {
            return lastFailure;
        }
    }

    /**
     * Applies a claim and hands the session out. A warm session that ended meanwhile (its container died, say) is
     * given back and the caller served again, twice at most; any other failure of the claim fails the caller.
     */
    private void hand(
            SandboxSession session, Claim claim, MonoSink<SandboxSession> sink, Acquisition queued, int attempt) {
        PooledSession pooled = new PooledSession(session, claim, this::release);
        customise(session, claim)
                .subscribe(
                        null,
                        e -> {
                            release(session)
                                    .subscribe(null, x -> LOG.debug("cannot destroy session {}: {}", session.id(), x));
                            if (e instanceof SessionClosedException && attempt < 2) {
                                LOG.debug("warm session {} had ended: {}", session.id(), e.toString());
                                admit(claim, sink, queued, attempt + 1);
                            } else {
                                sink.error(e);
                            }
                        },
                        () -> {
                            sink.success(pooled);
                            if (queued.cancelled && !pooled.isDelivered()) {
                                giveBack(pooled); // dropped by a cancel racing the success (idempotent)
                            }
                        });
    }

    private Mono<Void> customise(SandboxSession session, Claim claim) {
        List<Mono<?>> steps = new ArrayList<>();
        if (!claim.labels().isEmpty()) {
            // first: a provider that cannot label a running session fails the claim before anything else is done
            steps.add(session.addLabels(claim.labels()));
        }
        Duration lifetime = claim.lifetime().orElse(template.lifetime().orElse(null));
        if (lifetime != null) {
            steps.add(session.setLifetime(lifetime));
        }
        claim.idleTimeout().or(template::idleTimeout).ifPresent(d -> steps.add(session.setIdleTimeout(d)));
        claim.workdir().ifPresent(dir -> steps.add(session.files().mkdir(dir)));
        for (Map.Entry<String, byte[]> f : claim.files().entrySet()) {
            steps.add(session.files().write(f.getKey(), f.getValue()));
        }
        if (steps.isEmpty()) {
            steps.add(session.ping()); // that it still runs
        }
        return Flux.concat(steps).then();
    }

    /** A session given back: destroyed, and a fresh one made in its place. */
    private Mono<Void> release(SandboxSession session) {
        synchronized (lock) {
            if (out.remove(session)) {
                inUse--;
            }
            destroying++;
        }
        return session.destroy()
                // a retryable failure (a busy backend) is tried twice more before the session is left to its lease
                .retryWhen(Retry.backoff(2, Duration.ofMillis(200))
                        .filter(e -> e instanceof SandboxException se && se.isRetryable())
                        .onRetryExhaustedThrow((spec, signal) -> signal.failure()))
                .onErrorResume(e -> {
                    LOG.warn("cannot destroy pooled session {}: {}", session.id(), e.toString());
                    return Mono.empty();
                })
                .doFinally(s -> {
                    synchronized (lock) {
                        destroying--;
                    }
                    pump();
                    checkDrained();
                });
    }

    /** Starts the creates the rules allow now, and schedules itself for when the next may start. */
    private void pump() {
        List<Waiter> failed = List.of();
        Throwable failure = null;
        int toStart = 0;
        long delayNanos = -1;
        synchronized (lock) {
            if (closed) {
                return;
            }
            int wanted = waiters.size() + warmTarget - warm.size() - creating;
            int alive = warm.size() + inUse + creating + destroying;
            int allowed = Math.min(Math.min(wanted, maxCreates - creating), maxSessions - alive);
            long now = System.nanoTime();
            while (toStart < allowed && now - nextCreateNanos >= 0) {
                toStart++;
                nextCreateNanos = Math.max(nextCreateNanos, now - nanosPerCreate) + nanosPerCreate;
            }
            creating += toStart;
            if (toStart < allowed && (scheduledPump == null || scheduledPump.isDisposed())) {
                delayNanos = Math.max(0, nextCreateNanos - now);
            }
            if (failuresInARow > 0
                    && lastFailure instanceof SandboxException se
                    && !se.isRetryable()
                    && !waiters.isEmpty()) {
                // retrying cannot help (an image that does not exist): the callers hear it now, not at their timeout
                failed = new ArrayList<>(waiters);
                waiters.clear();
                failed.forEach(w -> w.done = true);
                failure = lastFailure;
            }
        }
        for (Waiter w : failed) {
            w.timer.dispose();
            w.sink.error(failure);
        }
        for (int i = 0; i < toStart; i++) {
            create();
        }
        if (delayNanos >= 0) {
            Disposable d = Mono.delay(Duration.ofNanos(delayNanos)).subscribe(t -> pump());
            synchronized (lock) {
                scheduledPump = d;
            }
        }
    }

    private void create() {
        provider.create(warmOptions).subscribe(this::created, this::failed);
    }

    private void created(SandboxSession session) {
        Waiter taker = null;
        boolean discard;
        synchronized (lock) {
            creating--;
            failuresInARow = 0;
            discard = closed;
            if (!closed) {
                while (!waiters.isEmpty() && taker == null) {
                    Waiter w = waiters.poll();
                    if (!w.done) {
                        w.done = true;
                        taker = w;
                    }
                }
                if (taker != null) {
                    out.add(session);
                    inUse++;
                    acquired++;
                    coldAcquires++;
                } else {
                    warm.add(session);
                }
            } else {
                destroying++;
            }
        }
        if (discard) {
            session.destroy()
                    .onErrorResume(e -> Mono.empty())
                    .doFinally(s -> {
                        synchronized (lock) {
                            destroying--;
                        }
                        checkDrained();
                    })
                    .subscribe();
            return;
        }
        if (taker != null) {
            taker.timer.dispose();
            hand(session, taker.claim, taker.sink, taker.queued, 0);
        }
        pump();
    }

    private void failed(Throwable e) {
        long backoff;
        synchronized (lock) {
            creating--;
            createFailures++;
            failuresInARow++;
            lastFailure = e;
            backoff = Math.min(MAX_BACKOFF.toNanos(), MIN_BACKOFF.toNanos() << Math.min(20, failuresInARow - 1));
            nextCreateNanos = Math.max(nextCreateNanos, System.nanoTime() + backoff);
        }
        checkDrained();
        LOG.warn(
                "the sandbox pool could not create a session (failure {} in a row, next try in {} ms): {}",
                failuresInARow(),
                backoff / 1_000_000,
                e.toString());
        pump();
    }

    private int failuresInARow() {
        synchronized (lock) {
            return failuresInARow;
        }
    }

    /** After a create or destroy ended: completes {@link #drained} once a closed pool has nothing running. */
    private void checkDrained() {
        boolean done;
        synchronized (lock) {
            done = closed && creating == 0 && destroying == 0;
        }
        if (done) {
            drained.tryEmitEmpty();
        }
    }

    private String describe() {
        return (warm.size() + inUse + creating + destroying) + " of " + maxSessions + " sessions alive, " + warm.size()
                + " warm, " + inUse + " in use, " + creating + " being created, " + waiters.size() + " waiting";
    }

    /**
     * The counts now.
     *
     * @return the counts
     */
    public PoolStats stats() {
        synchronized (lock) {
            return new PoolStats(
                    warm.size(),
                    inUse,
                    waiters.size(),
                    creating,
                    destroying,
                    acquired,
                    coldAcquires,
                    createFailures,
                    rejected);
        }
    }

    /**
     * Closes the pool: no more creates, the waiting callers fail, the warm sessions are destroyed.
     *
     * @return completes when the warm sessions are gone
     */
    public Mono<Void> close() {
        return Mono.defer(() -> {
            List<SandboxSession> toDestroy;
            List<Waiter> toFail;
            synchronized (lock) {
                if (closed) {
                    return drained.asMono();
                }
                closed = true;
                toDestroy = new ArrayList<>(warm);
                warm.clear();
                destroying += toDestroy.size();
                toFail = new ArrayList<>(waiters);
                waiters.clear();
                toFail.forEach(w -> w.done = true);
                if (scheduledPump != null) {
                    scheduledPump.dispose();
                }
                if (audit != null) {
                    audit.dispose();
                }
            }
            for (Waiter w : toFail) {
                w.timer.dispose();
                w.sink.error(new ProviderClosedException("pool"));
            }
            return Flux.fromIterable(toDestroy)
                    .flatMap(
                            s -> s.destroy()
                                    .onErrorResume(e -> {
                                        LOG.warn("cannot destroy warm session {}: {}", s.id(), e.toString());
                                        return Mono.empty();
                                    })
                                    .doFinally(sig -> {
                                        synchronized (lock) {
                                            destroying--;
                                        }
                                        checkDrained(); // doFinally runs after the completion went on
                                    }),
                            8)
                    .then(Mono.fromRunnable(this::checkDrained))
                    // creates still in flight end destroyed, and released sessions being destroyed end
                    .then(drained.asMono());
        });
    }
}
