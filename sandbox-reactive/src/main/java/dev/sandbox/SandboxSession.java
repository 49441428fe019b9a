package dev.sandbox;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A handle to one sandbox: run commands in it, check on it, and end it. Every operation is lazy and starts when
 * subscribed; none blocks the calling thread.
 *
 * <p>{@link #close()} releases this handle and leaves the sandbox to its provider; {@link #destroy()} ends the
 * sandbox, killing every process and deleting its files, also when called on a handle already closed. After either,
 * every operation on this handle fails with {@link SessionClosedException}: its {@link
 * SessionClosedException#reason() reason} is {@link SessionEndReason#DESTROYED} once the sandbox was destroyed (through
 * any handle this provider gave out), {@link SessionEndReason#HANDLE_CLOSED} while only the handle was closed.
 *
 * <pre>{@code
 * try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
 *     provider.withSession(SessionOptions.defaults(), session ->
 *             session.exec(ExecOptions.shell("for i in 1 2 3; do echo $i; sleep 1; done")))
 *         .doOnNext(System.out::println)
 *         .blockLast(Duration.ofSeconds(10));
 * }
 * }</pre>
 */
public interface SandboxSession {

    /**
     * The session's id, unique within its provider.
     *
     * @return the id
     */
    String id();

    /**
     * The session's name, given at create with {@link SessionOptions#withName(String)}: unique among the provider's
     * sessions while it lives, and what {@link SandboxProvider#attachByName(String)} finds it by.
     *
     * @return the name, or empty for an unnamed session (and on a provider without names)
     */
    default Optional<String> name() {
        return Optional.empty();
    }

    /**
     * The session's labels: those it was created with and those {@link #addLabels added} since through this handle
     * (or known to its provider when the handle was made).
     *
     * @return an unmodifiable map
     */
    Map<String, String> labels();

    /**
     * Adds labels to the running session, replacing the values of keys it already has. Once this completes, {@link
     * #labels()}, {@link SandboxProvider#list(Map)} and {@link SandboxProvider#attach(String)} of this provider show
     * them, and so do other provider instances that reach the same sandboxes (at once on Docker; on Kubernetes as soon
     * as their watch sees the change). A warm pool uses this to label a session when it is claimed.
     *
     * <pre>{@code
     * session.addLabels(Map.of("tenant", "acme")).block();
     * provider.list(Map.of("tenant", "acme")); // finds it
     * }</pre>
     *
     * <p>Keys follow the same rules as at create ({@link SessionOptions#withLabel}), and the provider's own (Docker's
     * {@code dev.sandbox.}, Kubernetes's {@code dev.sandbox/}) are refused with {@link InvalidArgumentException}. The
     * default fails with {@link UnsupportedFeatureException}, for a provider that cannot change labels after create.
     *
     * @param labels the labels to add, not empty
     * @return completes when the labels are recorded with the provider
     */
    default Mono<Void> addLabels(Map<String, String> labels) {
        return Mono.error(new UnsupportedFeatureException(getClass().getSimpleName(), "adding labels"));
    }

    /**
     * Runs a command and streams its output lines, then its exit. Each subscription starts one process; the
     * process is read only as fast as the subscriber requests, so a slow subscriber makes the process wait in
     * {@code write} rather than filling memory. Cancelling the subscription kills the process and its children.
     * Output without a line terminator does not wait for one: once the command has been quiet for {@link
     * ExecOptions#partialLineDelay()} (a prompt waiting for input), it comes as a {@linkplain ExecEvent.Line#partial()
     * partial} line. With {@link ExecOptions#withByteOutput(boolean)} the output comes as {@link ExecEvent.Chunk}s of
     * raw bytes instead of lines.
     *
     * <p>A non-zero exit code is an {@link ExecEvent.Exit}, not an error. Errors are: {@link
     * InvalidArgumentException} for bad options, {@link ProcessLaunchException} when the program cannot start,
     * {@link SessionClosedException} after close.
     *
     * @param options what to run
     * @return the events: lines (or chunks) from stdout and stderr, then exactly one exit, last
     */
    Flux<ExecEvent> exec(ExecOptions options);

    /**
     * Runs a command to the end and collects both streams as text, keeping at most {@link
     * ExecOptions#maxOutputBytes()} bytes of each (the head); the rest is counted but not kept. The result is text
     * whatever {@link ExecOptions#byteOutput()} says: for binary output use {@link #exec} with byte output.
     *
     * @param options what to run
     * @return the result, once the command has exited
     */
    Mono<ExecResult> run(ExecOptions options);

    /**
     * Starts a command in the background and returns at once with a handle to it. Its output is kept in ring
     * buffers (1 MiB per stream, oldest dropped) to be read any time, from any offset; its stdin stays open for
     * writes. The process ends when it exits, is killed, hits its timeout, or when the session ends.
     *
     * @param options what to run
     * @return the running process
     */
    default Mono<BackgroundProcess> start(ExecOptions options) {
        return start(options, BackgroundOptions.defaults());
    }

    /**
     * Starts a command in the background with chosen ring sizes and overflow policy.
     *
     * @param options what to run
     * @param background how output is kept
     * @return the running process
     */
    Mono<BackgroundProcess> start(ExecOptions options, BackgroundOptions background);

    /**
     * Lists the session's background processes, running and ended.
     *
     * @return one summary per process, oldest first
     */
    Flux<ProcessInfo> processes();

    /**
     * Finds a background process by id, to read its output again or control it.
     *
     * @param processId the id from {@link BackgroundProcess#id()}
     * @return the process, or {@link ProcessNotFoundException}
     */
    Mono<BackgroundProcess> process(String processId);

    /**
     * Starts a command on a new pseudo-terminal (for interactive programs: shells, editors, REPLs).
     *
     * @param options the command and terminal size
     * @return the running terminal session, or {@link UnsupportedFeatureException} where the provider has no PTYs
     */
    Mono<PtySession> pty(PtyOptions options);

    /**
     * Lists the session's PTYs, running and recently ended, whoever started them. {@link #processes()} lists
     * background processes only; a command on a terminal is listed here, with the id {@link #attachPty(String)}
     * takes, and its pid inside the sandbox.
     *
     * <pre>{@code
     * session.ptys().filter(ProcessInfo::running)
     *     .flatMap(info -> session.attachPty(info.id()))
     *     .flatMap(pty -> pty.kill())
     *     .blockLast(timeout);
     * }</pre>
     *
     * <p>The default fails with {@link UnsupportedFeatureException}, for a provider without PTYs.
     *
     * @return one summary per PTY, oldest first
     */
    default Flux<ProcessInfo> ptys() {
        return Flux.error(new UnsupportedFeatureException(getClass().getSimpleName(), "listing PTYs"));
    }

    /**
     * Finds a PTY of this session by id, to attach to it again.
     *
     * @param ptyId the id from {@link PtySession#id()}
     * @return the PTY, or {@link ProcessNotFoundException}
     */
    Mono<PtySession> attachPty(String ptyId);

    /**
     * The session's files.
     *
     * @return the files API
     */
    SandboxFiles files();

    /**
     * The session's ports: forwards from the host to TCP servers inside the sandbox, which need no network in the
     * sandbox on the providers with an agent (Docker, Kubernetes).
     *
     * <pre>{@code
     * PortForward web = session.ports().forward(8080).block();
     * }</pre>
     *
     * <p>The default is {@link SandboxPorts#unsupported}, for a provider that cannot forward ports.
     *
     * @return the ports API
     */
    default SandboxPorts ports() {
        return SandboxPorts.unsupported(getClass().getSimpleName());
    }

    /**
     * The session's network: its egress policy ({@link SessionOptions#withNetwork}), changeable while it runs, and
     * the decisions of its egress proxy.
     *
     * <pre>{@code
     * session.network().update(NetworkPolicy.allowlist(EgressRule.domain("pypi.org").ports(443))).block();
     * }</pre>
     *
     * <p>The default is a network with no egress and no proxy ({@link SandboxNetwork#none}).
     *
     * @return the network API
     */
    default SandboxNetwork network() {
        return SandboxNetwork.none("session " + id());
    }

    /**
     * Streams the session's resource use: a first {@link SessionStats sample} at once, then one per interval, until
     * cancelled or the session ends (then the stream fails with {@link SessionClosedException}). Nothing is sampled
     * while nobody subscribes; a subscriber that does not keep up misses samples instead of queueing them. Sampling
     * is not activity: it does not restart the session's idle clock.
     *
     * <pre>{@code
     * session.stats(Duration.ofSeconds(1))
     *     .takeUntil(s -> s.memoryBytes() > 512L << 20)
     *     .blockLast(Duration.ofMinutes(1)); // the first sample above 512 MiB
     * }</pre>
     *
     * <p>What each provider counts: on Docker (runc and gVisor) the container's cgroup as the daemon's stats API
     * reports it (memory as {@code docker stats} shows it: usage less inactive page cache; disk writes and network
     * bytes where the runtime reports them), from the daemon's stats stream: the daemon reads once a second, so the
     * first sample comes within a second and a shorter interval gives a sample a second; on the local provider the processes that carry the session's marker,
     * summed from {@code /proc}; on the remote provider what the server's provider gives (see the README). The
     * default fails with {@link UnsupportedFeatureException}, for a provider that cannot measure its sessions
     * (Kubernetes, which assumes no metrics API).
     *
     * @param interval the time between samples, from {@link SessionStats#MIN_INTERVAL} (100 ms) to {@link
     *     SessionStats#MAX_INTERVAL}; otherwise the stream fails with {@link InvalidArgumentException} naming {@code
     *     interval}
     * @return the samples
     */
    default Flux<SessionStats> stats(Duration interval) {
        return Flux.error(new UnsupportedFeatureException(getClass().getSimpleName(), "resource stats"));
    }

    /**
     * Sets the session to end this long from now, replacing its current lifetime.
     *
     * @param fromNow a positive duration
     * @return completes when set
     */
    Mono<Void> setLifetime(Duration fromNow);

    /**
     * Sets (or replaces) the session's idle timeout, counted from its last activity.
     *
     * @param idleTimeout a positive duration
     * @return completes when set
     */
    Mono<Void> setIdleTimeout(Duration idleTimeout);

    /**
     * Pauses the session: every process in it is frozen where it is, with its memory kept, and the session's idle
     * clock stops (its lifetime does not: a paused session still ends at its deadline, removed from outside on Docker).
     * Output streams and background processes simply make no progress while paused; nothing is lost. Idempotent:
     * pausing a paused session completes at once. {@link #ping()} says {@code "paused"} in {@link
     * SessionStatus#status()} until {@link #resume()}.
     *
     * <p>A command, file operation, port connection or timer change asked of a paused session resumes it first when
     * the session was created with {@link SessionOptions#withAutoResume(boolean) auto-resume} (the default), and fails
     * with {@link SandboxStateException} naming the state otherwise.
     *
     * <pre>{@code
     * session.pause().block(timeout);   // frozen: no CPU, memory kept, idle timeout stopped
     * session.resume().block(timeout);  // runs on where it stopped
     * }</pre>
     *
     * <p>Docker (runc and gVisor) pauses with the cgroup freezer ({@code docker pause}); the local provider stops the
     * session's processes with {@code SIGSTOP}; a remote session pauses as its server's provider does. The default
     * fails with {@link UnsupportedFeatureException}, for a provider that cannot freeze a session (Kubernetes).
     *
     * @return completes once every process of the session is frozen
     */
    default Mono<Void> pause() {
        return Mono.error(new UnsupportedFeatureException(getClass().getSimpleName(), "pausing a session"));
    }

    /**
     * Resumes a {@link #pause() paused} session: its processes continue where they stopped and its idle clock starts
     * again from now. Idempotent: resuming a running session completes at once.
     *
     * <p>The default fails with {@link UnsupportedFeatureException}, for a provider that cannot pause.
     *
     * @return completes once the session's processes run again
     */
    default Mono<Void> resume() {
        return Mono.error(new UnsupportedFeatureException(getClass().getSimpleName(), "resuming a session"));
    }

    /**
     * Reports the session's health and activity.
     *
     * @return the current status
     */
    Mono<SessionStatus> ping();

    /**
     * Releases this handle; the sandbox itself stays with its provider (for the local provider, until the provider
     * is closed). Idempotent.
     *
     * @return completes when the handle is released
     */
    Mono<Void> close();

    /**
     * Ends the sandbox: kills every process it runs and deletes its workdir. A handle already {@link #close() closed}
     * still destroys its sandbox (by the session's id). What was running in it ends with a {@link
     * SessionClosedException} whose reason is {@link SessionEndReason#DESTROYED}: a command's {@link #exec} stream, a
     * background process's and a PTY's {@code exit()}. If the destroy fails the handle stays usable so the call can be
     * retried. Idempotent once it has succeeded.
     *
     * @return completes when the sandbox is gone
     */
    Mono<Void> destroy();
}
