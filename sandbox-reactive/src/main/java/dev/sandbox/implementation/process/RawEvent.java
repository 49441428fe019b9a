package dev.sandbox.implementation.process;

/** What a spawned process produces before line framing: chunks of bytes from stdout or stderr, then its exit. */
public sealed interface RawEvent permits RawEvent.Chunk, RawEvent.Exited, RawEvent.Flush {

    /** Stream index of standard output. */
    int STDOUT = 0;
    /** Stream index of standard error. */
    int STDERR = 1;

    /**
     * Bytes read from one stream, in order.
     *
     * @param stream {@link #STDOUT} or {@link #STDERR}
     * @param bytes the bytes; owned by the receiver
     */
    record Chunk(int stream, byte[] bytes) implements RawEvent {}

    /**
     * Not from the process: the stream had bytes pending without a line terminator and was quiet for the command's
     * partial-line delay, so the framer delivers what it holds of it as a partial line. Made by the exec machinery
     * between the raw output and the framer; a process never emits it.
     *
     * @param stream {@link #STDOUT} or {@link #STDERR}
     */
    record Flush(int stream) implements RawEvent {}

    /**
     * The process ended, after both streams reached end of file.
     *
     * @param status the exit status, or the signal number when {@code signaled}
     * @param signaled whether a signal ended the process
     * @param oomKilled whether the out-of-memory killer sent that signal (implies {@code signaled})
     */
    record Exited(int status, boolean signaled, boolean oomKilled) implements RawEvent {
        /**
         * An exit that was not caused by the out-of-memory killer.
         *
         * @param status the exit status, or the signal number when {@code signaled}
         * @param signaled whether a signal ended the process
         */
        public Exited(int status, boolean signaled) {
            this(status, signaled, false);
        }
    }
}
