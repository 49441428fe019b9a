package dev.sandbox.blocking;

import dev.sandbox.SessionStats;
import java.time.Duration;
import org.reactivestreams.Publisher;

/**
 * A session's resource samples read by blocking iteration; from {@link SandboxClient#stats(Duration)}. The first
 * sample comes at once, then one per interval; each wait for the next is bounded by {@link #timeout()} (the interval
 * plus the client's default timeout). Samples are not queued while nobody reads: one is held, the ticks in between are
 * skipped. Sampling runs until {@link #close()} (use try-with-resources) or the session ends, when iteration throws
 * {@link dev.sandbox.SessionClosedException}.
 *
 * <pre>{@code
 * try (SessionStatsStream stats = client.stats(Duration.ofSeconds(1))) {
 *     for (SessionStats s : stats) {
 *         System.out.println((s.memoryBytes() >> 20) + " MiB");
 *         if (s.cpuTime().toSeconds() > 60) break;
 *     }
 * }
 * }</pre>
 */
public final class SessionStatsStream extends BlockingStream<SessionStats> {
    private SessionStatsStream(Duration timeout, String operation) {
        super("SessionStatsStream", "the stats have ended", timeout, 1, operation);
    }

    /** Subscribes at once; the first sample is taken now. */
    static SessionStatsStream open(Publisher<SessionStats> samples, Duration timeout, String operation) {
        SessionStatsStream stream = new SessionStatsStream(timeout, operation);
        stream.subscribe(samples);
        return stream;
    }
}
