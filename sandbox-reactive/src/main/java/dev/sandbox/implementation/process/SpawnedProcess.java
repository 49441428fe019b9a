package dev.sandbox.implementation.process;

import reactor.core.publisher.Flux;

/** A started process: its raw output as a backpressured stream, and a way to kill it with its children. */
public interface SpawnedProcess {

    /**
     * The process id on the host.
     *
     * @return the pid
     */
    long pid();

    /**
     * The process's output chunks, then exactly one {@link RawEvent.Exited}. May be subscribed once. The pipes are
     * read only while there is demand; cancelling kills the process group.
     *
     * @return the raw events
     */
    Flux<RawEvent> events();

    /** Kills the process and every process in its process group with SIGKILL. Idempotent; safe from any thread. */
    void kill();

    /**
     * Sends a signal to the process and its process group. Safe from any thread; does nothing once the process has
     * been reaped.
     *
     * @param signal the signal number
     * @throws dev.sandbox.UnsupportedFeatureException when the launcher cannot send that signal
     */
    void signal(int signal);

    /**
     * Changes the size of the process's terminal.
     *
     * @param cols columns
     * @param rows rows
     * @throws dev.sandbox.UnsupportedFeatureException when the process has no terminal
     */
    default void resize(int cols, int rows) {
        throw new dev.sandbox.UnsupportedFeatureException("this launcher", "terminal resize");
    }
}
