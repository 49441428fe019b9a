package dev.sandbox.implementation.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SessionStats;
import dev.sandbox.implementation.stats.StatsStream.Reading;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

class StatsStreamTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private static Reading reading(long cpu, long memory, long peak, long pids, long disk, long in, long out) {
        return new Reading(Instant.now(), cpu, memory, peak, pids, disk, in, out);
    }

    @Test
    void nothingIsReadBeforeASubscriberAndNothingAfterItCancels() throws InterruptedException {
        AtomicInteger reads = new AtomicInteger();
        Flux<SessionStats> stats = StatsStream.of(
                Duration.ofMillis(100),
                () -> Mono.fromSupplier(() -> {
                    reads.incrementAndGet();
                    return reading(1, 1, -1, 1, -1, -1, -1);
                }));
        Thread.sleep(300);
        assertThat(reads).hasValue(0);

        AtomicInteger got = new AtomicInteger();
        Disposable sub = stats.subscribe(s -> got.incrementAndGet());
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (got.get() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        sub.dispose();
        int atCancel = reads.get();
        Thread.sleep(500);
        assertThat(reads.get()).as("readings after cancel").isEqualTo(atCancel);
    }

    @Test
    void theFirstSampleComesAtOnceAndASlowSubscriberMissesTicksInsteadOfQueueingThem() {
        AtomicInteger reads = new AtomicInteger();
        Flux<SessionStats> stats = StatsStream.of(
                Duration.ofMillis(100),
                () -> Mono.fromSupplier(() -> {
                    reads.incrementAndGet();
                    return reading(1, 1, -1, 1, -1, -1, -1);
                }));
        StepVerifier.create(stats, 1)
                .expectNextCount(1)
                .expectNoEvent(Duration.ofMillis(700)) // 7 ticks pass unasked
                .then(() -> assertThat(reads).as("readings while nobody asked").hasValue(1))
                .thenRequest(1)
                .expectNextCount(1)
                .thenCancel()
                .verify(WAIT);
        StepVerifier.create(StatsStream.of(Duration.ofHours(1), () -> Mono.just(reading(1, 1, -1, 1, -1, -1, -1))))
                .expectNextCount(1)
                .thenCancel()
                .verify(Duration.ofSeconds(2));
    }

    @Test
    void badIntervalsAreRefusedNamingTheFieldAndValue() {
        for (Duration bad : new Duration[] {
            null,
            Duration.ZERO,
            Duration.ofMillis(-5),
            Duration.ofMillis(99),
            Duration.ofHours(24).plusNanos(1)
        }) {
            StepVerifier.create(StatsStream.of(bad, () -> Mono.error(new AssertionError("read"))))
                    .expectErrorSatisfies(e -> assertThat(e)
                            .isInstanceOfSatisfying(InvalidArgumentException.class, iae -> {
                                assertThat(iae.field()).isEqualTo("interval");
                                assertThat(iae.getMessage()).contains(String.valueOf(bad));
                            }))
                    .verify(WAIT);
        }
    }

    @Test
    void garbageFiguresAreBoundedAndCumulativeOnesNeverGoDown() {
        StatsStream.Checker c = new StatsStream.Checker();
        SessionStats a = c.check(reading(5_000, 100, -1, 3, 10, 20, 30));
        assertThat(a.cpuTime()).isEqualTo(Duration.ofNanos(5_000));
        assertThat(a.memoryPeakBytes()).isEqualTo(100);
        // went down, or garbage: the last known values stay
        SessionStats b = c.check(reading(4_000, 50, -7, 2, Long.MIN_VALUE, Long.MAX_VALUE, 5));
        assertThat(b.cpuTime()).isEqualTo(Duration.ofNanos(5_000));
        assertThat(b.memoryBytes()).isEqualTo(50);
        assertThat(b.memoryPeakBytes()).isEqualTo(100);
        assertThat(List.of(b.diskWriteBytes(), b.networkInBytes(), b.networkOutBytes()))
                .containsExactly(10L, 20L, 30L);
        // the sandbox's own peak, when sane, is kept
        assertThat(c.check(reading(6_000, 60, 4096, 2, 11, 21, 31)).memoryPeakBytes())
                .isEqualTo(4096);
        assertThat(c.check(reading(6_000, 60, SessionStats.MAX_FIGURE + 1, 2, 11, 21, 31))
                        .memoryPeakBytes())
                .isEqualTo(4096);
        // unknown from the start stays unknown
        SessionStats fresh = new StatsStream.Checker().check(reading(0, 0, -1, 0, -1, -1, -1));
        assertThat(fresh.hasNetwork()).isFalse();
        assertThat(fresh.diskWriteBytes()).isEqualTo(SessionStats.UNKNOWN);
        // a required figure out of range fails, naming it and the value
        for (Reading bad : List.of(
                reading(-1, 0, -1, 0, -1, -1, -1),
                reading(0, SessionStats.MAX_FIGURE + 1, -1, 0, -1, -1, -1),
                reading(0, 0, -1, -3, -1, -1, -1))) {
            assertThatThrownBy(() -> new StatsStream.Checker().check(bad))
                    .isInstanceOf(BackendException.class)
                    .hasMessageContaining("out of range");
        }
    }

    @Test
    void aSampleRefusesFiguresOutOfRangeNamingThem() {
        assertThatThrownBy(() -> new SessionStats(Instant.now(), Duration.ZERO, 10, 5, 0, -1, -1, -1))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("memoryPeakBytes"));
        assertThatThrownBy(() -> new SessionStats(Instant.now(), Duration.ZERO, 0, 0, 0, -2, -1, -1))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("diskWriteBytes"));
        assertThatThrownBy(() -> new SessionStats(Instant.now(), Duration.ofNanos(-1), 0, 0, 0, -1, -1, -1))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("cpuTime"));
    }
}
