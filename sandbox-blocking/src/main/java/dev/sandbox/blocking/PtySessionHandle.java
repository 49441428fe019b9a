package dev.sandbox.blocking;

import dev.sandbox.ExecEvent;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.PtySession;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.OptionalLong;
import org.reactivestreams.Publisher;

/**
 * A blocking handle to a command running on a pseudo-terminal in the client's session; from {@link
 * PtyClient#open(dev.sandbox.PtyOptions)} or, for one opened earlier or by another client, {@link
 * PtyClient#attach(String)}. The command runs on its own: dropping the handle or closing an output stream does not
 * stop it (killing it, its exit or the session's end does). Each method has the name of the {@link PtySession} method
 * it adapts and means the same: {@link #output()} reads the screen, {@link #exit()} waits for the exit.
 *
 * <p>Waiting calls are bounded by the client's default timeout unless given one, and follow the facade's rules:
 * {@link SandboxInterruptedException} on interrupt, {@link IllegalStateException} on a Reactor non-blocking thread,
 * the SDK's exceptions unchanged, {@link dev.sandbox.SessionClosedException} after the client is closed. A timeout
 * or interrupt while waiting for the exit leaves the command running.
 *
 * <pre>{@code
 * PtySessionHandle shell = client.pty().open(PtyOptions.shell());
 * try (PtyOutput screen = shell.output()) {
 *     shell.write("stty size\n");
 *     // ... read the screen, then
 *     shell.resize(132, 43);
 *     shell.write("exit 3\n");
 *     screen.transferTo(System.out); // to the end: the shell has exited
 * }
 * int code = shell.exit(Duration.ofSeconds(5)).code(); // 3
 * }</pre>
 */
public final class PtySessionHandle {
    private final ClientCore core;
    private final PtySession pty;

    PtySessionHandle(ClientCore core, PtySession pty) {
        this.core = core;
        this.pty = pty;
    }

    /**
     * The terminal's id within its session, for {@link PtyClient#attach(String)}.
     *
     * <pre>{@code
     * String id = shell.id(); // for example "pty-1"
     * }</pre>
     *
     * @return the id
     */
    public String id() {
        return pty.id();
    }

    /**
     * The pid of the command inside the sandbox, where the provider knows it.
     *
     * <pre>{@code
     * shell.pid().ifPresent(pid -> log.info("shell pid {}", pid));
     * }</pre>
     *
     * @return the pid, or empty
     */
    public OptionalLong pid() {
        return pty.pid();
    }

    /**
     * Reads the terminal's output as raw bytes (escape sequences included): first what it still holds of the recent
     * output (up to {@link dev.sandbox.PtyOptions#replayBytes()}), then live output, until the command has ended.
     * Each read waits at most for the client's default timeout. Can be called any number of times, by any number of
     * readers at once; each counts as attached while open ({@link dev.sandbox.SessionStatus#ptysAttached()}).
     *
     * <pre>{@code
     * try (PtyOutput screen = shell.output()) {
     *     screen.transferTo(System.out);
     * }
     * }</pre>
     *
     * @return the output; close it to stop reading (the command keeps running)
     * @throws dev.sandbox.SessionClosedException after the client is closed
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public PtyOutput output() {
        return output(core.defaultTimeout);
    }

    /**
     * Reads the terminal's output like {@link #output()}, each read waiting at most for {@code timeout}; use a long
     * timeout to follow a terminal that is quiet for long, such as a shell waiting for a key.
     *
     * <pre>{@code
     * try (PtyOutput screen = shell.output(Duration.ofHours(8))) {
     *     screen.transferTo(System.out);
     * }
     * }</pre>
     *
     * @param timeout the longest wait for any one read; positive
     * @return the output; close it to stop reading (the command keeps running)
     * @throws dev.sandbox.SessionClosedException after the client is closed
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public PtyOutput output(Duration timeout) {
        return open(pty.output(), timeout, "output of terminal " + id());
    }

    /**
     * Reads the terminal's output from a byte offset (counted from the terminal's first byte), for a reader resuming
     * where it stopped; each read waits at most for the client's default timeout. An offset the terminal no longer
     * holds is an {@link dev.sandbox.OffsetUnavailableException}, thrown by the first read.
     *
     * <pre>{@code
     * long seen = 0;
     * try (PtyOutput screen = shell.output(seen)) {
     *     byte[] buffer = new byte[8192];
     *     for (int n; (n = screen.read(buffer)) > 0; seen += n) show(buffer, n);
     * }
     * }</pre>
     *
     * @param offset the first byte wanted; not negative
     * @return the output from there
     * @throws dev.sandbox.InvalidArgumentException when the offset is negative
     * @throws dev.sandbox.SessionClosedException after the client is closed
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public PtyOutput output(long offset) {
        return output(offset, core.defaultTimeout);
    }

    /**
     * Reads the terminal's output from a byte offset, each read waiting at most for {@code timeout}; see {@link
     * #output(long)}.
     *
     * <pre>{@code
     * try (PtyOutput screen = shell.output(resumeAt, Duration.ofMinutes(30))) {
     *     screen.transferTo(System.out);
     * }
     * }</pre>
     *
     * @param offset the first byte wanted; not negative
     * @param timeout the longest wait for any one read; positive
     * @return the output from there
     * @throws dev.sandbox.InvalidArgumentException when the offset is negative
     * @throws dev.sandbox.SessionClosedException after the client is closed
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public PtyOutput output(long offset, Duration timeout) {
        if (offset < 0) {
            throw new InvalidArgumentException("offset", "offset must not be negative, got " + offset);
        }
        return open(pty.output(offset), timeout, "output of terminal " + id() + " from byte " + offset);
    }

    private PtyOutput open(Publisher<ByteBuffer> output, Duration timeout, String what) {
        Blocking.checkCanBlock("PtySessionHandle.output");
        Blocking.requirePositive(timeout, "timeout");
        core.ensureOpen();
        Blocking.checkNotInterrupted(what);
        return PtyOutput.open(output, timeout, what);
    }

    /**
     * Types bytes into the terminal, as a keyboard would send them (a carriage return or newline ends a line, {@code
     * 0x03} is Ctrl-C), and returns once the terminal has them. Each slice of up to 64 KiB must be taken within the
     * client's default timeout.
     *
     * <pre>{@code
     * shell.write(new byte[] {0x03}); // Ctrl-C
     * }</pre>
     *
     * @param input the bytes; not kept after the call
     * @throws dev.sandbox.SandboxTimeoutException when the terminal did not take them in time
     * @throws dev.sandbox.SandboxStateException when the command has ended
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void write(byte[] input) {
        Objects.requireNonNull(input, "input");
        Blocking.checkCanBlock("PtySessionHandle.write");
        core.ensureOpen();
        Blocking.writeInSlices(
                input, pty::write, core.defaultTimeout, "PtySessionHandle.write", "write to terminal " + id());
    }

    /**
     * Types text into the terminal, encoded as UTF-8 (the terminal's encoding); see {@link #write(byte[])}.
     *
     * <pre>{@code
     * shell.write("make test\n");
     * }</pre>
     *
     * @param text the text, with {@code \n} where Enter is pressed
     * @throws dev.sandbox.SandboxTimeoutException when the terminal did not take it in time
     * @throws dev.sandbox.SandboxStateException when the command has ended
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void write(String text) {
        Objects.requireNonNull(text, "text");
        write(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Changes the terminal's size; the command gets {@code SIGWINCH} and sees the new size.
     *
     * <pre>{@code
     * shell.resize(132, 43);
     * }</pre>
     *
     * @param cols columns, 1 to 1000
     * @param rows rows, 1 to 1000
     * @throws dev.sandbox.InvalidArgumentException when a size is out of range
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void resize(int cols, int rows) {
        Blocking.checkCanBlock("PtySessionHandle.resize");
        core.ensureOpen();
        Blocking.await(
                pty.resize(cols, rows),
                core.defaultTimeout,
                "PtySessionHandle.resize",
                "resize of terminal " + id() + " to " + cols + "x" + rows);
    }

    /**
     * Sends a signal to the command's process group; does nothing if it has ended.
     *
     * <pre>{@code
     * shell.signal(2); // SIGINT, as Ctrl-C would
     * }</pre>
     *
     * @param signal a signal number from 1 to 64
     * @throws dev.sandbox.InvalidArgumentException when the number is out of range
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void signal(int signal) {
        Blocking.checkCanBlock("PtySessionHandle.signal");
        core.ensureOpen();
        Blocking.await(
                pty.signal(signal),
                core.defaultTimeout,
                "PtySessionHandle.signal",
                "signal " + signal + " to terminal " + id());
    }

    /**
     * Kills the command and its process group with SIGKILL; does nothing if it has ended. Returns once the signal was
     * sent; use {@link #exit(Duration)} to wait for the exit.
     *
     * <pre>{@code
     * shell.kill();
     * shell.exit(Duration.ofSeconds(5)); // exit code 137
     * }</pre>
     *
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void kill() {
        Blocking.checkCanBlock("PtySessionHandle.kill");
        core.ensureOpen();
        Blocking.await(pty.kill(), core.defaultTimeout, "PtySessionHandle.kill", "kill of terminal " + id());
    }

    /**
     * Waits for the command to end, at most for the client's default timeout, and returns its exit (at once if it has
     * ended).
     *
     * <pre>{@code
     * shell.write("exit\n");
     * int code = shell.exit().code();
     * }</pre>
     *
     * @return the exit
     * @throws dev.sandbox.SandboxTimeoutException when it did not end in time; it keeps running
     * @throws SandboxInterruptedException when the thread was interrupted; the command keeps running
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ExecEvent.Exit exit() {
        return exit(core.defaultTimeout);
    }

    /**
     * Waits for the command to end, at most for {@code timeout}, and returns its exit (at once if it has ended).
     *
     * <pre>{@code
     * try {
     *     ExecEvent.Exit exit = shell.exit(Duration.ofSeconds(10));
     * } catch (SandboxTimeoutException stillRunning) {
     *     shell.kill();
     * }
     * }</pre>
     *
     * @param timeout how long to wait; positive
     * @return the exit
     * @throws dev.sandbox.SandboxTimeoutException when it did not end in time; it keeps running
     * @throws SandboxInterruptedException when the thread was interrupted; the command keeps running
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public ExecEvent.Exit exit(Duration timeout) {
        Blocking.checkCanBlock("PtySessionHandle.exit");
        Blocking.requirePositive(timeout, "timeout");
        core.ensureOpen();
        return Blocking.awaitValue(
                pty.exit(), timeout, "PtySessionHandle.exit", "wait for the end of terminal " + id());
    }

    @Override
    public String toString() {
        return "PtySessionHandle{" + id() + "}";
    }
}
