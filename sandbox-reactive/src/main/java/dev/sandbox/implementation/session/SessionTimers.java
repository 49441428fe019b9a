package dev.sandbox.implementation.session;

import dev.sandbox.SessionEndReason;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * A session's lifetime and idle timeout, and its last activity: one timer, re-armed whenever either changes, that
 * ends the session when its deadline passes or it has been quiet for its idle timeout. A running command counts as
 * activity. The end itself (which may block: killing processes, deleting files, removing a container) runs on the
 * bounded-elastic scheduler.
 */
public final class SessionTimers {
    private final String sessionId;
    private final IntSupplier running;
    private final Consumer<SessionEndReason> end;
    private volatile Instant lastActivity = Instant.now();
    private volatile long lastActivityNanos = System.nanoTime();
    private Instant expiresAt; // guarded by this
    private Duration idleTimeout; // guarded by this
    private Disposable timer; // guarded by this
    private boolean stopped; // guarded by this

    /**
     * Creates the timers of one session; nothing is armed until a lifetime or idle timeout is set.
     *
     * @param sessionId the session, for logs
     * @param running how many commands run in the session now
     * @param end ends the session for a reason; blocking allowed
     */
    public SessionTimers(String sessionId, IntSupplier running, Consumer<SessionEndReason> end) {
        this.sessionId = sessionId;
        this.running = running;
        this.end = end;
    }

    /** Records activity now. */
    public void touch() {
        lastActivity = Instant.now();
        lastActivityNanos = System.nanoTime();
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
        expiresAt = fromNow == null ? null : Instant.now().plus(fromNow);
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
                    delayNanos, Duration.between(Instant.now(), expiresAt).toNanos());
        }
        if (idleTimeout != null) {
            delayNanos = Math.min(delayNanos, lastActivityNanos + idleTimeout.toNanos() - System.nanoTime());
        }
        if (delayNanos == Long.MAX_VALUE) {
            return;
        }
        timer = Schedulers.parallel().schedule(this::check, Math.max(1, delayNanos / 1_000_000), TimeUnit.MILLISECONDS);
    }

    private void check() {
        SessionEndReason reason = null;
        synchronized (this) {
            if (stopped) {
                return;
            }
            if (expiresAt != null && !Instant.now().isBefore(expiresAt)) {
                reason = SessionEndReason.LIFETIME_EXPIRED;
            } else if (idleTimeout != null) {
                if (running.getAsInt() > 0) {
                    touch(); // a running command, in the foreground or the background, is activity
                } else if (System.nanoTime() - lastActivityNanos >= idleTimeout.toNanos()) {
                    reason = SessionEndReason.IDLE_TIMEOUT;
                }
            }
        }
        if (reason == null) {
            arm();
            return;
        }
        SessionEndReason why = reason;
        Schedulers.boundedElastic().schedule(() -> {
            try {
                end.accept(why);
            } catch (RuntimeException e) {
                LoggerFactory.getLogger(SessionTimers.class)
                        .warn("could not end session {} ({}): {}", sessionId, why, e.toString());
            }
        });
    }
}
