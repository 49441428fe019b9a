package dev.sandbox.blocking;

import dev.sandbox.FileEvent;
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
 * The changes in a watched directory of the session, read by blocking calls; from {@link FileClient#watch(String)}.
 * The watch runs until {@link #close()}: use try-with-resources.
 *
 * <p>Two ways to read: {@link #poll(Duration)} waits up to a timeout and returns {@code null} when nothing happened,
 * the watch going on; iteration waits for each event at most for the watch's timeout (the client's default), past
 * which the watch ends with {@link dev.sandbox.SandboxTimeoutException}. Events are buffered up to a bound when not
 * read; past it they are replaced by one {@link FileEvent.Kind#OVERFLOW}, after which the directory should be listed
 * again. A change made at once after {@code watch} returned may be missed while the provider is still setting the
 * watch up.
 *
 * <pre>{@code
 * try (FileWatch watch = client.fs().watch("out")) {
 *     client.process().start(ExecOptions.shell("./render.sh > out/frame.png"));
 *     FileEvent event = watch.poll(Duration.ofSeconds(30));
 *     if (event != null && event.kind() == FileEvent.Kind.CREATED) System.out.println(event.path());
 * }
 * }</pre>
 */
public final class FileWatch implements Iterable<FileEvent>, AutoCloseable {
    private static final String METHOD = "FileWatch";

    private final QueueReader<FileEvent> reader;
    private final Duration timeout;
    private final String operation;
    private final AtomicBoolean iterated = new AtomicBoolean();

    // reader state: used by the one reading thread only
    private FileEvent next;

    private FileWatch(Duration timeout, int prefetch, String operation) {
        this.timeout = timeout;
        this.operation = operation;
        this.reader = new QueueReader<>(prefetch);
    }

    static FileWatch open(Publisher<FileEvent> events, Duration timeout, int prefetch, String operation) {
        FileWatch watch = new FileWatch(timeout, prefetch, operation);
        watch.reader.subscribe(events);
        return watch;
    }

    /**
     * Waits at most {@code timeout} for the next change.
     *
     * <pre>{@code
     * FileEvent event = watch.poll(Duration.ofSeconds(5));
     * if (event == null) System.out.println("nothing changed");
     * }</pre>
     *
     * @param timeout how long to wait; positive
     * @return the change, or {@code null} when none came in time (the watch goes on) or the watch was closed
     * @throws dev.sandbox.FileOperationException when the watch failed, for example because the directory went away
     * @throws SandboxInterruptedException when the thread was interrupted; the watch is closed
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public FileEvent poll(Duration timeout) {
        Blocking.requirePositive(timeout, "timeout");
        Blocking.checkCanBlock(METHOD + ".poll");
        if (next != null) {
            FileEvent event = next;
            next = null;
            return event;
        }
        if (reader.ended()) {
            return null;
        }
        if (Thread.currentThread().isInterrupted()) {
            close();
            throw new SandboxInterruptedException(operation, null);
        }
        try {
            return reader.poll(Blocking.nanos(timeout), operation);
        } catch (InterruptedException e) {
            close();
            Thread.currentThread().interrupt();
            throw new SandboxInterruptedException(operation, e);
        }
    }

    /**
     * The changes as an iterator; {@code hasNext()} waits for the next one at most for the watch's timeout, then
     * ends the watch and throws {@link dev.sandbox.SandboxTimeoutException}. It returns {@code false} once the watch
     * is closed.
     *
     * <pre>{@code
     * for (FileEvent event : watch) {
     *     if (event.path().endsWith("/done")) break;
     * }
     * }</pre>
     *
     * @return an iterator over the changes
     * @throws IllegalStateException when the watch was already iterated
     */
    @Override
    public Iterator<FileEvent> iterator() {
        if (!iterated.compareAndSet(false, true)) {
            throw new IllegalStateException("a FileWatch can be iterated only once");
        }
        return new Iterator<>() {
            @Override
            public boolean hasNext() {
                return advance();
            }

            @Override
            public FileEvent next() {
                if (!advance()) {
                    throw new NoSuchElementException("the watch has ended");
                }
                FileEvent event = FileWatch.this.next;
                FileWatch.this.next = null;
                return event;
            }
        };
    }

    /**
     * The changes as a sequential {@link Stream}; closing the returned stream closes the watch.
     *
     * <pre>{@code
     * try (FileWatch watch = client.fs().watch("inbox"); Stream<FileEvent> s = watch.stream()) {
     *     FileEvent firstCreated = s.filter(e -> e.kind() == FileEvent.Kind.CREATED).findFirst().orElseThrow();
     * }
     * }</pre>
     *
     * @return the changes
     * @throws IllegalStateException when the watch was already iterated
     */
    public Stream<FileEvent> stream() {
        return StreamSupport.stream(
                        Spliterators.spliteratorUnknownSize(
                                iterator(), Spliterator.ORDERED | Spliterator.NONNULL | Spliterator.IMMUTABLE),
                        false)
                .onClose(this::close);
    }

    /**
     * The longest the iterator waits for any one change.
     *
     * <pre>{@code
     * Duration perEvent = watch.timeout();
     * }</pre>
     *
     * @return the per-event timeout of the iteration
     */
    public Duration timeout() {
        return timeout;
    }

    /**
     * Ends the watch. Never blocks, never throws; idempotent; safe from any thread, including to stop a reader
     * waiting on another thread.
     *
     * <pre>{@code
     * watch.close();
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
            next = reader.take(
                    timeout, METHOD + " iteration", operation, "waiting for the next change of " + operation);
        }
        return next != null;
    }
}
