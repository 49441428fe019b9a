package dev.sandbox.micrometer;

import dev.sandbox.pool.PoolStats;
import dev.sandbox.pool.SandboxPool;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Publishes a {@link SandboxPool}'s counts as meters, read from {@link SandboxPool#stats()} whenever the registry
 * samples them: gauges {@value #SESSIONS} (tag {@code state}: {@code warm}, {@code in_use}, {@code creating}, {@code
 * destroying}) and {@value #WAITING}, and counters {@value #ACQUIRED} (tag {@code start}: {@code warm} or {@code
 * cold}), {@value #CREATE_FAILURES} and {@value #REJECTED}. Every meter carries the tag {@code pool}.
 *
 * <pre>{@code
 * SandboxPoolMetrics.bind(pool, "default", meterRegistry);
 * // sandbox.pool.sessions{pool=default,state=warm} 8.0
 * }</pre>
 */
public final class SandboxPoolMetrics {
    /** Gauge: sessions of the pool by state. */
    public static final String SESSIONS = "sandbox.pool.sessions";

    /** Gauge: callers waiting for a session. */
    public static final String WAITING = "sandbox.pool.waiting";

    /** Counter: sessions handed out, by whether a warm one was there ({@code warm}) or the caller waited ({@code cold}). */
    public static final String ACQUIRED = "sandbox.pool.acquired";

    /** Counter: creates that failed. */
    public static final String CREATE_FAILURES = "sandbox.pool.create.failures";

    /** Counter: acquires refused with {@code PoolAtCapacityException}. */
    public static final String REJECTED = "sandbox.pool.rejected";

    private SandboxPoolMetrics() {}

    /**
     * Registers the pool's meters. They hold the pool weakly, as Micrometer's gauges do: a pool that is gone reads as
     * not a number.
     *
     * @param pool the pool
     * @param name the value of the {@code pool} tag, telling the application's pools apart
     * @param registry where the meters go
     */
    public static void bind(SandboxPool pool, String name, MeterRegistry registry) {
        Objects.requireNonNull(pool, "pool");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(registry, "registry");
        Tags tags = Tags.of("pool", name);
        gauge(registry, pool, SESSIONS, tags.and("state", "warm"), s -> s.warm());
        gauge(registry, pool, SESSIONS, tags.and("state", "in_use"), s -> s.inUse());
        gauge(registry, pool, SESSIONS, tags.and("state", "creating"), s -> s.creating());
        gauge(registry, pool, SESSIONS, tags.and("state", "destroying"), s -> s.destroying());
        gauge(registry, pool, WAITING, tags, s -> s.waiting());
        counter(registry, pool, ACQUIRED, tags.and("start", "warm"), s -> s.acquired() - s.coldAcquires());
        counter(registry, pool, ACQUIRED, tags.and("start", "cold"), s -> s.coldAcquires());
        counter(registry, pool, CREATE_FAILURES, tags, s -> s.createFailures());
        counter(registry, pool, REJECTED, tags, s -> s.rejected());
    }

    private static void gauge(
            MeterRegistry registry, SandboxPool pool, String name, Tags tags, ToDoubleFunction<PoolStats> read) {
        Gauge.builder(name, pool, p -> read.applyAsDouble(p.stats())).tags(tags).register(registry);
    }

    private static void counter(
            MeterRegistry registry, SandboxPool pool, String name, Tags tags, ToDoubleFunction<PoolStats> read) {
        FunctionCounter.builder(name, pool, p -> read.applyAsDouble(p.stats()))
                .tags(tags)
                .register(registry);
    }
}
