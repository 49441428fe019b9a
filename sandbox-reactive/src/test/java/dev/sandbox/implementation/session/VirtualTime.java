package dev.sandbox.implementation.session;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * A session's timers on Reactor's virtual time: the timer is armed on a {@link VirtualTimeScheduler} and reads both
 * clocks from it, so a test moves a lifetime or an idle timeout forward with {@link
 * VirtualTimeScheduler#advanceTimeBy} instead of waiting for it. The end runs at once on the advancing thread.
 */
public final class VirtualTime {
    private VirtualTime() {}

    /**
     * The timers' time on a virtual scheduler, which starts at the epoch.
     *
     * @param scheduler the virtual scheduler
     * @return the time to give {@link SessionTimers}
     */
    public static SessionTimers.Time of(VirtualTimeScheduler scheduler) {
        Clock wall = new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                throw new UnsupportedOperationException("virtual time is in UTC");
            }

            @Override
            public Instant instant() {
                return Instant.EPOCH.plusNanos(scheduler.now(TimeUnit.NANOSECONDS));
            }
        };
        return new SessionTimers.Time(
                () -> scheduler, Schedulers::immediate, wall, () -> scheduler.now(TimeUnit.NANOSECONDS));
    }
}
