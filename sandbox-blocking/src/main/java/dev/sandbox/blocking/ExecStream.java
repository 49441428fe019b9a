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
import reactor.core.publisher.Flux;

/**
 * The events of one running command, read by blocking iteration: output lines from stdout and stderr in the order
 * they were written, then exactly one {@link ExecEvent.Exit}, last. Returned by {@link ProcessClient#stream}; the
 * command is already running when you get it.
 *
 * <p>At most a bounded number of events (the client's stream prefetch) is buffered ahead of the reader; when the
 * reader is slower than the command, the command waits in {@code write} rather than memory filling up. Each wait for
 * the next event is bounded by the stream's timeout: when it runs out, the command is killed and {@link
 * dev.sandbox.SandboxTimeoutException} is thrown. An interrupted reader gets the command killed, its interrupt flag
 * restored and a {@link SandboxInterruptedException}. Errors of the command (for example {@link
 * dev.sandbox.ProcessLaunchException} when the program does not exist) are thrown by {@code hasNext()}, unchanged.
 *
 * <p>{@link #close()} kills the command if it is still running and ends the iteration ({@code hasNext()} then returns
 * {@code false}); close a stream you stop reading early, preferably with try-with-resources. A stream can be iterated
 * once, through {@link #iterator()} or {@link #stream()}, by one thread at a time; {@link #close()} may be called from
 * any thread.
 *
 * <pre>{@code
 * try (ExecStream events = client.process().stream(ExecOptions.shell("make test"))) {
 *     for (ExecEvent event : events) {
 *         switch (event) {
 *             case ExecEvent.Stdout out -> System.out.println(out.text());
 *             case ExecEvent.Stderr err -> System.err.println(err.text());
 *             case ExecEvent.Exit exit -> System.out.println("exit " + exit.code());
 *         }
 *     }
 * }
 * }</pre>
 */
public final class ExecStream implements Iterable<ExecEvent>, AutoCloseable {
    private static final String METHOD = "ExecStream iteration";

    private final QueueReader<ExecEvent> reader;
    private final Duration timeout;
    private final String operation;
    private final AtomicBoolean iterated = new AtomicBoolean();

    // reader state: used by the one reading thread only
    private ExecEvent next;

    private ExecStream(Duration timeout, int prefetch, String operation) {
        this.timeout = timeout;
        this.operation = operation;
        this.reader = new QueueReader<>(prefetch);
    }

    /** Subscribes to the events (which starts the command) and returns the stream reading them. */
    static ExecStream start(Flux<ExecEvent> events, Duration timeout, int prefetch, String operation) {
        ExecStream stream = new ExecStream(timeout, prefetch, operation);
        stream.reader.subscribe(events);
        return stream;
    }

    /**
     * The events as an iterator. {@code hasNext()} blocks until the next event arrives, at most for the stream's
     * timeout.
     *
     * <pre>{@code
     * Iterator<ExecEvent> it = events.iterator();
     * while (it.hasNext()) handle(it.next());
     * }</pre>
     *
     * @return an iterator over the events; its {@code remove()} is unsupported
     * @throws IllegalStateException when the stream was already iterated
     */
    @Override
    public Iterator<ExecEvent> iterator() {
        if (!iterated.compareAndSet(false, true)) {
            throw new IllegalStateException("an ExecStream can be iterated only once");
        }
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return advance();
            }

            @Override
            public ExecEvent next() {
                if (!advance()) {
                    throw new NoSuchElementException("the command's events have ended");
                }
                ExecEvent event = ExecStream.this.next;
                ExecStream.this.next = null;
                return event;
            }
        };
    }

    /**
     * The events as a sequential {@link Stream}; closing the returned stream closes this {@code ExecStream}. Like the
     * iterator, each element waits at most for the stream's timeout.
     *
     * <pre>{@code
     * try (ExecStream events = client.process().stream(ExecOptions.of("ls", "-1"));
     *         Stream<ExecEvent> s = events.stream()) {
     *     List<String> names = s.filter(e -> e instanceof ExecEvent.Stdout)
     *             .map(e -> ((ExecEvent.Stdout) e).text())
     *             .toList();
     * }
     * }</pre>
     *
     * @return the events in order, ending with the exit
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
     * Whether the iterator's next {@code hasNext()} returns at once, without waiting: an event is buffered, or the
     * stream has ended or failed. Never blocks. A writer can use it to flush its output only when no more events are
     * pending.
     *
     * <pre>{@code
     * for (Iterator<ExecEvent> it = events.iterator(); it.hasNext(); ) {
     *     write(it.next());
     *     if (!events.ready()) out.flush();
     * }
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
     * Duration perEvent = events.timeout();
     * }</pre>
     *
     * @return the per-event timeout
     */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Kills the command if it is still running and ends the iteration: afterwards {@code hasNext()} returns {@code
     * false}. Never blocks, never throws; idempotent; safe from any thread, including to stop a reader that is
     * waiting on another thread.
     *
     * <pre>{@code
     * ExecStream events = client.process().stream(ExecOptions.of("tail", "-f", "/var/log/app.log"));
     * // ... read until the line you want, then
     * events.close();
     * }</pre>
     */
    @Override
    public void close() {
        reader.close(); // also wakes a reader waiting for the next event
    }

    /** Moves to the next event if there is none yet; {@code false} at the end. */
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
