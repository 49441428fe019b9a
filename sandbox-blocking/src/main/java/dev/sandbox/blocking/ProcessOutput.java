package dev.sandbox.blocking;

import dev.sandbox.ExecEvent;
import java.time.Duration;
import org.reactivestreams.Publisher;

/**
 * The output of a background process read from byte offsets, by blocking iteration; returned by {@link
 * BackgroundProcessHandle#output(long, long)} (which follows the output until the process exits and ends with its
 * {@link ExecEvent.Exit}) and {@link BackgroundProcessHandle#snapshot(long, long)} (which ends once it has caught up,
 * with no exit while the process runs). Every line event carries its stream offset ({@link ExecEvent.Line#offset()}).
 *
 * <p>Unlike an {@link ExecStream}, closing it only stops <em>reading</em>: the process keeps running, and its output
 * can be read again, from any offset its ring buffer still holds. At most a bounded number of events (the client's
 * stream prefetch) is buffered ahead of the reader. Each wait for the next event is bounded by the stream's timeout;
 * when it runs out the reading stops and {@link dev.sandbox.SandboxTimeoutException} is thrown, the process untouched.
 * A start offset the ring has already dropped is an {@link dev.sandbox.OffsetUnavailableException} (thrown by {@code
 * hasNext()}), which says which offsets remain.
 *
 * <p>It can be iterated once, by one thread at a time; {@link #close()} may be called from any thread.
 *
 * <pre>{@code
 * try (ProcessOutput output = server.output(0, 0)) {
 *     for (ExecEvent event : output) {
 *         if (event instanceof ExecEvent.Stdout out && out.text().contains("listening")) {
 *             break; // the server keeps running
 *         }
 *     }
 * }
 * }</pre>
 */
public final class ProcessOutput extends BlockingStream<ExecEvent> {
    private ProcessOutput(Duration timeout, int prefetch, String operation) {
        super("ProcessOutput", "the process's output has ended", timeout, prefetch, operation);
    }

    /** Subscribes to the output and returns the stream reading it. */
    static ProcessOutput open(Publisher<ExecEvent> events, Duration timeout, int prefetch, String operation) {
        ProcessOutput stream = new ProcessOutput(timeout, prefetch, operation);
        stream.subscribe(events);
        return stream;
    }

    /**
     * Stops reading: afterwards {@code hasNext()} returns {@code false}. The process is not affected. Never blocks,
     * never throws; idempotent; safe from any thread, including to stop a reader waiting on another thread.
     *
     * <pre>{@code
     * ProcessOutput output = server.output(0, 0);
     * // ... on another thread, when the user clicks "stop following":
     * output.close();
     * }</pre>
     */
    @Override
    public void close() {
        super.close();
    }
}
