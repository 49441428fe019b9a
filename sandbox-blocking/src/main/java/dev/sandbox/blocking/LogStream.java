package dev.sandbox.blocking;

import dev.sandbox.ExecEvent;
import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.reactivestreams.Publisher;

/**
 * The output of a background process read from byte offsets, by blocking iteration; returned by {@link
 * BackgroundProcessHandle#logs(long, long)} (which follows the output until the process exits and ends with its
 * {@link ExecEvent.Exit}) and {@link BackgroundProcessHandle#snapshot(long, long)} (which ends once it has caught up,
 * with no exit while the process runs). Every line event carries its stream offset ({@link ExecEvent.Line#offset()}).
 *
 * <p>Unlike an {@link ExecStream}, closing a log stream only stops <em>reading</em>: the process keeps running, and
 * its output can be read again, from any offset its ring buffer still holds. At most a bounded number of events (the
 * client's stream prefetch) is buffered ahead of the reader. Each wait for the next event is bounded by the stream's
 * timeout; when it runs out the reading stops and {@link dev.sandbox.SandboxTimeoutException} is thrown, the process
 * untouched. A start offset the ring has already dropped is an {@link dev.sandbox.OffsetUnavailableException}
 * (thrown by {@code hasNext()}), which says which offsets remain.
 *
 * <p>A stream can be iterated once, by one thread at a time; {@link #close()} may be called from any thread.
 *
 * <pre>{@code
 * try (LogStream logs = server.logs(0, 0)) {
 *     for (ExecEvent event : logs) {
 *         if (event instanceof ExecEvent.Stdout out && out.text().contains("listening")) {
 *             break; // the server keeps running
 *         }
 *     }
 * }
 * }</pre>
 */
public final class LogStream implements Iterable<ExecEvent>, AutoCloseable {
    private static final String METHOD = "LogStream iteration";

    private final QueueReader<ExecEvent> reader;
    private final Duration timeout;
    private final String operation;
    private final AtomicBoolean iterated = new AtomicBoolean();

    // reader state: used by the one reading thread only
    private ExecEvent next;

    private LogStream(Duration timeout, int prefetch, String operation) {
        this.timeout = timeout;
        this.operation = operation;
        this.reader = new QueueReader<>(prefetch);
    }

    /** Subscribes to the output and returns the stream reading it. */
    static LogStream open(Publisher<ExecEvent> events, Duration timeout, int prefetch, String operation) {
        LogStream stream = new LogStream(timeout, prefetch, operation);
        stream.reader.subscribe(events);
        return stream;
    }

    /**
     * The events as an iterator. {@code hasNext()} blocks until the next event arrives, at most for the stream's
     * timeout.
     *
     * <pre>{@code
     * Iterator<ExecEvent> it = logs.iterator();
     * while (it.hasNext()) handle(it.next());
     * }</pre>
     *
     * @return an iterator over the events; its {@code remove()} is unsupported
     * @throws IllegalStateException when the stream was already iterated
     */
    @Override
    public Iterator<ExecEvent> iterator() {
        if (!iterated.compareAndSet(false, true)) {
            throw new IllegalStateException("a LogStream can be iterated only once");
        }
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return advance();
            }

            @Override
            public ExecEvent next() {
                if (!advance()) {
                    throw new NoSuchElementException("the process's output has ended");
                }
                ExecEvent event = LogStream.this.next;
                LogStream.this.next = null;
                return event;
            }
        };
    }

    /**
     * The events as a sequential {@link Stream}; closing the returned stream closes this {@code LogStream}.
     *
     * <pre>{@code
     * try (LogStream logs = process.snapshot(0, 0); Stream<ExecEvent> s = logs.stream()) {
     *     long errors = s.filter(e -> e instanceof ExecEvent.Stderr).count();
     * }
     * }</pre>
     *
     * @return the events in order
     * @throws IllegalStateException when the stream was already iterated
     */
    public Stream<ExecEvent> stream() {
        return StreamSupport.stream(
                        Spliterators.spliteratorUnknownSize(
                                iterator(), Spliterator.ORDERED | Spliterator.NONNULL | Spliterator.IMMUTABLE),
                        false)
                .onClose(this::close);
    }

    /**
     * Whether reading the next event returns at once, without waiting. Never blocks.
     *
     * <pre>{@code
     * if (!logs.ready()) out.flush();
     * }</pre>
     *
     * @return {@code true} when reading the next event will not block
     */
    public boolean ready() {
        return next != null || reader.ready();
    }

    /**
     * The longest any single wait for the next event may take.
     *
     * <pre>{@code
     * Duration perEvent = logs.timeout();
     * }</pre>
     *
     * @return the per-event timeout
     */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Stops reading: afterwards {@code hasNext()} returns {@code false}. The process is not affected. Never blocks,
     * never throws; idempotent; safe from any thread, including to stop a reader waiting on another thread.
     *
     * <pre>{@code
     * LogStream logs = server.logs(0, 0);
     * // ... on another thread, when the user clicks "stop following":
     * logs.close();
     * }</pre>
     */
    @Override
    public void close() {
        reader.close();
    }

    private boolean advance() {
        if (reader.closed()) {
            return false;
        }
        if (next == null) {
            next = reader.take(timeout, METHOD, operation, "waiting for the next event of " + operation);
        }
        return next != null;
    }
}
