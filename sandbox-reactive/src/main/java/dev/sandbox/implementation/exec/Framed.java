package dev.sandbox.implementation.exec;

import dev.sandbox.ExecEvent;

/**
 * One item of a batched command stream ({@link ExecRunner#execBatches}): a run of whole lines, or an event that does
 * not go into one (a partial line, a line that is not plain ASCII, the exit). Internal: not part of the public API.
 *
 * @param <R> the kind of run
 */
public sealed interface Framed<R extends LineRun> {
    /**
     * A run of whole lines of one stream.
     *
     * @param run the lines
     * @param <R> the kind of run
     */
    record Run<R extends LineRun>(R run) implements Framed<R> {}

    /**
     * An event on its own.
     *
     * @param event the event
     * @param <R> the kind of run of the stream it belongs to
     */
    record Event<R extends LineRun>(ExecEvent event) implements Framed<R> {}
}
