package dev.sandbox.implementation.exec;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * What the sandbox server uses of a session when the session has it (the local provider's do), to serve commands
 * with less work: streaming a command's output with runs of whole lines already batched (see {@link
 * ExecRunner#execBatches}), so that lines are sent without making a string and an event of each, and running a
 * command with its result delivered where the server writes it. Internal: not part of the public API.
 */
public interface BatchedExec {
    /**
     * Streams a command as {@link dev.sandbox.implementation.remote.LineBatch}es, line events and the exit.
     *
     * @param options the command
     * @return the items, with the same checks, backpressure and cancel as {@code exec}
     */
    Flux<Object> execBatches(ExecOptions options);

    /**
     * Runs a command like {@code run}, delivering the result on the given scheduler.
     *
     * @param options the command
     * @param deliver where the result is delivered
     * @return the result, with the same checks and cancel as {@code run}
     */
    Mono<ExecResult> run(ExecOptions options, Scheduler deliver);
}
