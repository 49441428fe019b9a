package dev.sandbox.implementation.stats;

import dev.sandbox.BackendException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SessionStats;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The stream behind every provider's {@code stats(interval)}: the interval checked, a first sample at once and then
 * one per interval, each taken only once the one before has been delivered (a tick that comes while a sample is still
 * being taken, or while the subscriber has not asked for more, is skipped: nothing queues up), and every reading
 * checked and made monotonic by a {@link Checker} of the stream's own. Nothing is sampled before a subscriber asks;
 * cancelling stops the ticks and the sample in flight. Internal: not part of the public API.
 */
public final class StatsStream {
    private StatsStream() {}

    /**
     * Checks an interval for {@code stats}.
     *
     * @param interval the interval asked for
     * @throws InvalidArgumentException naming {@code interval} and the value when it is missing or out of range
     */
    public static void checkInterval(Duration interval) {
        SessionStats.checkInterval(interval);
    }

    /**
     * The stream of samples.
     *
     * @param interval the interval between samples, checked when subscribed
     * @param reading takes one reading when subscribed; must not block (or must move off a non-blocking thread
     *     itself)
     * @return the samples
     */
    public static Flux<SessionStats> of(Duration interval, Supplier<Mono<Reading>> reading) {
        return Flux.defer(() -> {
            checkInterval(interval);
            Checker checker = new Checker();
            return Flux.interval(Duration.ZERO, interval, Schedulers.parallel())
                    .onBackpressureDrop()
                    .concatMap(tick -> Mono.defer(reading).map(checker::check), 0);
        });
    }

    /**
     * One reading as a provider got it, before checks: any figure may be garbage.
     *
     * @param at when it was read
     * @param cpuNanos cumulative CPU time in nanoseconds
     * @param memoryBytes memory in use
     * @param memoryPeakBytes the sandbox's own peak, or {@code -1} when it keeps none
     * @param pids processes running
     * @param diskWriteBytes cumulative bytes written, or {@code -1}
     * @param networkInBytes cumulative bytes received, or {@code -1}
     * @param networkOutBytes cumulative bytes sent, or {@code -1}
     */
    public record Reading(
            Instant at,
            long cpuNanos,
            long memoryBytes,
            long memoryPeakBytes,
            long pids,
            long diskWriteBytes,
            long networkInBytes,
            long networkOutBytes) {}

    /**
     * Turns a stream's readings into samples: a required figure (CPU time, memory, pids) out of range fails the stream
     * with a {@link BackendException} naming it; an optional one out of range is {@link SessionStats#UNKNOWN}; a
     * cumulative figure that went down keeps its last value; the peak is at least every memory figure seen. Used by
     * one stream at a time (its samples are taken one after another).
     */
    public static final class Checker {
        private long cpu;
        private long peak;
        private long disk = SessionStats.UNKNOWN;
        private long in = SessionStats.UNKNOWN;
        private long out = SessionStats.UNKNOWN;

        /** A checker for a new stream: nothing seen yet. */
        public Checker() {}

        /**
         * Checks one reading.
         *
         * @param r the reading
         * @return the sample
         */
        public SessionStats check(Reading r) {
            long cpuNow = required("cpu time", r.cpuNanos());
            long memory = required("memory", r.memoryBytes());
            long pids = required("pids", r.pids());
            cpu = Math.max(cpu, cpuNow);
            peak = Math.max(peak, Math.max(memory, inRange(r.memoryPeakBytes()) ? r.memoryPeakBytes() : 0));
            disk = cumulative(disk, r.diskWriteBytes());
            in = cumulative(in, r.networkInBytes());
            out = cumulative(out, r.networkOutBytes());
            return new SessionStats(r.at(), Duration.ofNanos(cpu), memory, peak, pids, disk, in, out);
        }

        private static boolean inRange(long v) {
            return v >= 0 && v <= SessionStats.MAX_FIGURE;
        }

        private static long required(String figure, long v) {
            if (!inRange(v)) {
                throw new BackendException("the sandbox reported " + figure + " out of range: " + v, null);
            }
            return v;
        }

        private static long cumulative(long last, long now) {
            if (!inRange(now)) {
                return last; // unknown now: what was known stays (or stays unknown)
            }
            return Math.max(last, now);
        }
    }
}
