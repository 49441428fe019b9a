package dev.sandbox.implementation.agent;

/** What {@code ATTACH} emits: {@link Started}, {@link Output}s, and at most one {@link Exit}. */
public sealed interface AgentAttachEvent {

    /**
     * The process was found.
     *
     * @param pid its pid
     * @param id its id
     */
    record Started(long pid, String id) implements AgentAttachEvent {}

    /**
     * Output from a ring.
     *
     * @param fd 1 stdout (or the terminal), 2 stderr
     * @param offset the offset of the first byte in that stream
     * @param bytes the bytes; owned by the receiver
     */
    record Output(int fd, long offset, byte[] bytes) implements AgentAttachEvent {}

    /**
     * The process ended and everything was sent.
     *
     * @param status exit status, or the signal when {@code signaled}
     * @param signaled whether a signal ended it
     * @param oomKilled whether the OOM killer ended it
     * @param endedMs when, epoch milliseconds
     */
    record Exit(int status, boolean signaled, boolean oomKilled, long endedMs) implements AgentAttachEvent {}
}
