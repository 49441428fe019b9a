package dev.sandbox.implementation.agent;

/** A frame from the agent to the client, decoded and validated by {@link AgentFrames}. */
sealed interface AgentFrame {

    /**
     * The stream the frame belongs to.
     *
     * @return the id, 0 for the connection
     */
    int stream();

    /** {@code OK}, with {@code info} for {@code STAT} and {@code WRITE} (else {@code null}). */
    record Ok(int stream, AgentFileInfo info) implements AgentFrame {}

    /** {@code HELLO} on stream 0. */
    record Hello(int stream, AgentHello hello) implements AgentFrame {}

    /** {@code PONG} on stream 0. */
    record Pong(int stream, long token) implements AgentFrame {}

    /** {@code CREDIT} for the client's {@code DATA}. */
    record Credit(int stream, int fd, long bytes) implements AgentFrame {}

    /** {@code STARTED}. */
    record Started(int stream, long pid, String id, long dataCredit) implements AgentFrame {}

    /** {@code OUTPUT}. */
    record Output(int stream, int fd, long offset, byte[] bytes) implements AgentFrame {}

    /** {@code EXIT}. */
    record Exit(int stream, int status, boolean signaled, boolean oomKilled, long endedMs) implements AgentFrame {}

    /** {@code DATA}: a read's content. */
    record Data(int stream, byte[] bytes) implements AgentFrame {}

    /** {@code END}. */
    record End(int stream) implements AgentFrame {}

    /** {@code ENTRY}. */
    record Entry(int stream, AgentFileInfo info) implements AgentFrame {}

    /** {@code EVENT}. */
    record Event(int stream, int kind, String path) implements AgentFrame {}

    /** {@code READY}. */
    record Ready(int stream, long dataCredit) implements AgentFrame {}

    /** {@code ACCEPTED}: a connection of a {@code LISTEN} stream, on a new agent-numbered stream. */
    record Accepted(int stream, int listenStream, int peerPort, long dataCredit) implements AgentFrame {}

    /** {@code PROC}. */
    record Proc(int stream, AgentProcInfo info) implements AgentFrame {}

    /** {@code ERROR}. */
    record Error(int stream, int code, String message) implements AgentFrame {}
}
