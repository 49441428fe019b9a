package dev.sandbox.micrometer;

import dev.sandbox.SandboxSession;
import dev.sandbox.SessionStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * Publishes a session's resource use ({@link SandboxSession#stats(Duration)}) as meters while someone observes it:
 * counter {@value #CPU} (seconds), gauges {@value #MEMORY} and {@value #MEMORY_PEAK} (bytes) and {@value #PIDS}, each
 * tagged {@code session} with the session's id. The meters are registered with the first sample and removed from the
 * registry when the observation ends (cancelled, or the session ended), so a registry holds meters only for sessions
 * being watched.
 *
 * <pre>{@code
 * Disposable watching = SessionStatsMetrics.bind(session, Duration.ofSeconds(5), meterRegistry);
 * // sandbox.session.memory{session=docker-3f9a...} 1.048576E8
 * watching.dispose(); // the session's meters are gone
 * }</pre>
 */
public final class SessionStatsMetrics {
    /** Counter: the session's CPU time, in seconds. */
    public static final String CPU = "sandbox.session.cpu.time";

    /** Gauge: the memory the session uses, in bytes. */
    public static final String MEMORY = "sandbox.session.memory";

    /** Gauge: the highest memory use known, in bytes. */
    public static final String MEMORY_PEAK = "sandbox.session.memory.peak";

    /** Gauge: the processes running in the session. */
    public static final String PIDS = "sandbox.session.pids";

    private SessionStatsMetrics() {}

    /**
     * The session's samples with the meters kept up to date while the returned stream is subscribed; nothing is
     * sampled or registered before a subscriber comes, and the meters go when it cancels or the stream ends.
     *
     * @param session the session
     * @param interval the time between samples (see {@link SandboxSession#stats(Duration)})
     * @param registry where the meters go
     * @return the samples, as {@code session.stats(interval)} gives them
     */
    public static Flux<SessionStats> observe(SandboxSession session, Duration interval, MeterRegistry registry) {
        Objects.requireNonNull(session, "session");
        Objects.requireNonNull(registry, "registry");
        return Flux.defer(() -> {
            AtomicReference<SessionStats> latest = new AtomicReference<>();
            AtomicReference<List<Meter>> meters = new AtomicReference<>(List.of());
            return session.stats(interval)
                    .doOnNext(s -> {
                        if (latest.getAndSet(s) == null) {
                            meters.set(register(session.id(), latest, registry));
                        }
                    })
                    .doFinally(signal -> meters.getAndSet(List.of()).forEach(registry::remove));
        });
    }

    /**
     * Observes the session until the returned handle is disposed or the session ends; errors of the stream (the
     * session ended, a bad interval) end the observation without being thrown anywhere.
     *
     * @param session the session
     * @param interval the time between samples
     * @param registry where the meters go
     * @return disposing it stops the sampling and removes the meters
     */
    public static Disposable bind(SandboxSession session, Duration interval, MeterRegistry registry) {
        return observe(session, interval, registry).subscribe(s -> {}, e -> {});
    }

    private static List<Meter> register(String sessionId, AtomicReference<SessionStats> latest, MeterRegistry r) {
        Tags tags = Tags.of("session", sessionId);
        return List.of(
                FunctionCounter.builder(CPU, latest, value(s -> s.cpuTime().toNanos() / 1e9))
                        .baseUnit("seconds")
                        .tags(tags)
                        .register(r),
                gauge(r, MEMORY, latest, tags, "bytes", s -> s.memoryBytes()),
                gauge(r, MEMORY_PEAK, latest, tags, "bytes", s -> s.memoryPeakBytes()),
                gauge(r, PIDS, latest, tags, null, s -> s.pids()));
    }

    private static Gauge gauge(
            MeterRegistry r,
            String name,
            AtomicReference<SessionStats> latest,
            Tags tags,
            @Nullable String unit,
            ToDoubleFunction<SessionStats> read) {
        Gauge.Builder<AtomicReference<SessionStats>> b =
                Gauge.builder(name, latest, value(read)).tags(tags);
        return (unit == null ? b : b.baseUnit(unit)).register(r);
    }

    private static ToDoubleFunction<AtomicReference<SessionStats>> value(ToDoubleFunction<SessionStats> read) {
        return ref -> {
            SessionStats s = ref.get();
            return s == null ? Double.NaN : read.applyAsDouble(s);
        };
    }
}
