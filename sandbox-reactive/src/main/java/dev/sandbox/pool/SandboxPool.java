package dev.sandbox.pool;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.implementation.pool.PoolEngine;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Sessions of one template created ahead of need: {@link #acquire()} hands out a warm one at once (customised with a
 * {@link Claim}), the pool makes a fresh one in its place in the background, and a session given back is destroyed,
 * never handed out again (it ran the caller's code). Works on any provider; the sessions are the provider's own, so
 * they are leased like any other and a JVM that dies leaves nothing behind for long.
 *
 * <p>It is also the admission control in front of the provider: at most {@link Builder#maxSessions(int)} sessions are
 * alive (warm, in use, being created or destroyed) and at most {@link Builder#maxCreatesInFlight(int)} creates run at
 * once, at most {@link Builder#refillPerSecond(double)} a second. Callers beyond that wait in FIFO order, at most
 * {@link Builder#maxWaiting(int)} of them and each at most {@link Builder#acquireTimeout(Duration)}, then fail with a
 * retryable {@link PoolAtCapacityException}. Cancelling a waiting acquire takes it off the queue. A failing create
 * backs off exponentially (up to 30 s); one that cannot pass by retrying (an image that does not exist) fails the
 * waiting callers with its cause at once. A session handed out that ends without being given back (its lifetime ran
 * out, it was destroyed through another handle, its container died) is noticed within five seconds and its place
 * freed.
 *
 * <pre>{@code
 * SandboxPool pool = SandboxPool.builder(provider)
 *     .template(SessionOptions.defaults().withLabel("team", "search"))
 *     .warm(8)
 *     .maxSessions(32)
 *     .build();
 * Flux<ExecEvent> out = pool.withSession(Claim.defaults().withEnv("TENANT", "acme"),
 *     session -> session.exec(ExecOptions.shell("python3 job.py")));
 * }</pre>
 */
public final class SandboxPool implements AutoCloseable {
    /** The warm sessions a pool keeps by default. */
    public static final int DEFAULT_WARM = 4;

    /** How long an acquire waits by default. */
    public static final Duration DEFAULT_ACQUIRE_TIMEOUT = Duration.ofSeconds(30);

    private final PoolEngine engine;

    private SandboxPool(Builder b) {
        int cap = b.maxSessions > 0 ? b.maxSessions : Math.max(b.warm * 4, b.warm + 16);
        if (cap < b.warm) {
            throw new InvalidArgumentException(
                    "maxSessions", "maxSessions (" + cap + ") must be at least warm (" + b.warm + ")");
        }
        this.engine = new PoolEngine(
                b.provider,
                b.template,
                b.warm,
                cap,
                b.maxCreatesInFlight,
                b.maxWaiting,
                b.acquireTimeout,
                b.refillPerSecond);
        engine.start();
    }

    /**
     * Starts configuring a pool on a provider. The pool does not own the provider: close the pool, then the provider.
     *
     * @param provider where the sessions are created
     * @return a builder with the defaults
     */
    public static Builder builder(SandboxProvider provider) {
        return new Builder(Objects.requireNonNull(provider, "provider"));
    }

    /**
     * Takes a session as the template made it; see {@link #acquire(Claim)}.
     *
     * @return the session
     */
    public Mono<SandboxSession> acquire() {
        return acquire(Claim.defaults());
    }

    /**
     * Takes a session: a warm one at once when there is one, else the next one created, in the order callers asked.
     * The claim is applied before the session is handed out. Give the session back with {@link SandboxSession#close()}
     * or {@link SandboxSession#destroy()} (both destroy it); or use {@link #withSession}, which does.
     *
     * @param claim what to make of the session
     * @return the session; a {@link PoolAtCapacityException} when none came within the acquire timeout or the queue
     *     was full
     */
    public Mono<SandboxSession> acquire(Claim claim) {
        Objects.requireNonNull(claim, "claim");
        return engine.acquire(claim);
    }

    /**
     * Runs a function with a session taken from the pool and gives the session back when the function's publisher
     * ends, fails or is cancelled.
     *
     * @param claim what to make of the session
     * @param fn what to do with it
     * @param <T> what the function emits
     * @return what the function emits
     */
    public <T> Flux<T> withSession(Claim claim, Function<SandboxSession, ? extends Publisher<T>> fn) {
        Objects.requireNonNull(fn, "fn");
        return Flux.usingWhen(acquire(claim), fn, SandboxSession::destroy);
    }

    /**
     * What the pool holds now.
     *
     * @return the counts
     */
    public PoolStats stats() {
        return engine.stats();
    }

    /**
     * Stops refilling, fails the waiting callers, and destroys the warm sessions; sessions in use are destroyed when
     * they are given back. Idempotent.
     *
     * @return completes when the warm sessions, and those whose creates were in flight, are destroyed
     */
    public Mono<Void> closeAsync() {
        return engine.close();
    }

    /** {@link #closeAsync()}, waiting at most a minute. */
    @Override
    public void close() {
        closeAsync().block(Duration.ofMinutes(1));
    }

    /** Configures a {@link SandboxPool}. */
    public static final class Builder {
        private final SandboxProvider provider;
        private SessionOptions template = SessionOptions.defaults();
        private int warm = DEFAULT_WARM;
        private int maxSessions;
        private int maxCreatesInFlight = 4;
        private int maxWaiting = 1024;
        private Duration acquireTimeout = DEFAULT_ACQUIRE_TIMEOUT;
        private double refillPerSecond = 10;

        private Builder(SandboxProvider provider) {
            this.provider = provider;
        }

        /**
         * Sets the options every session is created with. A session waits warm without a lifetime (leased like any
         * session whose lifetime was not chosen); the template's lifetime, or the claim's, starts at the claim.
         *
         * @param template the session options
         * @return this builder
         */
        public Builder template(SessionOptions template) {
            this.template = Objects.requireNonNull(template, "template").validate();
            return this;
        }

        /**
         * Sets how many sessions the pool keeps created and waiting (default {@value #DEFAULT_WARM}).
         *
         * @param warm 0 or more; 0 makes the pool admission control only
         * @return this builder
         */
        public Builder warm(int warm) {
            this.warm = atLeast("warm", warm, 0);
            return this;
        }

        /**
         * Sets the most sessions alive at once: warm, in use, being created and being destroyed (default: four
         * times {@code warm}, at least {@code warm} + 16).
         *
         * @param maxSessions at least 1 and at least {@code warm}
         * @return this builder
         */
        public Builder maxSessions(int maxSessions) {
            this.maxSessions = atLeast("maxSessions", maxSessions, 1);
            return this;
        }

        /**
         * Sets the most creates running at once (default 4): the provider's daemon or API server is the bottleneck.
         *
         * @param maxCreatesInFlight at least 1
         * @return this builder
         */
        public Builder maxCreatesInFlight(int maxCreatesInFlight) {
            this.maxCreatesInFlight = atLeast("maxCreatesInFlight", maxCreatesInFlight, 1);
            return this;
        }

        /**
         * Sets the most callers waiting at once (default 1024); one more fails at once with {@link
         * PoolAtCapacityException}.
         *
         * @param maxWaiting 0 or more
         * @return this builder
         */
        public Builder maxWaiting(int maxWaiting) {
            this.maxWaiting = atLeast("maxWaiting", maxWaiting, 0);
            return this;
        }

        /**
         * Sets how long a caller waits for a session (default 30 s).
         *
         * @param acquireTimeout a positive duration
         * @return this builder
         */
        public Builder acquireTimeout(Duration acquireTimeout) {
            if (acquireTimeout == null || acquireTimeout.isZero() || acquireTimeout.isNegative()) {
                throw new InvalidArgumentException(
                        "acquireTimeout", "acquireTimeout must be positive, got " + acquireTimeout);
            }
            this.acquireTimeout = acquireTimeout;
            return this;
        }

        /**
         * Sets the most creates started per second (default 10), for refills and for waiting callers alike.
         *
         * @param refillPerSecond a positive rate
         * @return this builder
         */
        public Builder refillPerSecond(double refillPerSecond) {
            if (!(refillPerSecond > 0) || Double.isInfinite(refillPerSecond)) {
                throw new InvalidArgumentException(
                        "refillPerSecond", "refillPerSecond must be a positive number, got " + refillPerSecond);
            }
            this.refillPerSecond = refillPerSecond;
            return this;
        }

        private static int atLeast(String field, int value, int min) {
            if (value < min) {
                throw new InvalidArgumentException(field, field + " must be at least " + min + ", got " + value);
            }
            return value;
        }

        /**
         * Builds the pool and starts filling it.
         *
         * @return the pool
         */
        public SandboxPool build() {
            return new SandboxPool(this);
        }
    }
}
