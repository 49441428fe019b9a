package dev.sandbox.implementation.exec;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.implementation.process.RawEvent;
import java.time.Duration;
import java.util.function.Function;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The line framing, output collection and exit mapping of {@link ExecRunner}, for a provider whose sandbox holds a
 * background process's output itself (so the bytes come from the sandbox, not from a ring in this JVM).
 */
public final class LineFraming {
    private LineFraming() {}

    /**
     * Frames raw output into line events with exact offsets, as {@link ExecRunner} does: each subscription gets its
     * own framer, whose streams start at the given offsets. Asks the raw stream for one chunk at a time. Output
     * without a line terminator comes as a partial line after the options' partial-line delay, and when the raw
     * stream ends without an exit (a snapshot), as partial lines at the end. With byte output, chunk events.
     *
     * @param raw the chunks (in stream order) and at most one exit
     * @param options the charset and maximum line length
     * @param stdoutStart the stdout offset of the first chunk of stdout
     * @param stderrStart the stderr offset of the first chunk of stderr
     * @param exitMapper how a raw exit becomes the exit event
     * @return the line events, then the exit if {@code raw} had one
     */
    public static Flux<ExecEvent> frame(
            Flux<RawEvent> raw,
            ExecOptions options,
            long stdoutStart,
            long stderrStart,
            Function<RawEvent.Exited, ExecEvent.Exit> exitMapper) {
        return Flux.defer(() -> {
            LineFramer framer = new LineFramer(options, exitMapper, stdoutStart, stderrStart);
            return QuietFlush.apply(raw, options, Schedulers.parallel())
                    .concatMapIterable(framer::frame, 1)
                    .concatWith(Flux.defer(() -> Flux.fromIterable(framer::pending)));
        });
    }

    /**
     * Collects raw output from offset 0 as {@link ExecRunner#run} does: at most {@link
     * ExecOptions#maxOutputBytes()} kept per stream, every byte counted.
     *
     * @param raw the whole output from offset 0, then the exit
     * @param options the cap and charset
     * @param exitMapper how a raw exit becomes the exit event
     * @return the result, once {@code raw} completed with an exit
     */
    public static Mono<ExecResult> collect(
            Flux<RawEvent> raw, ExecOptions options, Function<RawEvent.Exited, ExecEvent.Exit> exitMapper) {
        return Mono.defer(() -> {
            OutputCollector collector = new OutputCollector(options.maxOutputBytes(), exitMapper);
            return raw.doOnNext(collector::accept).then(Mono.fromSupplier(() -> collector.result(options.charset())));
        });
    }

    /**
     * The exit event of a process, as {@link ExecRunner} reports it: 124 for a timeout this SDK enforced, 128 plus
     * the signal for a signal (or an out-of-memory kill), else the exit status.
     *
     * @param exited the raw exit
     * @param took how long the process ran
     * @param timedOut whether this SDK killed it because its {@link ExecOptions#timeout()} passed
     * @return the exit event
     */
    public static ExecEvent.Exit exit(RawEvent.Exited exited, Duration took, boolean timedOut) {
        if (timedOut) {
            return new ExecEvent.Exit(124, ExecEvent.Termination.TIMED_OUT, took);
        }
        if (exited.oomKilled()) {
            return new ExecEvent.Exit(128 + exited.status(), ExecEvent.Termination.OOM_KILLED, took);
        }
        if (exited.signaled()) {
            return new ExecEvent.Exit(128 + exited.status(), ExecEvent.Termination.SIGNALED, took);
        }
        return new ExecEvent.Exit(exited.status(), ExecEvent.Termination.EXITED, took);
    }
}
