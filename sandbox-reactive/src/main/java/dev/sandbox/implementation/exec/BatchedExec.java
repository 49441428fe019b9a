package dev.sandbox.implementation.exec;

import dev.sandbox.ExecOptions;
import reactor.core.publisher.Flux;

/**
 * A session that can stream a command's output with runs of whole lines already batched (see {@link
 * ExecRunner#execBatches}): the sandbox server uses it, when the session has it, to send lines without making a
 * string and an event of each. Internal: not part of the public API.
 */
public interface BatchedExec {
    /**
     * Streams a command as {@link dev.sandbox.implementation.remote.LineBatch}es, line events and the exit.
     *
     * @param options the command
     * @return the items, with the same checks, backpressure and cancel as {@code exec}
     */
    Flux<Object> execBatches(ExecOptions options);
}
