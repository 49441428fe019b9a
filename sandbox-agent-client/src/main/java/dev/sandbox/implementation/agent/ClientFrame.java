package dev.sandbox.implementation.agent;

import java.util.List;

/** A frame from the client to the agent, encoded by {@link AgentFrames}. */
sealed interface ClientFrame {

    /**
     * The stream the frame belongs to.
     *
     * @return the id, 0 for the connection
     */
    int stream();

    /** {@code HELLO}. */
    record Hello(int stream, int minVersion, int maxVersion, String client) implements ClientFrame {}

    /** {@code PING}. */
    record Ping(int stream, long token) implements ClientFrame {}

    /** {@code TIMERS}. */
    record Timers(int stream, long deadlineMs, long idleMs) implements ClientFrame {}

    /** {@code SPAWN}. */
    record Spawn(
            int stream,
            int flags,
            int cols,
            int rows,
            long credit,
            long ringBytes,
            int overflow,
            String cwd,
            List<String> argv,
            List<String> env)
            implements ClientFrame {}

    /** {@code DATA}: stdin or a write's content. */
    record Data(int stream, byte[] bytes) implements ClientFrame {}

    /** {@code EOF}. */
    record Eof(int stream) implements ClientFrame {}

    /** {@code SIGNAL}. */
    record Signal(int stream, int signal) implements ClientFrame {}

    /** {@code RESIZE}. */
    record Resize(int stream, int cols, int rows) implements ClientFrame {}

    /** {@code CREDIT}. */
    record Credit(int stream, int fd, long bytes) implements ClientFrame {}

    /** {@code CLOSE}. */
    record Close(int stream) implements ClientFrame {}

    /** {@code READ}. */
    record Read(int stream, String path, long offset, long length, long credit) implements ClientFrame {}

    /** {@code WRITE}. */
    record Write(int stream, String path, int mode, int flags) implements ClientFrame {}

    /** {@code LIST}. */
    record ListDir(int stream, String path, long depth, long credit) implements ClientFrame {}

    /** {@code STAT}. */
    record Stat(int stream, String path) implements ClientFrame {}

    /** {@code MKDIR}. */
    record Mkdir(int stream, String path, int mode, boolean parents) implements ClientFrame {}

    /** {@code REMOVE}. */
    record Remove(int stream, String path, boolean recursive) implements ClientFrame {}

    /** {@code MOVE}. */
    record Move(int stream, String from, String to) implements ClientFrame {}

    /** {@code SYMLINK}. */
    record Symlink(int stream, String path, String target) implements ClientFrame {}

    /** {@code CHMOD}. */
    record Chmod(int stream, String path, int mode) implements ClientFrame {}

    /** {@code WATCH}. */
    record Watch(int stream, String path, boolean recursive, long credit) implements ClientFrame {}

    /** {@code PROCS}. */
    record Procs(int stream, long credit) implements ClientFrame {}

    /** {@code ATTACH}. */
    record Attach(int stream, String id, long stdoutFrom, long stderrFrom, boolean follow, long credit)
            implements ClientFrame {}

    /** {@code INPUT}. */
    record Input(int stream, String id, int what, byte[] bytes) implements ClientFrame {}

    /** {@code CONNECT}. */
    record Connect(int stream, int port, long credit) implements ClientFrame {}

    /** {@code LISTEN}. */
    record Listen(int stream, int port, long credit, int maxConns) implements ClientFrame {}
}
