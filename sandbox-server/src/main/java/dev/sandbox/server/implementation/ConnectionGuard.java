package dev.sandbox.server.implementation;

import dev.sandbox.server.implementation.GuardedConnection.Phase;
import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps connections from starving the server, and tells a client with the token to come back rather than cutting it
 * when the server is full: a cap on open connections with a bounded queue behind it, a deadline for reading each
 * request head, a deadline for a connection to present the token, and JSON bodies for the codec's own refusals.
 *
 * <ul>
 *   <li>A connection that has not yet carried a request with a valid token is closed {@code authTimeout} after it
 *       opened.
 *   <li>Once a request head has started to arrive it must be complete within {@code headTimeout}, authenticated
 *       connection or not; long bodies and streams are not affected.
 *   <li>At most {@code maxConnections} connections hold a slot; their requests are served. A connection over that
 *       waits, up to {@code maxQueued} of them: its first request's head is read, and with a valid token the request
 *       is held in a FIFO queue (not read further) until a slot frees, or answered {@code 503} with {@code
 *       Retry-After} after {@code queueTimeout}; without one it is answered 401. While requests wait, a connection
 *       that finishes a response closes after it ({@code Connection: close}), handing its slot on.
 *   <li>A connection that has not presented a valid token for {@link #EVICTION_GRACE} is closed to make room: for a
 *       waiting request with a valid token when every slot is taken, and for a new connection when the queue is full
 *       too. Idle strangers thus cannot keep a client with the token out, and a client whose request is on its way
 *       is not cut for being a moment slow.
 *   <li>Past the slots and the queue, a connection's request is answered {@code 503} with {@code Retry-After} as
 *       soon as its head arrives (which must be within {@code headTimeout} of opening); when {@code maxQueued} such
 *       refusals are in progress, the server stops accepting for a moment and the operating system's listen backlog
 *       holds the next connections.
 *   <li>A request the codec cannot read (headers or initial line too long, garbage) gets 431, 414 or 400 with the
 *       usual JSON error body, then the connection is closed.
 * </ul>
 *
 * A {@code 503 ServerBusy} answer means the request never reached a route: nothing of it was done, so any request,
 * creating ones included, may be sent again. The connections' handlers run on their event loops; the counts are kept
 * under this object's lock, held for a few field updates at a time.
 */
public final class ConnectionGuard {
    /** How long a connection may stay without a valid token before it may be closed to make room. */
    public static final Duration EVICTION_GRACE = Duration.ofSeconds(1);
    /** The {@code Retry-After} of a {@code 503 ServerBusy} answer, in seconds. */
    public static final int RETRY_AFTER_SECONDS = 1;

    private static final Logger LOG = LoggerFactory.getLogger(ConnectionGuard.class);
    private static final LinkedHashSet<GuardedConnection> NONE = new LinkedHashSet<>();
    static final AttributeKey<GuardedConnection> STATE = AttributeKey.valueOf("dev.sandbox.server.connection");

    private final int maxConnections;
    private final int maxQueued;
    final long headTimeoutNanos;
    private final long authTimeoutNanos;
    private final long queueTimeoutNanos;
    private final long graceNanos;
    private final Predicate<String> validToken;

    // guarded by this
    private int admitted;
    private int waiting;
    private int refusing;
    private final LinkedHashSet<GuardedConnection> unauthenticatedAdmitted = new LinkedHashSet<>();
    private final LinkedHashSet<GuardedConnection> unauthenticatedWaiting = new LinkedHashSet<>();
    private final LinkedHashSet<GuardedConnection> queue = new LinkedHashSet<>();
    private Channel listener;
    private boolean paused;
    /** How many requests wait in the queue; read without the lock by connections finishing a response. */
    private volatile int queued;

    private final LongAdder queuedTotal = new LongAdder();
    private final LongAdder busyTotal = new LongAdder();
    private final LongAdder evictedTotal = new LongAdder();
    /** When the last pause was logged (logged at most every 10 seconds). */
    private volatile long lastPauseWarning = System.nanoTime() - TimeUnit.SECONDS.toNanos(20);

    /**
     * Creates the guard.
     *
     * @param maxConnections the most connections holding a slot
     * @param maxQueued the most connections waiting for a slot
     * @param queueTimeout the longest a request waits for a slot before it is answered 503
     * @param headTimeout the longest a request head may take to arrive once it started
     * @param authTimeout the longest a connection may stay open without presenting the token
     * @param validToken whether an {@code Authorization} header (or {@code null}) carries a valid token; must not
     *     block
     */
    public ConnectionGuard(
            int maxConnections,
            int maxQueued,
            Duration queueTimeout,
            Duration headTimeout,
            Duration authTimeout,
            Predicate<String> validToken) {
        this.maxConnections = maxConnections;
        this.maxQueued = maxQueued;
        this.queueTimeoutNanos = queueTimeout.toNanos();
        this.headTimeoutNanos = headTimeout.toNanos();
        this.authTimeoutNanos = authTimeout.toNanos();
        this.graceNanos = Math.min(EVICTION_GRACE.toNanos(), authTimeoutNanos);
        this.validToken = validToken;
    }

    /**
     * How many connections are open: holding a slot, waiting for one, or being refused.
     *
     * @return the count
     */
    public synchronized int open() {
        return admitted + waiting + refusing;
    }

    /**
     * What the guard did past the connection limit so far, for the log: requests that waited in the queue, requests
     * answered 503, connections without the token closed to make room.
     *
     * @return a sentence, or {@code null} when the limit was never reached
     */
    public String summary() {
        long q = queuedTotal.sum();
        long b = busyTotal.sum();
        long e = evictedTotal.sum();
        if (q == 0 && b == 0 && e == 0) {
            return null;
        }
        return "past the connection limit, " + q + " requests waited for a slot, " + b
                + " were answered 503 ServerBusy, and " + e + " connections without a token were closed to make room";
    }

    void noteBusy() {
        busyTotal.increment();
    }

    /**
     * Gives the guard the listening channel, so that it can stop accepting for a moment under a flood.
     *
     * @param serverChannel the server's listening channel
     */
    public synchronized void listening(Channel serverChannel) {
        this.listener = serverChannel;
    }

    /**
     * Sets up a new connection: gives it a slot, a place in the queue or a refusal (closing an idle connection
     * without the token to make room when there is none), arms its deadlines and adds the handlers around the HTTP
     * codec.
     *
     * @param ch the connection, its pipeline holding the codec under {@code codecName}
     * @param codecName the name of the HTTP codec in the pipeline
     */
    public void init(Channel ch, String codecName) {
        GuardedConnection c = new GuardedConnection(ch);
        ch.attr(STATE).set(c);
        GuardedConnection victim = null;
        boolean pause = false;
        synchronized (this) {
            if (admitted < maxConnections) {
                c.phase = Phase.ADMITTED;
                admitted++;
                unauthenticatedAdmitted.add(c);
            } else if (waiting < maxQueued) {
                c.phase = Phase.WAITING;
                waiting++;
                unauthenticatedWaiting.add(c);
            } else {
                victim = oldestIdle(unauthenticatedAdmitted, unauthenticatedWaiting, c.openedNanos);
                if (victim != null) {
                    c.phase = victim.phase;
                    (c.phase == Phase.ADMITTED ? unauthenticatedAdmitted : unauthenticatedWaiting).add(c);
                    victim.phase = Phase.EVICTED;
                } else {
                    c.phase = Phase.REFUSING;
                    refusing++;
                    if (refusing >= maxQueued && listener != null && !paused) {
                        paused = true;
                        pause = true;
                    }
                }
            }
        }
        ch.closeFuture().addListener(f -> closed(c));
        if (victim != null) {
            LOG.debug("no room: closing a connection that has presented no token for {}", EVICTION_GRACE);
            evictedTotal.increment();
            victim.channel.close();
        }
        if (pause) {
            pauseAccepting();
        }
        long authNanos = c.phase == Phase.REFUSING ? Math.min(authTimeoutNanos, headTimeoutNanos) : authTimeoutNanos;
        c.authDeadline = ch.eventLoop()
                .schedule(
                        () -> {
                            if (!c.authenticated || c.phase == Phase.REFUSING) {
                                ch.close();
                            }
                        },
                        authNanos,
                        TimeUnit.NANOSECONDS);
        ch.pipeline().addFirst(GuardHandlers.HEAD_START, new GuardHandlers.HeadStart(this, c, codecName));
        ch.pipeline().addAfter(codecName, GuardHandlers.HEAD_END, new GuardHandlers.HeadEnd(this, c));
        ch.pipeline().addAfter(GuardHandlers.HEAD_END, GuardHandlers.GATE, new GuardHandlers.Gate(this, c));
        ch.pipeline().addAfter(GuardHandlers.GATE, ReadAfterResponse.NAME, new ReadAfterResponse());
    }

    /** The oldest connection of either set that has had its grace, or {@code null}; removed from its set. */
    private GuardedConnection oldestIdle(
            LinkedHashSet<GuardedConnection> a, LinkedHashSet<GuardedConnection> b, long nowNanos) {
        GuardedConnection x = first(a);
        GuardedConnection y = first(b);
        GuardedConnection pick = x == null ? y : y == null ? x : x.openedNanos - y.openedNanos <= 0 ? x : y;
        if (pick == null || nowNanos - pick.openedNanos < graceNanos) {
            return null;
        }
        (pick == x ? a : b).remove(pick);
        return pick;
    }

    private static GuardedConnection first(LinkedHashSet<GuardedConnection> set) {
        Iterator<GuardedConnection> it = set.iterator();
        return it.hasNext() ? it.next() : null;
    }

    private void closed(GuardedConnection c) {
        List<GuardedConnection> promoted = new ArrayList<>();
        boolean resume = false;
        synchronized (this) {
            switch (c.phase) {
                case ADMITTED -> {
                    admitted--;
                    unauthenticatedAdmitted.remove(c);
                }
                case WAITING -> {
                    waiting--;
                    unauthenticatedWaiting.remove(c);
                    queue.remove(c);
                }
                case REFUSING -> refusing--;
                default -> {}
            }
            c.phase = Phase.CLOSED;
            while (admitted < maxConnections && !queue.isEmpty()) {
                GuardedConnection next = first(queue);
                queue.remove(next);
                next.phase = Phase.ADMITTED;
                waiting--;
                admitted++;
                promoted.add(next);
            }
            queued = queue.size();
            if (paused && refusing < maxQueued) {
                paused = false;
                resume = true;
            }
        }
        c.cancelAll();
        for (GuardedConnection next : promoted) {
            next.channel.eventLoop().execute(next::release);
        }
        if (resume) {
            resumeAccepting();
        }
    }

    /**
     * Notes that a connection carried a request with a valid token: it is no longer closed for staying
     * unauthenticated, nor chosen to make room.
     *
     * @param ch the connection
     */
    public void authenticated(Channel ch) {
        GuardedConnection c = ch.attr(STATE).get();
        if (c != null) {
            authenticated(c);
        }
    }

    void authenticated(GuardedConnection c) {
        if (c.authenticated) {
            return;
        }
        synchronized (this) {
            c.authenticated = true;
            unauthenticatedAdmitted.remove(c);
            unauthenticatedWaiting.remove(c);
        }
        if (c.authDeadline != null && c.phase != Phase.REFUSING) {
            c.authDeadline.cancel(false);
        }
    }

    boolean validToken(String authorization) {
        return validToken.test(authorization);
    }

    /** Whether requests wait for a slot: a connection finishing a response then hands its slot on. */
    boolean requestsWaiting() {
        return queued > 0;
    }

    /**
     * A waiting connection's request with a valid token has arrived and is held (on its event loop): it gets a slot
     * now (a free one, or an idle stranger's) or waits in the queue until one frees or the queue times out.
     */
    void arrived(GuardedConnection c) {
        GuardedConnection victim = null;
        boolean admit = false;
        synchronized (this) {
            if (c.phase != Phase.WAITING) {
                return;
            }
            if (admitted < maxConnections) {
                admitted++;
                admit = true;
            } else {
                victim = oldestIdle(unauthenticatedAdmitted, NONE, System.nanoTime());
                if (victim != null) {
                    victim.phase = Phase.EVICTED;
                    admit = true;
                }
            }
            if (admit) {
                waiting--;
                c.phase = Phase.ADMITTED;
            } else {
                queue.add(c);
                queued = queue.size();
                queuedTotal.increment();
            }
        }
        if (victim != null) {
            LOG.debug("all slots taken: closing a connection that has presented no token for {}", EVICTION_GRACE);
            evictedTotal.increment();
            victim.channel.close();
        }
        if (admit) {
            c.release();
            return;
        }
        c.queueDeadline =
                c.channel.eventLoop().schedule(() -> queueTimedOut(c), queueTimeoutNanos, TimeUnit.NANOSECONDS);
        recheckLater(c);
    }

    /**
     * While a request waits and a connection without the token holds a slot but is still within its grace, looks
     * again once that grace is over: the request then takes the stranger's slot rather than waiting for its timeout.
     */
    private void recheckLater(GuardedConnection c) {
        long oldest;
        synchronized (this) {
            GuardedConnection stranger = first(unauthenticatedAdmitted);
            if (stranger == null || !queue.contains(c)) {
                return;
            }
            oldest = stranger.openedNanos;
        }
        long delay = Math.max(0, oldest + graceNanos - System.nanoTime()) + 1_000_000;
        c.channel.eventLoop().schedule(() -> recheck(c), delay, TimeUnit.NANOSECONDS);
    }

    private void recheck(GuardedConnection c) {
        GuardedConnection victim;
        synchronized (this) {
            if (!queue.contains(c) || admitted < maxConnections) {
                return; // admitted meanwhile, timed out, or about to be promoted
            }
            victim = oldestIdle(unauthenticatedAdmitted, NONE, System.nanoTime());
            if (victim != null) {
                victim.phase = Phase.EVICTED;
                queue.remove(c);
                queued = queue.size();
                waiting--;
                c.phase = Phase.ADMITTED;
            }
        }
        if (victim == null) {
            recheckLater(c);
            return;
        }
        LOG.debug(
                "a waiting request takes the slot of a connection that has presented no token for {}", EVICTION_GRACE);
        evictedTotal.increment();
        victim.channel.close();
        c.release();
    }

    private void queueTimedOut(GuardedConnection c) {
        synchronized (this) {
            if (!queue.remove(c)) {
                return; // admitted meanwhile
            }
            queued = queue.size();
        }
        LOG.debug("a request waited {} ms for a connection slot; answering 503", queueTimeoutNanos / 1_000_000);
        GuardHandlers.busy(
                this,
                c,
                "the server is at its connection limit and the request waited " + queueTimeoutNanos / 1_000_000
                        + " ms in its queue; try again");
    }

    private void pauseAccepting() {
        Channel l;
        synchronized (this) {
            l = listener;
        }
        long now = System.nanoTime();
        if (now - lastPauseWarning > TimeUnit.SECONDS.toNanos(10)) {
            lastPauseWarning = now;
            LOG.warn("{} connections are being refused: not accepting more for {}", maxQueued, EVICTION_GRACE);
        }
        l.config().setAutoRead(false);
        l.eventLoop().schedule(this::resumeAfterPause, graceNanos, TimeUnit.NANOSECONDS);
    }

    private void resumeAfterPause() {
        synchronized (this) {
            if (!paused) {
                return;
            }
            paused = false;
        }
        resumeAccepting();
    }

    private void resumeAccepting() {
        Channel l;
        synchronized (this) {
            l = listener;
        }
        if (l != null && l.isOpen()) {
            l.config().setAutoRead(true);
        }
    }
}
