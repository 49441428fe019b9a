package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionStats;
import dev.sandbox.UnsupportedFeatureException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

/**
 * Resource stats ({@link SandboxSession#stats(Duration)}): a first sample at once, then one per interval; memory
 * rises under a program that holds 100 MiB, pids under a loop of background sleeps, CPU time under a busy loop; a bad
 * interval is refused naming {@code interval}; cancelling stops the samples; a destroyed session ends the stream. A
 * provider that cannot measure says so with {@link UnsupportedFeatureException}, and its test class says so with
 * {@link #supportsStats()}.
 *
 * <pre>{@code
 * class MyProviderConformanceTest implements SandboxProviderConformance {
 *     public boolean supportsStats() { return false; } // only where the provider cannot
 * }
 * }</pre>
 */
public interface StatsConformance extends ConformanceBase {

    /**
     * Whether the provider under test measures its sessions; without it, {@code stats} must fail typed.
     *
     * @return {@code true} unless overridden
     */
    default boolean supportsStats() {
        return true;
    }

    /** The interval the kit samples at. */
    Duration STATS_INTERVAL = Duration.ofMillis(200);

    /** Samples until one passes the check, at most {@link #WAIT}; returns it. */
    private static SessionStats awaitSample(SandboxSession s, String what, Predicate<SessionStats> check) {
        SessionStats found = s.stats(STATS_INTERVAL).filter(check).blockFirst(WAIT);
        assertThat(found).as(what).isNotNull();
        return found;
    }

    private static SessionStats first(SandboxSession s) {
        return s.stats(Duration.ofHours(1)).blockFirst(WAIT);
    }

    /** Required: the first sample does not wait for the interval (an hour), and its figures hold together. */
    @Test
    default void theFirstSampleDoesNotWaitForTheIntervalAndHoldsTogether() {
        inSession(s -> {
            if (!supportsStats()) {
                StepVerifier.create(s.stats(Duration.ofSeconds(1)))
                        .expectError(UnsupportedFeatureException.class)
                        .verify(WAIT);
                return;
            }
            Instant before = Instant.now();
            SessionStats st = first(s);
            assertThat(st.sampledAt())
                    .isBetween(before.minusSeconds(5), Instant.now().plusSeconds(5));
            assertThat(st.memoryPeakBytes()).isGreaterThanOrEqualTo(st.memoryBytes());
            assertThat(st.cpuTime().isNegative()).isFalse();
            assertThat(st.pids()).isNotNegative();
        });
    }

    /** Required: memory rises by most of 100 MiB while a program holds that much, and the peak keeps it. */
    @Test
    default void memoryRisesUnderAHog() {
        if (!supportsStats()) {
            return;
        }
        inSession(s -> {
            long base = first(s).memoryBytes();
            // tail keeps its last line until its input ends: 100 MiB of zeros without a newline, held while the sleep
            // keeps the pipe open
            BackgroundProcess hog = s.start(ExecOptions.shell("(head -c 104857600 /dev/zero; sleep 60) | tail"))
                    .block(WAIT);
            try {
                SessionStats high =
                        awaitSample(s, "a sample 80 MiB above " + base, st -> st.memoryBytes() >= base + (80L << 20));
                assertThat(high.memoryPeakBytes()).isGreaterThanOrEqualTo(high.memoryBytes());
            } finally {
                hog.kill().block(WAIT);
            }
        });
    }

    /** Required: pids rise by 20 while 20 background sleeps run. */
    @Test
    default void pidsRiseUnderABackgroundLoopOfSleeps() {
        if (!supportsStats()) {
            return;
        }
        inSession(s -> {
            long base = first(s).pids();
            BackgroundProcess loop = s.start(
                            ExecOptions.shell("i=0; while [ $i -lt 20 ]; do sleep 60 & i=$((i+1)); done; wait"))
                    .block(WAIT);
            try {
                awaitSample(s, "a sample with 20 pids above " + base, st -> st.pids() >= base + 20);
            } finally {
                loop.kill().block(WAIT);
            }
        });
    }

    /** Required: CPU time rises by half a second under a busy loop, and never goes down. */
    @Test
    default void cpuTimeRisesUnderABusyLoop() {
        if (!supportsStats()) {
            return;
        }
        inSession(s -> {
            Duration base = first(s).cpuTime();
            BackgroundProcess busy =
                    s.start(ExecOptions.shell("while :; do :; done")).block(WAIT);
            try {
                List<SessionStats> seen = s.stats(STATS_INTERVAL)
                        .takeUntil(st -> st.cpuTime().compareTo(base.plusMillis(500)) >= 0)
                        .collectList()
                        .block(WAIT);
                assertThat(seen.get(seen.size() - 1).cpuTime()).isGreaterThanOrEqualTo(base.plusMillis(500));
                for (int i = 1; i < seen.size(); i++) {
                    assertThat(seen.get(i).cpuTime())
                            .isGreaterThanOrEqualTo(seen.get(i - 1).cpuTime());
                }
            } finally {
                busy.kill().block(WAIT);
            }
        });
    }

    /** Required: a missing, too short or too long interval is refused naming {@code interval} and the value. */
    @Test
    default void aBadIntervalIsRefusedNamingIt() {
        inSession(s -> {
            for (Duration bad : new Duration[] {
                Duration.ZERO, Duration.ofMillis(-1), Duration.ofMillis(99), Duration.ofDays(2), null
            }) {
                if (!supportsStats()) {
                    assertThatThrownBy(() -> s.stats(bad).blockFirst(WAIT))
                            .isInstanceOf(UnsupportedFeatureException.class);
                    continue;
                }
                assertThatThrownBy(() -> s.stats(bad).blockFirst(WAIT))
                        .isInstanceOfSatisfying(InvalidArgumentException.class, e -> {
                            assertThat(e.field()).isEqualTo("interval");
                            assertThat(e.getMessage()).contains(String.valueOf(bad));
                        });
            }
        });
    }

    /**
     * Required: samples come about once per interval, and none after the subscriber cancels; a session destroyed
     * while sampled ends the stream with {@link SessionClosedException}.
     *
     * @throws InterruptedException if interrupted while waiting for samples
     */
    @Test
    default void cancellingStopsTheSamplesAndDestroyEndsThem() throws InterruptedException {
        if (!supportsStats()) {
            return;
        }
        SandboxSession s = provider().create(sessionOptions()).block(WAIT);
        try {
            AtomicInteger count = new AtomicInteger();
            Disposable sub = s.stats(STATS_INTERVAL).subscribe(st -> count.incrementAndGet());
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (count.get() < 3 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(count.get()).as("samples at %s", STATS_INTERVAL).isGreaterThanOrEqualTo(3);
            sub.dispose();
            int atCancel = count.get();
            Thread.sleep(STATS_INTERVAL.toMillis() * 5);
            assertThat(count.get()).as("samples after cancelling").isEqualTo(atCancel);

            StepVerifier.create(s.stats(STATS_INTERVAL))
                    .expectNextCount(1)
                    .then(() -> s.destroy().block(WAIT))
                    .thenConsumeWhile(st -> true)
                    .expectError(SessionClosedException.class)
                    .verify(WAIT);
        } finally {
            s.destroy().block(WAIT);
        }
    }
}
