package dev.sandbox.blocking;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.ProcessInfo;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Runs commands in the client's session: {@link #run} collects a command's output and exit, {@link #exec} hands its
 * events over one by one as they happen, and {@link #start} leaves it running in the background, to be read and
 * controlled through a {@link BackgroundProcessHandle} (found again later with {@link #process(String)} and {@link
 * #processes()}). Get it from {@link SandboxClient#process()}. Each method has the name of the {@link
 * dev.sandbox.SandboxSession} method it adapts, and means the same.
 *
 * <p>Every call waits at most for a timeout: the client's {@linkplain SandboxClient.Builder#defaultTimeout(Duration)
 * default}, or the one passed to the call. When it runs out the command is killed and {@link
 * dev.sandbox.SandboxTimeoutException} is thrown. That is a limit on how long <em>you</em> wait; a command's own
 * {@link ExecOptions#withTimeout(Duration)} is not an error, the command ends with exit code 124 instead.
 *
 * <p>A non-zero exit code is a result, not an exception. The exceptions are the SDK's, unchanged: {@link
 * dev.sandbox.InvalidArgumentException} for bad options, {@link dev.sandbox.ProcessLaunchException} when the program
 * cannot start, {@link dev.sandbox.SessionClosedException} after the client is closed; plus {@link
 * SandboxInterruptedException} when the waiting thread is interrupted, and {@link IllegalStateException} when called
 * on a Reactor non-blocking thread.
 *
 * <pre>{@code
 * ExecResult result = client.process().run(ExecOptions.of("python3", "-V"));
 * System.out.println(result.exitCode() + " " + result.stdout());
 * }</pre>
 */
public final class ProcessClient {
    private final ClientCore core;

    ProcessClient(ClientCore core) {
        this.core = core;
    }

    /**
     * Runs a command to its end and returns its collected output and exit, waiting at most for the client's default
     * timeout. Each stream keeps at most {@link ExecOptions#maxOutputBytes()} bytes (the head).
     *
     * <pre>{@code
     * ExecResult result = client.process().run(ExecOptions.shell("ls -l | wc -l"));
     * }</pre>
     *
     * @param options what to run
     * @return the result once the command has exited
     * @throws dev.sandbox.SandboxTimeoutException when the command did not finish in time; it has been killed
     * @throws SandboxInterruptedException when the thread was interrupted; the command has been killed
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ExecResult run(ExecOptions options) {
        return run(options, core.defaultTimeout);
    }

    /**
     * Runs a command to its end and returns its collected output and exit, waiting at most for {@code timeout}.
     *
     * <pre>{@code
     * ExecResult result = client.process().run(ExecOptions.of("make"), Duration.ofMinutes(20));
     * }</pre>
     *
     * @param options what to run
     * @param timeout how long to wait; positive
     * @return the result once the command has exited
     * @throws dev.sandbox.SandboxTimeoutException when the command did not finish in time; it has been killed
     * @throws SandboxInterruptedException when the thread was interrupted; the command has been killed
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ExecResult run(ExecOptions options, Duration timeout) {
        Blocking.checkCanBlock("ProcessClient.run");
        Objects.requireNonNull(options, "options");
        Blocking.requirePositive(timeout, "timeout");
        core.ensureOpen();
        return Blocking.awaitValue(
                core.session.run(options), timeout, "ProcessClient.run", "run " + Blocking.describe(options));
    }

    /**
     * Starts a command and returns its events for blocking iteration; each wait for the next event is bounded by the
     * client's default timeout. The command runs from now on: close the stream to kill it if you stop reading early.
     *
     * <pre>{@code
     * try (ExecStream events = client.process().exec(ExecOptions.shell("./build.sh"))) {
     *     events.forEach(System.out::println);
     * }
     * }</pre>
     *
     * @param options what to run
     * @return the command's events
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ExecStream exec(ExecOptions options) {
        return exec(options, core.defaultTimeout);
    }

    /**
     * Starts a command and returns its events for blocking iteration; each wait for the next event is bounded by
     * {@code timeout}. The total run time is not bounded by it: use {@link ExecOptions#withTimeout(Duration)} for
     * that.
     *
     * <pre>{@code
     * try (ExecStream events = client.process().exec(ExecOptions.of("tail", "-f", "app.log"), Duration.ofHours(1))) {
     *     for (ExecEvent event : events) {
     *         if (event instanceof ExecEvent.Stdout out && out.text().contains("ready")) break;
     *     }
     * }
     * }</pre>
     *
     * @param options what to run
     * @param timeout the longest wait for any one event; positive
     * @return the command's events
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ExecStream exec(ExecOptions options, Duration timeout) {
        Blocking.checkCanBlock("ProcessClient.exec");
        Objects.requireNonNull(options, "options");
        Blocking.requirePositive(timeout, "timeout");
        core.ensureOpen();
        String operation = "exec " + Blocking.describe(options);
        Blocking.checkNotInterrupted(operation);
        return ExecStream.start(core.session.exec(options), timeout, core.streamPrefetch, operation);
    }

    /**
     * Starts a command in the background and returns at once with a handle to it; the command runs until it exits,
     * is killed, reaches its {@link ExecOptions#withTimeout(Duration) timeout}, or the session ends. Its output is kept
     * in ring buffers of {@link BackgroundOptions#DEFAULT_RING_BYTES} per stream (the oldest bytes dropped when full)
     * and its standard input stays open for {@link BackgroundProcessHandle#writeStdin(byte[])}.
     *
     * <pre>{@code
     * BackgroundProcessHandle job = client.process().start(ExecOptions.shell("./train.sh"));
     * System.out.println("started " + job.id());
     * }</pre>
     *
     * @param options what to run
     * @return the running process
     * @throws dev.sandbox.ProcessLaunchException when the program cannot start
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public BackgroundProcessHandle start(ExecOptions options) {
        return start(options, BackgroundOptions.defaults());
    }

    /**
     * Starts a command in the background with chosen ring buffer sizes and overflow policy; see {@link
     * #start(ExecOptions)}. Waits at most for the client's default timeout for the process to be spawned.
     *
     * <pre>{@code
     * BackgroundProcessHandle job = client.process().start(
     *         ExecOptions.of("python3", "train.py"),
     *         BackgroundOptions.defaults().withRingBytes(8 << 20).withOverflow(BackgroundOptions.Overflow.THROTTLE));
     * }</pre>
     *
     * @param options what to run
     * @param background how its output is kept
     * @return the running process
     * @throws dev.sandbox.InvalidArgumentException for bad options
     * @throws dev.sandbox.ProcessLaunchException when the program cannot start
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public BackgroundProcessHandle start(ExecOptions options, BackgroundOptions background) {
        Blocking.checkCanBlock("ProcessClient.start");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(background, "background");
        core.ensureOpen();
        return new BackgroundProcessHandle(
                core,
                Blocking.awaitValue(
                        core.session.start(options, background),
                        core.defaultTimeout,
                        "ProcessClient.start",
                        "start of " + Blocking.describe(options)));
    }

    /**
     * Lists the session's background processes, running and ended, oldest first.
     *
     * <pre>{@code
     * for (ProcessInfo p : client.process().processes()) {
     *     System.out.println(p.id() + " " + (p.running() ? "running" : "exit " + p.exitCode()) + " " + p.argv());
     * }
     * }</pre>
     *
     * @return one summary per process
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public List<ProcessInfo> processes() {
        Blocking.checkCanBlock("ProcessClient.processes");
        core.ensureOpen();
        List<ProcessInfo> all = Blocking.awaitValue(
                core.session.processes().collectList(),
                core.defaultTimeout,
                "ProcessClient.processes",
                "listing of the background processes of session " + core.session.id());
        return List.copyOf(all);
    }

    /**
     * Finds a background process by id, to read its output again or control it, for example from another client
     * attached to the same session.
     *
     * <pre>{@code
     * BackgroundProcessHandle job = client.process().process("p-1");
     * job.kill();
     * }</pre>
     *
     * @param processId the id from {@link BackgroundProcessHandle#id()} or {@link ProcessInfo#id()}
     * @return the handle
     * @throws dev.sandbox.ProcessNotFoundException when the session has no such process
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public BackgroundProcessHandle process(String processId) {
        Blocking.checkCanBlock("ProcessClient.process");
        Objects.requireNonNull(processId, "processId");
        core.ensureOpen();
        return new BackgroundProcessHandle(
                core,
                Blocking.awaitValue(
                        core.session.process(processId),
                        core.defaultTimeout,
                        "ProcessClient.process",
                        "lookup of process " + processId));
    }
}
