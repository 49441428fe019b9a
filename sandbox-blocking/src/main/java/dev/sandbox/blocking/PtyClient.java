package dev.sandbox.blocking;

import dev.sandbox.ProcessInfo;
import dev.sandbox.PtyOptions;
import java.util.List;
import java.util.Objects;

/**
 * Runs commands on pseudo-terminals in the client's session, for interactive programs (shells, editors, REPLs): {@link
 * #open} starts one, {@link #attach} finds one again by id, {@link #list} lists them, and the returned {@link PtySessionHandle} types into it,
 * reads its screen, resizes and signals it. Get it from {@link SandboxClient#pty()}.
 *
 * <p>These are {@link dev.sandbox.SandboxSession#pty(PtyOptions)}, {@link
 * dev.sandbox.SandboxSession#attachPty(String)} and {@link dev.sandbox.SandboxSession#ptys()} with the sub-client's
 * name standing for the "pty" in theirs. Each call
 * waits at most for the client's default timeout and follows the facade's rules: the SDK's exceptions unchanged,
 * {@link SandboxInterruptedException} when the waiting thread is interrupted, {@link IllegalStateException} on a
 * Reactor non-blocking thread, {@link dev.sandbox.SessionClosedException} after the client is closed. A provider
 * without terminals answers {@link dev.sandbox.UnsupportedFeatureException}.
 *
 * <pre>{@code
 * PtySessionHandle shell = client.pty().open(PtyOptions.shell().withSize(120, 40));
 * shell.write("ls -l; exit\n");
 * try (PtyOutput screen = shell.output()) {
 *     screen.transferTo(System.out); // until the shell exits
 * }
 * }</pre>
 */
public final class PtyClient {
    private final ClientCore core;

    PtyClient(ClientCore core) {
        this.core = core;
    }

    /**
     * Starts a command on a new pseudo-terminal and returns at once with a handle to it; the command runs until it
     * exits, is killed, or the session ends. It does not end when the handle or an output stream is dropped or closed.
     *
     * <pre>{@code
     * PtySessionHandle python = client.pty().open(PtyOptions.of("python3", "-q").withSize(100, 30));
     * }</pre>
     *
     * @param options the command, the terminal size, its environment and working directory
     * @return the running terminal
     * @throws dev.sandbox.InvalidArgumentException for bad options, such as a size out of range
     * @throws dev.sandbox.ProcessLaunchException when the program cannot start
     * @throws dev.sandbox.UnsupportedFeatureException when the provider has no terminals
     * @throws dev.sandbox.SandboxTimeoutException when it was not started in time
     * @throws SandboxInterruptedException when the thread was interrupted
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public PtySessionHandle open(PtyOptions options) {
        Blocking.checkCanBlock("PtyClient.open");
        Objects.requireNonNull(options, "options");
        core.ensureOpen();
        return new PtySessionHandle(
                core,
                Blocking.awaitValue(
                        core.session.pty(options),
                        core.defaultTimeout,
                        "PtyClient.open",
                        "start of " + options.argv() + " on a terminal"));
    }

    /**
     * Finds a terminal of this session by id, for example one another client opened, to read its screen (what it
     * still holds of the recent output first) and type into it.
     *
     * <pre>{@code
     * try (SandboxClient other = SandboxClient.attach(provider, sessionId)) {
     *     PtySessionHandle shell = other.pty().attach(ptyId);
     *     shell.write("echo hello from the second client\n");
     * }
     * }</pre>
     *
     * @param ptyId the id from {@link PtySessionHandle#id()}
     * @return the handle
     * @throws dev.sandbox.ProcessNotFoundException when the session has no such terminal
     * @throws SandboxInterruptedException when the thread was interrupted
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public PtySessionHandle attach(String ptyId) {
        Blocking.checkCanBlock("PtyClient.attach");
        Objects.requireNonNull(ptyId, "ptyId");
        core.ensureOpen();
        return new PtySessionHandle(
                core,
                Blocking.awaitValue(
                        core.session.attachPty(ptyId),
                        core.defaultTimeout,
                        "PtyClient.attach",
                        "attach to terminal " + ptyId));
    }

    /**
     * Lists the session's terminals, running and recently ended, whoever opened them: the id {@link #attach} takes,
     * the command, its pid inside the sandbox and its exit code once it ended. Background processes are listed by
     * {@link ProcessClient#processes()}, not here.
     *
     * <pre>{@code
     * for (ProcessInfo t : client.pty().list()) {
     *     System.out.println(t.id() + " pid " + t.pid() + " " + (t.running() ? "running" : "exit " + t.exitCode()));
     * }
     * }</pre>
     *
     * @return one summary per terminal, oldest first
     * @throws dev.sandbox.UnsupportedFeatureException when the provider has no terminals
     * @throws SandboxInterruptedException when the thread was interrupted
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public List<ProcessInfo> list() {
        Blocking.checkCanBlock("PtyClient.list");
        core.ensureOpen();
        List<ProcessInfo> all = Blocking.awaitValue(
                core.session.ptys().collectList(),
                core.defaultTimeout,
                "PtyClient.list",
                "listing of the terminals of session " + core.session.id());
        return List.copyOf(all);
    }
}
