package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.FileEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/** A running watch whose events a test takes one by one, with a timeout per event. */
final class WatchEvents implements AutoCloseable {
    private static final Object COMPLETE = new Object();

    // the watch's signals arrive on a non-blocking thread: a lock-free queue and a semaphore's release never park it
    // (a LinkedBlockingQueue's offer can, when the test thread holds its lock, and BlockHound fails that)
    private final Queue<Object> queue = new ConcurrentLinkedQueue<>(); // bounded by what the tests cause
    private final Semaphore arrived = new Semaphore(0);
    private final Disposable subscription;

    WatchEvents(Flux<FileEvent> watch) {
        subscription = watch.subscribe(this::put, this::put, () -> put(COMPLETE));
    }

    private void put(Object signal) {
        queue.add(signal);
        arrived.release();
    }

    /** The next event; fails when none comes within {@code timeout} or the watch ended. */
    FileEvent next(Duration timeout) {
        Object o;
        try {
            o = arrived.tryAcquire(timeout.toMillis(), TimeUnit.MILLISECONDS) ? queue.poll() : null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
        if (o instanceof Throwable t) {
            throw new AssertionError("the watch failed: " + t, t);
        }
        assertThat(o).as("the next watch event within " + timeout).isNotNull().isNotSameAs(COMPLETE);
        return (FileEvent) o;
    }

    /** Waits for READY (which must be the first event) and returns its path. */
    String ready(Duration timeout) {
        FileEvent first = next(timeout);
        assertThat(first.kind()).as("the first event, " + first).isEqualTo(FileEvent.Kind.READY);
        return first.path();
    }

    /** The events up to and including the first that matches {@code last}. */
    List<FileEvent> until(Predicate<FileEvent> last, Duration timeout) {
        List<FileEvent> events = new ArrayList<>();
        while (true) {
            FileEvent e = next(timeout);
            events.add(e);
            if (last.test(e)) {
                return events;
            }
            assertThat(events.size()).as("events so far: " + events).isLessThan(1000);
        }
    }

    /** Drops consecutive equal {@code MODIFIED} events, which a provider may coalesce or not. */
    static List<FileEvent> collapsed(List<FileEvent> events) {
        List<FileEvent> out = new ArrayList<>();
        for (FileEvent e : events) {
            if (e.kind() == FileEvent.Kind.MODIFIED
                    && !out.isEmpty()
                    && out.getLast().equals(e)) {
                continue;
            }
            out.add(e);
        }
        return out;
    }

    @Override
    public void close() {
        subscription.dispose();
    }
}
