package dev.sandbox;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A command running in the background of a session, started with {@link SandboxSession#start(ExecOptions)}. Its
 * output is kept in a bounded ring buffer per stream (see {@link BackgroundOptions}), so it can be read late, more
 * than once, and from a byte offset: every line event carries its offset, and a reader that lost its connection
 * resumes from the offset after the last line it saw.
 *
 * <p>Its standard input stays open for {@link #writeStdin(ByteBuffer)} until {@link #closeStdin()}, unless the
 * {@link ExecOptions} gave a stdin publisher.
 *
 * <pre>{@code
 * BackgroundProcess server = session.start(ExecOptions.of("python3", "-m", "http.server")).block(timeout);
 * server.output(0, 0).take(1).subscribe(first -> System.out.println("up: " + first));
 * // later, from anywhere that has the session:
 * session.process(server.id()).flatMap(BackgroundProcess::kill).block(timeout);
 * }</pre>
 */
public interface BackgroundProcess {

    /**
     * The process's id within its session.
     *
     * @return the id
     */
    String id();

    /**
     * The process's pid inside the sandbox, where the provider knows it.
     *
     * @return the pid or empty
     */
    OptionalLong pid();

    /**
     * The command it runs.
     *
     * @return the argument vector
     */
    List<String> argv();

    /**
     * When it was started.
     *
     * @return the start time
     */
    Instant startedAt();

    /**
     * Emits the exit when the process ends (at once if it has ended).
     *
     * @return the exit
     */
    Mono<ExecEvent.Exit> exit();

    /**
     * The exit, if the process has ended; never waits.
     *
     * @return the exit or empty while it runs
     */
    Optional<ExecEvent.Exit> exitNow();

    /**
     * Streams the process's output from byte offsets (one per stream) and follows it live; ends with the {@link
     * ExecEvent.Exit} once the process has ended and everything was read. Can be subscribed any number of times.
     * An offset the ring has already dropped fails with {@link OffsetUnavailableException}, which says what remains;
     * an offset past what has been written waits for the output to get there (once the process has ended, only the
     * exit follows). A line still being written comes as a {@linkplain ExecEvent.Line#partial() partial} line once the
     * process has been quiet for {@link ExecOptions#partialLineDelay()}; to read on from there, use its {@link
     * ExecEvent.Line#nextOffset()}. A process started with {@link ExecOptions#withByteOutput(boolean)} gives {@link
     * ExecEvent.Chunk}s instead of lines.
     *
     * @param stdoutOffset where to start in stdout (0 for the beginning)
     * @param stderrOffset where to start in stderr
     * @return the line (or chunk) events, then the exit
     */
    Flux<ExecEvent> output(long stdoutOffset, long stderrOffset);

    /**
     * Streams what the ring holds now from the given offsets, without following: completes when the reader has
     * caught up, with no exit event if the process still runs. A last line still being written comes last, as a
     * {@linkplain ExecEvent.Line#partial() partial} line (an incomplete multi-byte character at its end excepted).
     * A process started with {@link ExecOptions#withByteOutput(boolean)} gives {@link ExecEvent.Chunk}s.
     *
     * @param stdoutOffset where to start in stdout
     * @param stderrOffset where to start in stderr
     * @return the line events available now
     */
    Flux<ExecEvent> snapshot(long stdoutOffset, long stderrOffset);

    /**
     * Waits for the end and collects the whole output from offset 0, keeping at most {@link
     * ExecOptions#maxOutputBytes()} per stream. Collecting drains the process: a second call fails with {@link
     * SandboxStateException}, and so does a call when the ring has already dropped the start of the output.
     *
     * @return the result
     */
    Mono<ExecResult> collect();

    /**
     * Sends a signal to the process and everything in its process group.
     *
     * @param signal a signal number from 1 to 64, such as 15 (SIGTERM)
     * @return completes when the signal was sent
     */
    Mono<Void> signal(int signal);

    /**
     * Kills the process and its process group with SIGKILL.
     *
     * @return completes when the kill was sent
     */
    Mono<Void> kill();

    /**
     * Writes bytes to the process's standard input; completes once they are handed to the process, so successive
     * writes are naturally paced by how fast the process reads. Writes (and {@link #closeStdin()}) take effect in the
     * order they are subscribed, also when a caller does not wait for one before the next; at most 16 may wait at
     * once, beyond that a write fails with {@link SandboxStateException}.
     *
     * @param bytes the bytes
     * @return completes when written
     */
    Mono<Void> writeStdin(ByteBuffer bytes);

    /**
     * Closes the process's standard input, after pending writes.
     *
     * @return completes when closed
     */
    Mono<Void> closeStdin();
}
