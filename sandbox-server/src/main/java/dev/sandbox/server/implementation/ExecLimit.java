package dev.sandbox.server.implementation;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the commands running through the server (runs, streaming execs, background processes) against a limit. */
public final class ExecLimit {
    private final int max;
    private final AtomicInteger running = new AtomicInteger();

    /**
     * Creates the limit.
     *
     * @param max the most commands at once
     */
    public ExecLimit(int max) {
        this.max = max;
    }

    /**
     * Takes a slot or fails with 429.
     *
     * @return a release action, safe to run more than once
     */
    public Runnable acquire() {
        if (running.incrementAndGet() > max) {
            running.decrementAndGet();
            throw new HttpError(
                    429,
                    "TooManyExecs",
                    "the server already runs its maximum of " + max + " commands; wait for one to end");
        }
        AtomicBoolean released = new AtomicBoolean();
        return () -> {
            if (released.compareAndSet(false, true)) {
                running.decrementAndGet();
            }
        };
    }

    /**
     * How many commands run now.
     *
     * @return the count
     */
    public int running() {
        return running.get();
    }
}
