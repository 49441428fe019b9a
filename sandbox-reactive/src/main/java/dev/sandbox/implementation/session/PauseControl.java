package dev.sandbox.implementation.session;

import dev.sandbox.SessionPausedException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * A session's pause and resume, one after the other: whatever callers ask and however many at once, the provider's
 * freeze and thaw alternate, each starting once the one before it ended. A pause asked while the session is paused or
 * pausing joins that pause; a resume asked while it runs or resumes joins that resume. The idle clock stops before the
 * freeze and starts again after the thaw. A transition runs to its end even when the caller that asked for it cancels
 * (a half-paused session would be the worst outcome). Internal: not part of the public API.
 */
public final class PauseControl {
    private final String sessionId;
    private final SessionTimers timers;
    private final Supplier<Mono<Void>> freeze;
    private final Supplier<Mono<Void>> thaw;
    private volatile boolean autoResume = true;

    /** Paused or pausing, as asked last: what the next call sees. */
    private volatile boolean paused; // written under this

    private Mono<Void> last = Mono.empty(); // guarded by this
    private boolean lastIsPause; // guarded by this

    /**
     * The pause control of one session.
     *
     * @param sessionId the session, named in errors
     * @param timers its timers, whose idle clock stops while it is paused
     * @param freeze freezes every process of the session (may block only on a scheduler of its own)
     * @param thaw lets them run again
     */
    public PauseControl(
            String sessionId, SessionTimers timers, Supplier<Mono<Void>> freeze, Supplier<Mono<Void>> thaw) {
        this.sessionId = sessionId;
        this.timers = timers;
        this.freeze = freeze;
        this.thaw = thaw;
    }

    /**
     * Whether calls on the paused session resume it ({@code true} unless set).
     *
     * @param on the session's choice
     */
    public void autoResume(boolean on) {
        autoResume = on;
    }

    /**
     * Whether the session is paused or pausing.
     *
     * @return true from a pause's start until a resume's end
     */
    public boolean paused() {
        return paused;
    }

    /**
     * Records a session found paused (attached while its container was paused): no freeze is run.
     */
    public synchronized void foundPaused() {
        paused = true;
        lastIsPause = true;
        last = Mono.empty();
        timers.pauseIdle();
    }

    /**
     * Pauses the session, or joins the pause under way; completes at once when it is paused.
     *
     * @return completes once frozen
     */
    public Mono<Void> pause() {
        return Mono.defer(() -> transition(true));
    }

    /**
     * Resumes the session, or joins the resume under way; completes at once when it runs.
     *
     * @return completes once it runs again
     */
    public Mono<Void> resume() {
        return Mono.defer(() -> transition(false));
    }

    /**
     * What a call must do before it reaches the session: nothing while it runs ({@code null}, the fast path), a resume
     * while it is paused with auto-resume, else a {@link SessionPausedException}.
     *
     * @return {@code null}, or what to wait for first
     */
    public @Nullable Mono<Void> beforeCall() {
        if (!paused) {
            return null;
        }
        return autoResume ? resume() : Mono.error(new SessionPausedException(sessionId));
    }

    /**
     * Fails with {@link SessionPausedException} when the session is paused and calls may not resume it; for a guard
     * that cannot wait.
     */
    public void checkCallable() {
        if (paused && !autoResume) {
            throw new SessionPausedException(sessionId);
        }
    }

    private Mono<Void> transition(boolean pause) {
        Sinks.Empty<Void> done;
        Mono<Void> mine;
        Mono<Void> previous;
        synchronized (this) {
            if (paused == pause) {
                // joins the same transition under way; after a failed opposite one, the state it left stands
                return lastIsPause == pause ? last : Mono.empty();
            }
            paused = pause;
            previous = last;
            done = Sinks.empty();
            mine = done.asMono();
            last = mine;
            lastIsPause = pause;
        }
        Mono<Void> step = previous.onErrorResume(e -> Mono.empty()).then(Mono.defer(() -> {
            if (pause) {
                timers.pauseIdle();
                return freeze.get();
            }
            return thaw.get().doOnSuccess(x -> timers.resumeIdle());
        }));
        step.subscribe(null, e -> failed(pause, mine, e, done), () -> done.tryEmitEmpty());
        return mine;
    }

    /** A freeze that failed leaves the session running; a thaw that failed, paused. */
    private void failed(boolean pause, Mono<Void> which, Throwable e, Sinks.Empty<Void> done) {
        synchronized (this) {
            if (last == which) {
                paused = !pause;
                if (pause) {
                    timers.resumeIdle();
                } else {
                    timers.pauseIdle();
                }
            }
        }
        done.tryEmitError(e);
    }
}
