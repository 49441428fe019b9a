package dev.sandbox;

import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * One sample of a session's resource use, as {@link SandboxSession#stats(Duration)} streams them.
 *
 * <pre>{@code
 * session.stats(Duration.ofSeconds(1))
 *     .take(5)
 *     .subscribe(s -> System.out.printf("cpu %d ms, memory %d MiB (peak %d MiB), %d pids%n",
 *         s.cpuTime().toMillis(), s.memoryBytes() >> 20, s.memoryPeakBytes() >> 20, s.pids()));
 * }</pre>
 *
 * <p>Figures a provider cannot give are {@value #UNKNOWN}: say, disk writes under gVisor, or network bytes of a
 * sandbox without a network other than its loopback. Every figure is checked before it is handed out (a figure read
 * from a sandbox is not trusted): never below {@value #UNKNOWN}, never above {@link #MAX_FIGURE}, and within one
 * stream the cumulative ones ({@link #cpuTime()}, {@link #diskWriteBytes()}, the network bytes) never go down.
 *
 * @param sampledAt when the sample was taken (by the provider's clock, or the Docker daemon's)
 * @param cpuTime the CPU time the session's processes have used since the session started (cumulative)
 * @param memoryBytes the memory the session uses now, in bytes (see {@link SandboxSession#stats} for what each
 *     provider counts)
 * @param memoryPeakBytes the highest memory use known, in bytes: the sandbox's own record where the provider keeps
 *     one, otherwise the highest of this stream's samples; never below {@code memoryBytes}
 * @param pids the processes (and threads, where the provider counts tasks) running in the session now
 * @param diskWriteBytes the bytes written to block devices since the session started (cumulative), or {@value
 *     #UNKNOWN}
 * @param networkInBytes the bytes received on the sandbox's network interfaces other than loopback (cumulative), or
 *     {@value #UNKNOWN} when the sandbox has no such network or the provider cannot tell
 * @param networkOutBytes the bytes sent on them (cumulative), or {@value #UNKNOWN} likewise
 */
public record SessionStats(
        Instant sampledAt,
        Duration cpuTime,
        long memoryBytes,
        long memoryPeakBytes,
        long pids,
        long diskWriteBytes,
        long networkInBytes,
        long networkOutBytes) {

    /** What a figure the provider cannot give is. */
    public static final long UNKNOWN = -1;

    /**
     * The largest figure a sample holds: 2<sup>62</sup> (4 EiB, or 146 years of CPU time in nanoseconds), so that
     * adding two figures never overflows.
     */
    public static final long MAX_FIGURE = 1L << 62;

    /** The shortest interval {@link SandboxSession#stats(Duration)} accepts. */
    public static final Duration MIN_INTERVAL = Duration.ofMillis(100);

    /** The longest interval {@link SandboxSession#stats(Duration)} accepts. */
    public static final Duration MAX_INTERVAL = Duration.ofHours(24);

    /**
     * Checks an interval as {@link SandboxSession#stats(Duration)} does, for code that takes one before it asks.
     *
     * <pre>{@code
     * SessionStats.checkInterval(Duration.ofMillis(50)); // InvalidArgumentException naming interval
     * }</pre>
     *
     * @param interval the interval
     * @return the interval
     * @throws InvalidArgumentException naming {@code interval} when it is missing or outside {@link #MIN_INTERVAL} to
     *     {@link #MAX_INTERVAL}
     */
    public static Duration checkInterval(@Nullable Duration interval) {
        if (interval == null || interval.compareTo(MIN_INTERVAL) < 0 || interval.compareTo(MAX_INTERVAL) > 0) {
            throw new InvalidArgumentException(
                    "interval",
                    "interval must be between " + MIN_INTERVAL + " and " + MAX_INTERVAL + ", got " + interval);
        }
        return interval;
    }

    /**
     * Creates a sample, checking every figure.
     *
     * @param sampledAt when the sample was taken
     * @param cpuTime the cumulative CPU time, not negative
     * @param memoryBytes the memory in use, not negative
     * @param memoryPeakBytes the peak memory, at least {@code memoryBytes}
     * @param pids the processes running, not negative
     * @param diskWriteBytes the cumulative disk writes, or {@value #UNKNOWN}
     * @param networkInBytes the cumulative bytes received, or {@value #UNKNOWN}
     * @param networkOutBytes the cumulative bytes sent, or {@value #UNKNOWN}
     * @throws InvalidArgumentException naming the figure that is out of range
     */
    public SessionStats {
        if (sampledAt == null) {
            throw new InvalidArgumentException("sampledAt", "sampledAt must be given");
        }
        if (cpuTime == null || cpuTime.isNegative() || cpuTime.compareTo(Duration.ofNanos(MAX_FIGURE)) > 0) {
            throw new InvalidArgumentException(
                    "cpuTime", "cpuTime must be between 0 and " + MAX_FIGURE + " ns, got " + cpuTime);
        }
        known("memoryBytes", memoryBytes);
        known("memoryPeakBytes", memoryPeakBytes);
        known("pids", pids);
        if (memoryPeakBytes < memoryBytes) {
            throw new InvalidArgumentException(
                    "memoryPeakBytes",
                    "memoryPeakBytes must be at least memoryBytes (" + memoryBytes + "), got " + memoryPeakBytes);
        }
        orUnknown("diskWriteBytes", diskWriteBytes);
        orUnknown("networkInBytes", networkInBytes);
        orUnknown("networkOutBytes", networkOutBytes);
    }

    /**
     * Whether the sample has network figures: {@code false} for a sandbox without a network other than loopback.
     *
     * @return {@code true} when {@link #networkInBytes()} and {@link #networkOutBytes()} are known
     */
    public boolean hasNetwork() {
        return networkInBytes != UNKNOWN && networkOutBytes != UNKNOWN;
    }

    private static void known(String field, long value) {
        if (value < 0 || value > MAX_FIGURE) {
            throw new InvalidArgumentException(
                    field, field + " must be between 0 and " + MAX_FIGURE + ", got " + value);
        }
    }

    private static void orUnknown(String field, long value) {
        if (value != UNKNOWN) {
            known(field, value);
        }
    }
}
