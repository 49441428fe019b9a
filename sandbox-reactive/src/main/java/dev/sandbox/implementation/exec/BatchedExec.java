package dev.sandbox.implementation.exec;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * What the sandbox server uses of a session when the session has it (local and Docker sessions do), to serve
 * commands with less work: streaming a command's output with runs of whole lines already packed in the server's
 * form (see {@link ExecRunner#execBatches}), so that lines are sent without making a string and an event of each,
 * and running a command with its result delivered where the server writes it. Internal: not part of the public API.
 */
public interface BatchedExec {
    /**
     * Streams a command as runs of lines, line events and the exit.
     *
     * @param options the command
     * @param runs makes the runs
     * @param <R> the kind of run
     * @return the items, with the same checks, backpressure and cancel as {@code exec}
     */
    <R extends LineRun> Flux<Framed<R>> execBatches(ExecOptions options, LineRun.Factory<R> runs);

    /**
     * Runs a command like {@code run}, delivering the result on the given scheduler.
     *
     * @param options the command
     * @param deliver where the result is delivered
     * @return the result, with the same checks and cancel as {@code run}
     */
    Mono<ExecResult> run(ExecOptions options, Scheduler deliver);
}
