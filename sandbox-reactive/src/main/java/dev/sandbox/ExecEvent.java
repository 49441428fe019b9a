package dev.sandbox;

import java.time.Duration;

/**
 * One event of a running command, as emitted by {@link SandboxSession#exec(ExecOptions)}: output lines from stdout
 * and stderr as they are written, then exactly one {@link Exit}, always last.
 *
 * <pre>{@code
 * session.exec(ExecOptions.shell("make test")).subscribe(event -> {
 *     switch (event) {
 *         case ExecEvent.Stdout out -> System.out.println(out.text());
 *         case ExecEvent.Stderr err -> System.err.println(err.text());
 *         case ExecEvent.Exit exit -> System.out.println("exit " + exit.code());
 *     }
 * });
 * }</pre>
 */
public sealed interface ExecEvent permits ExecEvent.Line, ExecEvent.Exit {

    /** Which output stream a line came from. */
    enum StreamKind {
        /** The command's standard output. */
        STDOUT,
        /** The command's standard error. */
        STDERR
    }

    /** How a command ended. */
    enum Termination {
        /** The command exited by itself; the code is its exit status. */
        EXITED,
        /** The command was killed by a signal; the code is 128 + the signal number. */
        SIGNALED,
        /** The command ran past its {@link ExecOptions#timeout()} and was killed; the code is 124. */
        TIMED_OUT,
        /** The command wrote nothing for {@link ExecOptions#idleTimeout()} and was killed; the code is 124. */
        IDLE_TIMED_OUT,
        /**
         * The kernel's out-of-memory killer ended the command because its sandbox reached its memory limit; the code
         * is 137 (128 + SIGKILL). Reported by providers that enforce a memory limit, such as Docker.
         */
        OOM_KILLED
    }

    /**
     * A line of output, without its line terminator ({@code \n} or {@code \r\n}).
     *
     * <pre>{@code
     * if (event instanceof ExecEvent.Line line && line.partial()) {
     *     // the line was longer than ExecOptions.maxLineLength() and continues in the next event
     * }
     * }</pre>
     */
    sealed interface Line extends ExecEvent permits Stdout, Stderr {
        /**
         * The decoded text of the line, without its terminator.
         *
         * @return the text
         */
        String text();

        /**
         * Byte offset of the line's first byte in its stream, counting from 0.
         *
         * @return the offset
         */
        long offset();

        /**
         * {@code true} when the line was cut at {@link ExecOptions#maxLineLength()} bytes and the next line event of
         * the same stream continues it.
         *
         * @return whether the line was split
         */
        boolean partial();

        /**
         * Byte offset just past this line and its terminator: where a reader that has seen this line resumes.
         *
         * @return the offset of the next line in the same stream
         */
        long nextOffset();

        /**
         * The stream this line came from.
         *
         * @return stdout or stderr
         */
        StreamKind stream();
    }

    /**
     * A line written to standard output.
     *
     * @param text the decoded line without its terminator
     * @param offset byte offset of the line in stdout
     * @param partial whether the line was split at the maximum line length
     * @param nextOffset byte offset just past the line and its terminator
     */
    record Stdout(String text, long offset, boolean partial, long nextOffset) implements Line {
        @Override
        public StreamKind stream() {
            return StreamKind.STDOUT;
        }
    }

    /**
     * A line written to standard error.
     *
     * @param text the decoded line without its terminator
     * @param offset byte offset of the line in stderr
     * @param partial whether the line was split at the maximum line length
     * @param nextOffset byte offset just past the line and its terminator
     */
    record Stderr(String text, long offset, boolean partial, long nextOffset) implements Line {
        @Override
        public StreamKind stream() {
            return StreamKind.STDERR;
        }
    }

    /**
     * The end of a command; always the last event.
     *
     * @param code the exit code: the process's status, 128 + n when killed by signal n, 124 after a timeout
     * @param termination how the command ended
     * @param duration wall time from start to exit
     */
    record Exit(int code, Termination termination, Duration duration) implements ExecEvent {
        /**
         * Whether the command was killed by its timeout or idle timeout.
         *
         * @return {@code true} for {@link Termination#TIMED_OUT} and {@link Termination#IDLE_TIMED_OUT}
         */
        public boolean timedOut() {
            return termination == Termination.TIMED_OUT || termination == Termination.IDLE_TIMED_OUT;
        }
    }
}
