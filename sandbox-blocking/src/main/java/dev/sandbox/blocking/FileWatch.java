package dev.sandbox.blocking;

import dev.sandbox.FileEvent;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;

/**
 * The changes in a watched directory of the session, read by blocking calls; from {@link FileClient#watch(String)}.
 * The watch runs until {@link #close()}: use try-with-resources.
 *
 * <p>Two ways to read: {@link #poll(Duration)} waits up to a timeout and returns {@code null} when nothing happened,
 * the watch going on; iteration waits for each event at most for the watch's timeout (the client's default), past
 * which the watch ends with {@link dev.sandbox.SandboxTimeoutException}. Events are buffered up to a bound when not
 * read; past it they are replaced by one {@link FileEvent.Kind#OVERFLOW}, after which the directory should be listed
 * again. {@code watch} returns once the watch is live (it consumes the reactive watch's {@link FileEvent.Kind#READY},
 * which neither {@link #poll} nor iteration returns): a change made after it returned is reported. Which change gives
 * which events is the table on {@link dev.sandbox.SandboxFiles#watch(String, boolean)}.
 *
 * <pre>{@code
 * try (FileWatch watch = client.files().watch("out")) {
 *     client.process().start(ExecOptions.shell("./render.sh > out/frame.png"));
 *     FileEvent event = watch.poll(Duration.ofSeconds(30));
 *     if (event != null && event.kind() == FileEvent.Kind.CREATED) System.out.println(event.path());
 * }
 * }</pre>
 */
public final class FileWatch extends BlockingStream<FileEvent> {
    private FileWatch(Duration timeout, int prefetch, String operation) {
        super("FileWatch", "the watch has ended", timeout, prefetch, operation);
    }

    /** Subscribes and waits, at most {@code timeout}, until the watch is live (its READY, consumed here). */
    static FileWatch open(Publisher<FileEvent> events, Duration timeout, int prefetch, String operation) {
        FileWatch watch = new FileWatch(timeout, prefetch, operation);
        watch.subscribe(events);
        FileEvent first = watch.reader.take(
                timeout, "FileClient.watch", operation, "waiting for the " + operation + " to be ready");
        if (first != null && first.kind() != FileEvent.Kind.READY) {
            watch.next = first; // a provider without READY: its first change is kept for the reader
        }
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
    public @Nullable FileEvent poll(Duration timeout) {
        Blocking.requirePositive(timeout, "timeout");
        Blocking.checkCanBlock("FileWatch.poll");
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
     * Ends the watch. Never blocks, never throws; idempotent; safe from any thread, including to stop a reader
     * waiting on another thread.
     *
     * <pre>{@code
     * watch.close();
     * }</pre>
     */
    @Override
    public void close() {
        super.close();
    }
}
