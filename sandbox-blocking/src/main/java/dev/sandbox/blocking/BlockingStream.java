package dev.sandbox.blocking;

import java.time.Duration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;

/**
 * What {@link ExecStream}, {@link ProcessOutput} and {@link FileWatch} share: a bounded queue filled by a subscription,
 * read once by blocking iteration in which every wait is bounded by the stream's timeout, and a {@link #close()} that
 * cancels the subscription from any thread.
 *
 * @param <T> the element type
 */
abstract class BlockingStream<T> implements Iterable<T>, AutoCloseable {
    final QueueReader<T> reader;
    final String operation;
    private final Duration timeout;
    private final String name;
    private final String endMessage;
    private final AtomicBoolean iterated = new AtomicBoolean();

    // reader state: used by the one reading thread only
    @Nullable
    T next;

    BlockingStream(String name, String endMessage, Duration timeout, int prefetch, String operation) {
        this.name = name;
        this.endMessage = endMessage;
        this.timeout = timeout;
        this.operation = operation;
        this.reader = new QueueReader<>(prefetch);
    }

    final void subscribe(Publisher<T> source) {
        reader.subscribe(source);
    }

    /**
     * The elements as an iterator. {@code hasNext()} blocks until the next one arrives, at most for the stream's
     * timeout, and returns {@code false} once the stream has ended or was closed.
     *
     * <pre>{@code
     * Iterator<ExecEvent> it = events.iterator();
     * while (it.hasNext()) handle(it.next());
     * }</pre>
     *
     * @return an iterator; its {@code remove()} is unsupported
     * @throws IllegalStateException when the stream was already iterated
     */
    @Override
    public final Iterator<T> iterator() {
        if (!iterated.compareAndSet(false, true)) {
            throw new IllegalStateException("a " + name + " can be iterated only once");
        }
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return advance() != null;
            }

            @Override
            public T next() {
                T element = advance();
                if (element == null) {
                    throw new NoSuchElementException(endMessage);
                }
                BlockingStream.this.next = null;
                return element;
            }
        };
    }

    /**
     * The elements as a sequential {@link Stream}; closing the returned stream closes this one. Like the iterator,
     * each element waits at most for the stream's timeout.
     *
     * <pre>{@code
     * try (ExecStream events = client.process().exec(ExecOptions.of("ls", "-1"));
     *         Stream<ExecEvent> s = events.stream()) {
     *     long lines = s.filter(e -> e instanceof ExecEvent.Stdout).count();
     * }
     * }</pre>
     *
     * @return the elements in order
     * @throws IllegalStateException when the stream was already iterated
     */
    public final Stream<T> stream() {
        return StreamSupport.stream(
                        Spliterators.spliteratorUnknownSize(
                                iterator(), Spliterator.ORDERED | Spliterator.NONNULL | Spliterator.IMMUTABLE),
                        false)
                .onClose(this::close);
    }

    /**
     * Whether the iterator's next {@code hasNext()} returns at once, without waiting: an element is buffered, or the
     * stream has ended or failed. Never blocks. A writer can use it to flush its output only when nothing more is
     * pending.
     *
     * <pre>{@code
     * for (Iterator<ExecEvent> it = events.iterator(); it.hasNext(); ) {
     *     write(it.next());
     *     if (!events.ready()) out.flush();
     * }
     * }</pre>
     *
     * @return {@code true} when reading the next element will not block
     */
    public final boolean ready() {
        return next != null || reader.ready();
    }

    /**
     * The longest any single wait for the next element may take.
     *
     * <pre>{@code
     * Duration perElement = events.timeout();
     * }</pre>
     *
     * @return the per-element timeout
     */
    public final Duration timeout() {
        return timeout;
    }

    /**
     * Ends the reading: afterwards {@code hasNext()} returns {@code false}. Never blocks, never throws; idempotent;
     * safe from any thread, including to stop a reader waiting on another thread.
     */
    @Override
    public void close() {
        reader.close(); // also wakes a reader waiting for the next element
    }

    /** The element the iterator hands out next, taken from the reader when none is buffered; {@code null} at the end. */
    private @Nullable T advance() {
        if (reader.closed()) {
            return null;
        }
        if (next == null) {
            next = reader.take(timeout, name + " iteration", operation, "waiting for the next element of " + operation);
        }
        return next;
    }
}
