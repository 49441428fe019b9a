package dev.sandbox.blocking;

import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import org.jspecify.annotations.Nullable;

/**
 * A blocking handle to a command running in the background of the client's session; from {@link
 * ProcessClient#start(ExecOptions)} or, for one started earlier, {@link ProcessClient#process(String)}. The process
 * runs on its own: the handle reads its output, waits for it and controls it, and dropping the handle does not stop it
 * (the session's end does). Each method has the name of the {@link BackgroundProcess} method it adapts and means the
 * same: {@link #exit()} waits for the exit, {@link #exitNow()} does not.
 *
 * <p>Its output is kept in a bounded ring buffer per stream ({@link dev.sandbox.BackgroundOptions}), so it can be read
 * late, more than once and from a byte offset with {@link #output(long, long)}. Waiting calls are bounded by the
 * client's default timeout unless given one, and follow the facade's rules: {@link SandboxInterruptedException} on
 * interrupt, {@link IllegalStateException} on a Reactor non-blocking thread, the SDK's exceptions unchanged. A timeout
 * while <em>waiting</em> ({@link #exit}, {@link #collect}) throws {@link dev.sandbox.SandboxTimeoutException} and
 * leaves the process running.
 *
 * <pre>{@code
 * BackgroundProcessHandle server = client.process().start(ExecOptions.of("python3", "-m", "http.server", "8000"));
 * try (ProcessOutput output = server.output(0, 0)) {
 *     for (ExecEvent event : output) {
 *         if (event instanceof ExecEvent.Stderr err && err.text().contains("Serving HTTP")) break;
 *     }
 * }
 * // ... use the server, then
 * server.kill();
 * ExecEvent.Exit exit = server.exit(Duration.ofSeconds(5));
 * }</pre>
 */
public final class BackgroundProcessHandle {
    private final ClientCore core;
    private final BackgroundProcess process;

    BackgroundProcessHandle(ClientCore core, BackgroundProcess process) {
        this.core = core;
        this.process = process;
    }

    /**
     * The process's id within its session, for {@link ProcessClient#process(String)}.
     *
     * <pre>{@code
     * String id = handle.id(); // for example "p-1"
     * }</pre>
     *
     * @return the id
     */
    public String id() {
        return process.id();
    }

    /**
     * The process's pid inside the sandbox, where the provider knows it.
     *
     * <pre>{@code
     * handle.pid().ifPresent(pid -> log.info("started pid {}", pid));
     * }</pre>
     *
     * @return the pid, or empty
     */
    public OptionalLong pid() {
        return process.pid();
    }

    /**
     * The command the process runs.
     *
     * <pre>{@code
     * List<String> argv = handle.argv();
     * }</pre>
     *
     * @return the argument vector
     */
    public List<String> argv() {
        return process.argv();
    }

    /**
     * When the process was started.
     *
     * <pre>{@code
     * Duration age = Duration.between(handle.startedAt(), Instant.now());
     * }</pre>
     *
     * @return the start time
     */
    public Instant startedAt() {
        return process.startedAt();
    }

    /**
     * The exit code once the process has ended; never waits. The same as {@link dev.sandbox.ProcessInfo#exitCode()}.
     *
     * <pre>{@code
     * Integer code = handle.exitCode();
     * if (code == null) System.out.println("still running");
     * }</pre>
     *
     * @return the exit code, or {@code null} while it runs
     */
    public @Nullable Integer exitCode() {
        return process.exitNow().map(ExecEvent.Exit::code).orElse(null);
    }

    /**
     * The exit (code, how it ended, how long it ran) if the process has ended; never waits. Use {@link #exit()} to
     * wait for it.
     *
     * <pre>{@code
     * handle.exitNow().filter(ExecEvent.Exit::timedOut).ifPresent(e -> log.warn("timed out"));
     * }</pre>
     *
     * @return the exit, or empty while it runs
     */
    public Optional<ExecEvent.Exit> exitNow() {
        return process.exitNow();
    }

    /**
     * Whether the process is still running; never waits. The same as {@link dev.sandbox.ProcessInfo#running()}.
     *
     * <pre>{@code
     * while (handle.running()) doOtherWork();
     * }</pre>
     *
     * @return {@code true} until it has ended
     */
    public boolean running() {
        return process.exitNow().isEmpty();
    }

    /**
     * Reads the output from byte offsets, one per stream (0 for the beginning), and follows it until the process
     * exits: the line events, then the {@link ExecEvent.Exit}. Each wait for an event is bounded by the client's
     * default timeout. Can be called any number of times, also after the process ended (while the session keeps it).
     *
     * <pre>{@code
     * try (ProcessOutput output = handle.output(0, 0)) {
     *     output.forEach(System.out::println);
     * }
     * }</pre>
     *
     * @param stdoutOffset where to start in stdout; not negative
     * @param stderrOffset where to start in stderr; not negative
     * @return the events; close it to stop reading (the process keeps running)
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ProcessOutput output(long stdoutOffset, long stderrOffset) {
        return output(stdoutOffset, stderrOffset, core.defaultTimeout);
    }

    /**
     * Reads and follows the output from byte offsets, each wait for an event bounded by {@code timeout}; use a long
     * timeout to follow a process that is quiet for long.
     *
     * <pre>{@code
     * try (ProcessOutput output = handle.output(lastStdout, lastStderr, Duration.ofHours(1))) {
     *     for (ExecEvent event : output) show(event);
     * }
     * }</pre>
     *
     * @param stdoutOffset where to start in stdout; not negative
     * @param stderrOffset where to start in stderr; not negative
     * @param timeout the longest wait for any one event; positive
     * @return the events; close it to stop reading (the process keeps running)
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ProcessOutput output(long stdoutOffset, long stderrOffset, Duration timeout) {
        return open(
                process.output(stdoutOffset, stderrOffset),
                timeout,
                "BackgroundProcessHandle.output",
                "output of process " + id());
    }

    /**
     * Reads what the ring buffers hold now from byte offsets, without following: the stream ends once it has caught
     * up, with an {@link ExecEvent.Exit} only if the process has ended. A last line still being written is not
     * included.
     *
     * <pre>{@code
     * try (ProcessOutput now = handle.snapshot(0, 0)) {
     *     now.forEach(System.out::println);
     * }
     * }</pre>
     *
     * @param stdoutOffset where to start in stdout; not negative
     * @param stderrOffset where to start in stderr; not negative
     * @return the events available now
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ProcessOutput snapshot(long stdoutOffset, long stderrOffset) {
        return open(
                process.snapshot(stdoutOffset, stderrOffset),
                core.defaultTimeout,
                "BackgroundProcessHandle.snapshot",
                "snapshot of process " + id());
    }

    private ProcessOutput open(
            org.reactivestreams.Publisher<ExecEvent> events, Duration timeout, String method, String operation) {
        Blocking.checkCanBlock(method);
        Blocking.requirePositive(timeout, "timeout");
        core.ensureOpen();
        Blocking.checkNotInterrupted(operation);
        return ProcessOutput.open(events, timeout, core.streamPrefetch, operation);
    }

    /**
     * Waits for the process to end, at most for the client's default timeout, and returns its exit (at once if it
     * has ended). Use {@link #exitNow()} to look without waiting.
     *
     * <pre>{@code
     * int code = handle.exit().code();
     * }</pre>
     *
     * @return the exit
     * @throws dev.sandbox.SandboxTimeoutException when it did not end in time; it keeps running
     * @throws SandboxInterruptedException when the thread was interrupted; the process keeps running
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ExecEvent.Exit exit() {
        return exit(core.defaultTimeout);
    }

    /**
     * Waits for the process to end, at most for {@code timeout}, and returns its exit (at once if it has ended).
     *
     * <pre>{@code
     * try {
     *     ExecEvent.Exit exit = handle.exit(Duration.ofSeconds(10));
     * } catch (SandboxTimeoutException stillRunning) {
     *     handle.kill();
     * }
     * }</pre>
     *
     * @param timeout how long to wait; positive
     * @return the exit
     * @throws dev.sandbox.SandboxTimeoutException when it did not end in time; it keeps running
     * @throws SandboxInterruptedException when the thread was interrupted; the process keeps running
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ExecEvent.Exit exit(Duration timeout) {
        Blocking.checkCanBlock("BackgroundProcessHandle.exit");
        Blocking.requirePositive(timeout, "timeout");
        core.ensureOpen();
        return Blocking.awaitValue(
                process.exit(), timeout, "BackgroundProcessHandle.exit", "wait for the end of process " + id());
    }

    /**
     * Waits for the end and collects the whole output from offset 0, keeping at most {@link
     * ExecOptions#maxOutputBytes()} per stream; waits at most for the client's default timeout. Collecting drains the
     * process: a second call fails with {@link dev.sandbox.SandboxStateException}, and so does one after the ring
     * buffer has dropped the start of the output. A timeout counts as the collection.
     *
     * <pre>{@code
     * ExecResult result = client.process().start(ExecOptions.shell("make -j4")).collect();
     * }</pre>
     *
     * @return the result once the process has ended
     * @throws dev.sandbox.SandboxStateException when the output was already collected or partly dropped
     * @throws dev.sandbox.SandboxTimeoutException when it did not end in time; it keeps running
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ExecResult collect() {
        return collect(core.defaultTimeout);
    }

    /**
     * Waits for the end, at most for {@code timeout}, and collects the whole output; see {@link #collect()}.
     *
     * <pre>{@code
     * ExecResult result = handle.collect(Duration.ofMinutes(30));
     * }</pre>
     *
     * @param timeout how long to wait; positive
     * @return the result once the process has ended
     * @throws dev.sandbox.SandboxStateException when the output was already collected or partly dropped
     * @throws dev.sandbox.SandboxTimeoutException when it did not end in time; it keeps running
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ExecResult collect(Duration timeout) {
        Blocking.checkCanBlock("BackgroundProcessHandle.collect");
        Blocking.requirePositive(timeout, "timeout");
        core.ensureOpen();
        return Blocking.awaitValue(
                process.collect(), timeout, "BackgroundProcessHandle.collect", "collection of process " + id());
    }

    /**
     * Kills the process and its process group with SIGKILL; does nothing if it has ended. Returns once the signal
     * was sent; use {@link #exit(Duration)} to wait for the exit.
     *
     * <pre>{@code
     * handle.kill();
     * handle.exit(Duration.ofSeconds(5)); // exit code 137
     * }</pre>
     *
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void kill() {
        Blocking.checkCanBlock("BackgroundProcessHandle.kill");
        core.ensureOpen();
        Blocking.await(process.kill(), core.defaultTimeout, "BackgroundProcessHandle.kill", "kill of process " + id());
    }

    /**
     * Sends a signal to the process and its process group; does nothing if it has ended.
     *
     * <pre>{@code
     * handle.signal(15); // SIGTERM: ask it to stop
     * }</pre>
     *
     * @param signal a signal number from 1 to 64
     * @throws dev.sandbox.InvalidArgumentException when the number is out of range
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void signal(int signal) {
        Blocking.checkCanBlock("BackgroundProcessHandle.signal");
        core.ensureOpen();
        Blocking.await(
                process.signal(signal),
                core.defaultTimeout,
                "BackgroundProcessHandle.signal",
                "signal " + signal + " to process " + id());
    }

    /**
     * Writes bytes to the process's standard input and returns once the process has them in its pipe, so a loop of
     * writes is paced by how fast the process reads. Each slice of up to 64 KiB must be taken within the client's
     * default timeout.
     *
     * <pre>{@code
     * handle.writeStdin("print(1 + 1)\n".getBytes(StandardCharsets.UTF_8));
     * }</pre>
     *
     * @param bytes the bytes; not kept after the call
     * @throws dev.sandbox.SandboxStateException when stdin was closed or came from {@link ExecOptions#withStdin}
     * @throws dev.sandbox.SandboxTimeoutException when the process did not read in time
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void writeStdin(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        Blocking.checkCanBlock("BackgroundProcessHandle.writeStdin");
        core.ensureOpen();
        Blocking.writeInSlices(
                bytes,
                process::writeStdin,
                core.defaultTimeout,
                "BackgroundProcessHandle.writeStdin",
                "write to the stdin of process " + id());
    }

    /**
     * Closes the process's standard input after the writes made so far, so it sees end-of-file.
     *
     * <pre>{@code
     * handle.writeStdin(data);
     * handle.closeStdin();
     * }</pre>
     *
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void closeStdin() {
        Blocking.checkCanBlock("BackgroundProcessHandle.closeStdin");
        core.ensureOpen();
        Blocking.await(
                process.closeStdin(),
                core.defaultTimeout,
                "BackgroundProcessHandle.closeStdin",
                "close of the stdin of process " + id());
    }

    @Override
    public String toString() {
        Integer code = exitCode();
        return "BackgroundProcessHandle{" + id() + ", argv=" + argv() + (code == null ? ", running" : ", exit " + code)
                + "}";
    }
}
