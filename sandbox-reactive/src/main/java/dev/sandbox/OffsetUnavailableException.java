package dev.sandbox;

/**
 * A background process's output was asked for from a byte offset that its ring buffer has already dropped. The
 * exception says which offsets remain, so the caller can resume from {@link #firstAvailable()}.
 *
 * <pre>{@code
 * process.output(0, 0)
 *     .onErrorResume(OffsetUnavailableException.class, e -> e.stream() == ExecEvent.StreamKind.STDOUT
 *             ? process.output(e.firstAvailable(), 0)
 *             : process.output(0, e.firstAvailable()));
 * }</pre>
 */
public class OffsetUnavailableException extends SandboxStateException {
    private static final long serialVersionUID = 1L;

    private final ExecEvent.StreamKind stream;
    private final long requested;
    private final long firstAvailable;
    private final long end;

    /**
     * Creates the exception.
     *
     * @param processId the background process
     * @param stream the stream asked for
     * @param requested the offset asked for
     * @param firstAvailable the oldest offset still held
     * @param end the offset just past the newest byte held
     */
    public OffsetUnavailableException(
            String processId, ExecEvent.StreamKind stream, long requested, long firstAvailable, long end) {
        super("offset " + requested + " of " + stream.name().toLowerCase(java.util.Locale.ROOT) + " of process "
                + processId + " was dropped; offsets " + firstAvailable + " to " + end + " remain");
        this.stream = stream;
        this.requested = requested;
        this.firstAvailable = firstAvailable;
        this.end = end;
    }

    /**
     * The stream whose offset was dropped.
     *
     * @return stdout or stderr
     */
    public ExecEvent.StreamKind stream() {
        return stream;
    }

    /**
     * The offset asked for.
     *
     * @return the offset
     */
    public long requested() {
        return requested;
    }

    /**
     * The oldest offset still held.
     *
     * @return the offset
     */
    public long firstAvailable() {
        return firstAvailable;
    }

    /**
     * The offset just past the newest byte held.
     *
     * @return the offset
     */
    public long end() {
        return end;
    }
}
