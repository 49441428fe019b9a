package dev.sandbox.implementation.agent;

import java.util.List;

/**
 * A background process as {@code PROCS} reports it.
 *
 * @param id the agent's id, such as {@code p1}
 * @param kind 0 pipes, 1 terminal (as the agent reports it)
 * @param pid the process id inside the sandbox
 * @param startedMs when it started, epoch milliseconds
 * @param running whether it still runs
 * @param status exit status, or the signal when {@code signaled} (meaningless while running)
 * @param signaled whether a signal ended it
 * @param argv its command line
 * @param outStart oldest stdout offset still held
 * @param outEnd stdout offset just past the newest byte
 * @param errStart oldest stderr offset still held
 * @param errEnd stderr offset just past the newest byte
 */
public record AgentProcInfo(
        String id,
        int kind,
        long pid,
        long startedMs,
        boolean running,
        int status,
        boolean signaled,
        List<String> argv,
        long outStart,
        long outEnd,
        long errStart,
        long errEnd) {

    /** Copies the argv. */
    public AgentProcInfo {
        argv = List.copyOf(argv);
    }
}
