package dev.sandbox.implementation.session;

import dev.sandbox.SessionEndReason;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * A session's lifetime and idle timeout, and its last activity: one timer, re-armed whenever either changes, that
 * ends the session when its deadline passes or it has been quiet for its idle timeout. A running command counts as
 * activity. The end itself (which may block: killing processes, deleting files, removing a container) runs on a
 * virtual thread of its own: not on a shared pool, where it could wait behind unrelated blocking work past the moment
 * the session was due to end (a sandbox's own backstop would then end it first, with the wrong reason).
 */
public final class SessionTimers {
    private final String sessionId;
    private final IntSupplier running;
    private final Consumer<SessionEndReason> end;
    private final Time time;
    private volatile Instant lastActivity;
    private volatile long lastActivityNanos;
    private Instant expiresAt; // guarded by this
    private Duration idleTimeout; // guarded by this
    private Disposable timer; // guarded by this
    private boolean stopped; // guarded by this
    private boolean idlePaused; // guarded by this

    /**
     * Creates the timers of one session; nothing is armed until a lifetime or idle timeout is set.
     *
     * @param sessionId the session, for logs
     * @param running how many commands run in the session now
     * @param end ends the session for a reason; blocking allowed
     */
    public SessionTimers(String sessionId, IntSupplier running, Consumer<SessionEndReason> end) {
        this(sessionId, running, end, Time.SYSTEM);
    }

    /**
     * Creates the timers of one session on the given time: a test passes a virtual one.
     *
     * @param sessionId the session, for logs
     * @param running how many commands run in the session now
     * @param end ends the session for a reason; blocking allowed
     * @param time where the timer runs and what it reads the time from
     */
    public SessionTimers(String sessionId, IntSupplier running, Consumer<SessionEndReason> end, Time time) {
        this.sessionId = sessionId;
        this.running = running;
        this.end = end;
        this.time = time;
        this.lastActivity = time.wall().instant();
        this.lastActivityNanos = time.nanos().getAsLong();
    }

    /**
     * Where a session's timer runs and what it reads the time from.
     *
     * @param timer the scheduler the timer is armed on (looked up at each arming)
     * @param ender the scheduler that ends the session (which may block)
     * @param wall the clock of the instants reported (last activity, the lifetime's end)
     * @param nanos the monotonic clock that idleness is measured on, in nanoseconds
     */
    public record Time(Supplier<Scheduler> timer, Supplier<Scheduler> ender, Clock wall, LongSupplier nanos) {
        private static final java.util.concurrent.ThreadFactory END_THREADS =
                Thread.ofVirtual().name("sandbox-session-end").factory();
        private static final Scheduler ENDS =
                Schedulers.fromExecutor(task -> END_THREADS.newThread(task).start());

        /**
         * Reactor's parallel scheduler for the timer, a virtual thread of its own for each end, the system's clocks.
         */
        public static final Time SYSTEM =
                new Time(Schedulers::parallel, () -> ENDS, Clock.systemUTC(), System::nanoTime);

        /**
         * The timer on one scheduler, both clocks read from that scheduler's {@link Scheduler#now}, and the end run
         * at once on the thread that fires the timer: for a virtual-time scheduler, whose clock starts at the epoch
         * and moves only when the test advances it.
         *
         * @param scheduler the scheduler
         * @return the time
         */
        public static Time on(Scheduler scheduler) {
            Clock wall = new Clock() {
                @Override
                public ZoneId getZone() {
                    return ZoneOffset.UTC;
                }

                @Override
                public Clock withZone(ZoneId zone) {
                    throw new UnsupportedOperationException("a scheduler's clock is in UTC");
                }

                @Override
                public Instant instant() {
                    return Instant.EPOCH.plusNanos(scheduler.now(TimeUnit.NANOSECONDS));
                }
            };
            return new Time(() -> scheduler, Schedulers::immediate, wall, () -> scheduler.now(TimeUnit.NANOSECONDS));
        }
    }

    /** Records activity now. */
    public void touch() {
        lastActivity = time.wall().instant();
        lastActivityNanos = time.nanos().getAsLong();
    }

    /**
     * When the session last did something.
     *
     * @return the instant of the last {@link #touch()}, or of creation
     */
    public Instant lastActivity() {
        return lastActivity;
    }

    /**
     * When the lifetime ends.
     *
     * @return the deadline, or {@code null} for none
     */
    public synchronized Instant expiresAt() {
        return expiresAt;
    }

    /**
     * The idle timeout.
     *
     * @return the timeout, or {@code null} for none
     */
    public synchronized Duration idleTimeout() {
        return idleTimeout;
    }

    /**
     * Sets the lifetime from now and re-arms the timer.
     *
     * @param fromNow how long the session may still live, or {@code null} for no limit
     */
    public synchronized void setLifetime(Duration fromNow) {
        expiresAt = fromNow == null ? null : time.wall().instant().plus(fromNow);
        arm();
    }

    /**
     * Sets the idle timeout and re-arms the timer.
     *
     * @param timeout the idle timeout, or {@code null} for none
     */
    public synchronized void setIdleTimeout(Duration timeout) {
        idleTimeout = timeout;
        arm();
    }

    /**
     * Stops the idle clock (the session is paused): the idle timeout does not end the session until {@link
     * #resumeIdle()}; its lifetime still does.
     */
    public synchronized void pauseIdle() {
        idlePaused = true;
        arm();
    }

    /** Starts the idle clock again from now (the session resumed). */
    public synchronized void resumeIdle() {
        idlePaused = false;
        touch();
        arm();
    }

    /** Disarms the timer for good: the session ended. */
    public synchronized void stop() {
        stopped = true;
        if (timer != null) {
            timer.dispose();
            timer = null;
        }
    }

    private synchronized void arm() {
        if (timer != null) {
            timer.dispose();
            timer = null;
        }
        if (stopped) {
            return;
        }
        long delayNanos = Long.MAX_VALUE;
        if (expiresAt != null) {
            delayNanos = Math.min(
                    delayNanos,
                    Duration.between(time.wall().instant(), expiresAt).toNanos());
        }
        if (idleTimeout != null && !idlePaused) {
            delayNanos = Math.min(
                    delayNanos,
                    lastActivityNanos + idleTimeout.toNanos() - time.nanos().getAsLong());
        }
        if (delayNanos == Long.MAX_VALUE) {
            return;
        }
        timer = time.timer().get().schedule(this::check, Math.max(1, delayNanos / 1_000_000), TimeUnit.MILLISECONDS);
    }

    private void check() {
        SessionEndReason reason = null;
        synchronized (this) {
            if (stopped) {
                return;
            }
            if (expiresAt != null && !time.wall().instant().isBefore(expiresAt)) {
                reason = SessionEndReason.LIFETIME_EXPIRED;
            } else if (idleTimeout != null && !idlePaused) {
                if (running.getAsInt() > 0) {
                    touch(); // a running command, in the foreground or the background, is activity
                } else if (time.nanos().getAsLong() - lastActivityNanos >= idleTimeout.toNanos()) {
                    reason = SessionEndReason.IDLE_TIMEOUT;
                }
            }
        }
        if (reason == null) {
            arm();
            return;
        }
        SessionEndReason why = reason;
        time.ender().get().schedule(() -> {
            try {
                end.accept(why);
            } catch (RuntimeException e) {
                LoggerFactory.getLogger(SessionTimers.class)
                        .warn("could not end session {} ({}): {}", sessionId, why, e.toString());
            }
        });
    }
}
