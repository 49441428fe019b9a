package dev.sandbox.blocking;

import dev.sandbox.ExecEvent;
import java.time.Duration;
import reactor.core.publisher.Flux;

/**
 * The events of one running command, read by blocking iteration: output lines from stdout and stderr in the order
 * they were written, then exactly one {@link ExecEvent.Exit}, last. Returned by {@link ProcessClient#exec}; the
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
 * try (ExecStream events = client.process().exec(ExecOptions.shell("make test"))) {
 *     for (ExecEvent event : events) {
 *         switch (event) {
 *             case ExecEvent.Stdout out -> System.out.println(out.text());
 *             case ExecEvent.Stderr err -> System.err.println(err.text());
 *             case ExecEvent.Chunk chunk -> {} // only with ExecOptions.withByteOutput(true)
 *             case ExecEvent.Exit exit -> System.out.println("exit " + exit.code());
 *         }
 *     }
 * }
 * }</pre>
 */
public final class ExecStream extends BlockingStream<ExecEvent> {
    private ExecStream(Duration timeout, int prefetch, String operation) {
        super("ExecStream", "the command's events have ended", timeout, prefetch, operation);
    }

    /** Subscribes to the events (which starts the command) and returns the stream reading them. */
    static ExecStream start(Flux<ExecEvent> events, Duration timeout, int prefetch, String operation) {
        ExecStream stream = new ExecStream(timeout, prefetch, operation);
        stream.subscribe(events);
        return stream;
    }

    /**
     * Kills the command if it is still running and ends the iteration: afterwards {@code hasNext()} returns {@code
     * false}. Never blocks, never throws; idempotent; safe from any thread, including to stop a reader that is
     * waiting on another thread.
     *
     * <pre>{@code
     * ExecStream events = client.process().exec(ExecOptions.of("tail", "-f", "/var/log/app.log"));
     * // ... read until the line you want, then
     * events.close();
     * }</pre>
     */
    @Override
    public void close() {
        super.close();
    }
}
