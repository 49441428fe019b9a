package dev.sandbox;

import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * One event of a running command, as emitted by {@link SandboxSession#exec(ExecOptions)}: output lines from stdout
 * and stderr as they are written (or, with {@link ExecOptions#withByteOutput(boolean)}, {@link Chunk}s of raw
 * bytes), then exactly one {@link Exit}, always last.
 *
 * <pre>{@code
 * session.exec(ExecOptions.shell("make test")).subscribe(event -> {
 *     switch (event) {
 *         case ExecEvent.Stdout out -> System.out.println(out.text());
 *         case ExecEvent.Stderr err -> System.err.println(err.text());
 *         case ExecEvent.Chunk chunk -> {} // only with ExecOptions.withByteOutput(true)
 *         case ExecEvent.Exit exit -> System.out.println("exit " + exit.code());
 *     }
 * });
 * }</pre>
 */
public sealed interface ExecEvent permits ExecEvent.Line, ExecEvent.Chunk, ExecEvent.Exit {

    /** Which output stream a line or chunk came from. */
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
     * A line of output, without its line terminator ({@code \n} or {@code \r\n}), or a piece of a line flagged
     * {@link #partial()}.
     *
     * <pre>{@code
     * if (event instanceof ExecEvent.Line line && line.partial()) {
     *     // a prompt waiting for input, or a line longer than ExecOptions.maxLineLength(): the next line event of
     *     // the same stream continues it
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
         * {@code true} when this event is not a whole line and the next line event of the same stream continues it,
         * for one of two reasons: the line was longer than {@link ExecOptions#maxLineLength()} bytes and was cut
         * there, or the command wrote nothing more to the stream for {@link ExecOptions#partialLineDelay()} while
         * the line had no terminator yet (a prompt waiting for input), so the bytes read so far were delivered. A
         * partial line has no terminator: its {@link #nextOffset()} is its offset plus its bytes.
         *
         * @return whether the line continues in the next line event of its stream
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
     * @param partial whether the line continues in the next stdout line (see {@link Line#partial()})
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
     * @param partial whether the line continues in the next stderr line (see {@link Line#partial()})
     * @param nextOffset byte offset just past the line and its terminator
     */
    record Stderr(String text, long offset, boolean partial, long nextOffset) implements Line {
        @Override
        public StreamKind stream() {
            return StreamKind.STDERR;
        }
    }

    /**
     * Raw bytes a command wrote to one stream, as read: emitted instead of lines when {@link
     * ExecOptions#withByteOutput(boolean)} is set. Nothing is decoded or split at line ends; the chunks of a stream
     * are contiguous ({@code nextOffset()} of one is the {@code offset} of the next) and hold at most {@value
     * #MAX_BYTES} bytes each.
     *
     * <pre>{@code
     * ByteArrayOutputStream out = new ByteArrayOutputStream();
     * session.exec(ExecOptions.of("head", "-c", "4096", "/dev/urandom").withByteOutput(true))
     *     .ofType(ExecEvent.Chunk.class)
     *     .filter(c -> c.stream() == ExecEvent.StreamKind.STDOUT)
     *     .doOnNext(c -> out.writeBytes(c.bytes()))
     *     .blockLast();
     * }</pre>
     *
     * @param stream the stream the bytes came from
     * @param data the bytes, read-only, from position to limit
     * @param offset byte offset of the first byte in its stream, counting from 0
     */
    record Chunk(StreamKind stream, ByteBuffer data, long offset) implements ExecEvent {
        /** The most bytes one chunk holds: 64 KiB. */
        public static final int MAX_BYTES = 64 * 1024;

        /**
         * Makes a chunk; {@code data} is kept as a read-only view (not copied).
         *
         * @param stream the stream the bytes came from
         * @param data the bytes, from position to limit
         * @param offset byte offset of the first byte in its stream
         */
        public Chunk {
            java.util.Objects.requireNonNull(stream, "stream");
            data = data.asReadOnlyBuffer();
            if (offset < 0) {
                throw new IllegalArgumentException("offset must not be negative, got " + offset);
            }
        }

        /**
         * The bytes, read-only; each call gives a view of its own, from the first byte of the chunk.
         *
         * @return a read-only buffer
         */
        @Override
        public ByteBuffer data() {
            return data.duplicate();
        }

        /**
         * A copy of the bytes.
         *
         * @return a new array
         */
        public byte[] bytes() {
            byte[] copy = new byte[data.remaining()];
            data.duplicate().get(copy);
            return copy;
        }

        /**
         * How many bytes the chunk holds.
         *
         * @return the count
         */
        public int size() {
            return data.remaining();
        }

        /**
         * Byte offset just past this chunk: where the next chunk of the same stream starts.
         *
         * @return {@code offset() + size()}
         */
        public long nextOffset() {
            return offset + data.remaining();
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
