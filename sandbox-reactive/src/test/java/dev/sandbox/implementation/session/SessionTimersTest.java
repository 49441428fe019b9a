package dev.sandbox.implementation.session;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.SessionEndReason;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A session's lifetime and idle timeout on virtual time ({@link SessionTimers.Time#on} of a {@link VirtualTimeScheduler}): each deadline is checked just before
 * and just after it, in no time at all, where the providers' conformance kit waits for them in real seconds.
 */
class SessionTimersTest {
    private final VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
    private final List<SessionEndReason> ends = new CopyOnWriteArrayList<>();
    private final AtomicInteger running = new AtomicInteger();
    private final SessionTimers timers =
            new SessionTimers("s-1", running::get, ends::add, SessionTimers.Time.on(scheduler));

    @AfterEach
    void stop() {
        timers.stop();
        scheduler.dispose();
    }

    private void advance(Duration d) {
        scheduler.advanceTimeBy(d);
    }

    @Test
    void aLifetimeEndsTheSessionAtItsDeadlineOnce() {
        timers.setLifetime(Duration.ofMinutes(10));
        assertThat(timers.expiresAt()).isEqualTo(Instant.EPOCH.plus(Duration.ofMinutes(10)));

        advance(Duration.ofMinutes(10).minusMillis(1));
        assertThat(ends).isEmpty();
        advance(Duration.ofMillis(1));
        assertThat(ends).containsExactly(SessionEndReason.LIFETIME_EXPIRED);
        advance(Duration.ofDays(1));
        assertThat(ends).as("ended once").hasSize(1);
    }

    @Test
    void aLifetimeSetAgainCountsFromThen() {
        timers.setLifetime(Duration.ofSeconds(1));
        advance(Duration.ofMillis(500));
        timers.setLifetime(Duration.ofSeconds(20));
        advance(Duration.ofMillis(1800));
        assertThat(ends).as("past the first deadline").isEmpty();
        advance(Duration.ofMillis(20_500 - 2300 - 1));
        assertThat(ends).isEmpty();
        advance(Duration.ofMillis(1));
        assertThat(ends).containsExactly(SessionEndReason.LIFETIME_EXPIRED);
    }

    @Test
    void aPausedIdleClockDoesNotEndTheSessionButItsLifetimeDoesAndResumeCountsFromThen() {
        timers.setIdleTimeout(Duration.ofSeconds(30));
        timers.setLifetime(Duration.ofHours(2));
        advance(Duration.ofSeconds(20));
        timers.pauseIdle();
        advance(Duration.ofHours(1));
        assertThat(ends).as("paused an hour with a 30 s idle timeout").isEmpty();
        timers.resumeIdle();
        assertThat(timers.lastActivity())
                .isEqualTo(Instant.EPOCH.plusSeconds(20).plus(Duration.ofHours(1)));
        advance(Duration.ofSeconds(30).minusMillis(1));
        assertThat(ends).as("30 s after the resume, less a millisecond").isEmpty();
        advance(Duration.ofMillis(1));
        assertThat(ends).containsExactly(SessionEndReason.IDLE_TIMEOUT);

        SessionTimers other = new SessionTimers("s-2", running::get, ends::add, SessionTimers.Time.on(scheduler));
        other.setLifetime(Duration.ofSeconds(10));
        other.pauseIdle();
        advance(Duration.ofSeconds(10));
        assertThat(ends).as("the lifetime ends a paused session").endsWith(SessionEndReason.LIFETIME_EXPIRED);
        other.stop();
    }

    @Test
    void noLifetimeNeverEnds() {
        timers.setLifetime(Duration.ofSeconds(1));
        timers.setLifetime(null);
        advance(Duration.ofDays(365));
        assertThat(ends).isEmpty();
    }

    @Test
    void anIdleTimeoutEndsAQuietSessionAndActivityPostponesIt() {
        timers.setIdleTimeout(Duration.ofSeconds(30));
        advance(Duration.ofSeconds(20));
        timers.touch();
        assertThat(timers.lastActivity()).isEqualTo(Instant.EPOCH.plusSeconds(20));
        advance(Duration.ofSeconds(30).minusMillis(1));
        assertThat(ends)
                .as("30 s after the start, but not after the last activity")
                .isEmpty();
        advance(Duration.ofMillis(1));
        assertThat(ends).containsExactly(SessionEndReason.IDLE_TIMEOUT);
    }

    /** What LocalIdleTimeoutTest checks on the local provider: a running command is activity however long it runs. */
    @Test
    void aRunningCommandKeepsAnIdleSessionAliveUntilItEnds() {
        timers.setIdleTimeout(Duration.ofMillis(400));
        running.set(1);
        advance(Duration.ofHours(1));
        assertThat(ends).isEmpty();

        // the command ended: the session is idle from the last check that saw it running (at the hour: the checks
        // come every idle timeout from the start)
        running.set(0);
        advance(Duration.ofMillis(399));
        assertThat(ends).isEmpty();
        advance(Duration.ofMillis(1));
        assertThat(ends).containsExactly(SessionEndReason.IDLE_TIMEOUT);
    }

    @Test
    void theEarlierOfLifetimeAndIdleTimeoutEndsTheSession() {
        timers.setLifetime(Duration.ofSeconds(5));
        timers.setIdleTimeout(Duration.ofSeconds(2));
        running.set(1);
        advance(Duration.ofSeconds(5));
        assertThat(ends)
                .as("a running command does not extend the lifetime")
                .containsExactly(SessionEndReason.LIFETIME_EXPIRED);
    }

    @Test
    void stoppedTimersEndNothing() {
        timers.setLifetime(Duration.ofSeconds(1));
        timers.setIdleTimeout(Duration.ofSeconds(1));
        timers.stop();
        advance(Duration.ofDays(1));
        assertThat(ends).isEmpty();
    }

    /**
     * On the system's time, an end is not held up by blocking work that fills Reactor's bounded-elastic scheduler
     * (every worker busy and tasks queued behind them): a Docker session whose end waited there was ended by its
     * sandbox's backstop first, with the wrong reason.
     */
    @Test
    void anEndIsNotHeldUpByABusyBoundedElasticScheduler() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CompletableFuture<SessionEndReason> ended = new java.util.concurrent.CompletableFuture<>();
        java.util.List<reactor.core.Disposable> busy = new java.util.ArrayList<>();
        int workers = 10 * Runtime.getRuntime().availableProcessors();
        for (int i = 0; i < 3 * workers; i++) {
            busy.add(reactor.core.scheduler.Schedulers.boundedElastic().schedule(() -> {
                try {
                    release.await(30, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        SessionTimers onSystemTime = new SessionTimers("s-2", () -> 0, ended::complete);
        try {
            long start = System.nanoTime();
            onSystemTime.setLifetime(Duration.ofMillis(100));
            assertThat(ended.get(5, java.util.concurrent.TimeUnit.SECONDS))
                    .isEqualTo(SessionEndReason.LIFETIME_EXPIRED);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
        } finally {
            onSystemTime.stop();
            release.countDown();
            busy.forEach(reactor.core.Disposable::dispose);
        }
    }
}
