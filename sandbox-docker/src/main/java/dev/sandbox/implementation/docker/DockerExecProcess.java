package dev.sandbox.implementation.docker;

import dev.sandbox.BackendException;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.implementation.process.RawEvent;
import dev.sandbox.implementation.process.SpawnedProcess;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * One command in a container, seen as a {@link SpawnedProcess}: a created exec that starts when its events are
 * subscribed, streams its output chunks, and ends with the exit code from the exec's inspect.
 *
 * <p>Exit codes: Docker reports 128 + n for a process killed by signal n and cannot tell it from a process that
 * exited with that code, so codes 129 to 192 are reported as signals (as a shell would). A SIGKILL the SDK did not
 * send is checked against the container's OOM kill counter when the container has a memory limit, and against the
 * container's state: if the container stopped, the command fails with {@link
 * dev.sandbox.SessionTerminatedException}. So does a command whose container the daemon reports ended (its {@code
 * die} or {@code destroy} event), at once: the stream of a dead gVisor sandbox may stay open, and an exec of one may
 * report exit code 128, which is checked against the container's state.
 *
 * <p>A kill runs the marker-based kill helper once the daemon reports the exec started. If the output stream is still
 * open {@value #KILL_GRACE_SECONDS} s later (a process that shed the marker and left the group holds it), the helper
 * runs once more, and after as long again the stream is cut and the command reported killed.
 */
final class DockerExecProcess implements SpawnedProcess {
    private static final Logger LOG = LoggerFactory.getLogger(DockerExecProcess.class);
    private static final int KILL_GRACE_SECONDS = 5;
    private static final int SIGKILL = 9;

    private final ContainerExecutor executor;
    private final String execId;
    private final String marker;
    private final Publisher<ByteBuffer> stdin;
    /** The terminal's initial {@code {cols, rows}}, or {@code null} without a terminal. */
    private final int[] terminal;

    private final Sinks.One<Boolean> forceEnd = Sinks.one();

    private boolean subscribed; // guarded by this
    private boolean killRequested; // guarded by this
    private volatile boolean exited;
    private volatile boolean forced;
    private volatile boolean cancelled;
    private volatile boolean outputSeen;

    DockerExecProcess(
            ContainerExecutor executor, String execId, String marker, Publisher<ByteBuffer> stdin, int[] terminal) {
        this.executor = executor;
        this.execId = execId;
        this.marker = marker;
        this.stdin = stdin;
        this.terminal = terminal;
    }

    /** Unknown: the daemon reports only the host pid, and the SDK kills by marker instead. */
    @Override
    public long pid() {
        return -1;
    }

    @Override
    public Flux<RawEvent> events() {
        return Flux.defer(() -> {
            synchronized (this) {
                if (subscribed) {
                    return Flux.error(
                            new IllegalStateException("the events of exec " + execId + " were subscribed twice"));
                }
                subscribed = true;
                if (killRequested) {
                    // killed before it started: it never will
                    exited = true;
                    return Flux.just(new RawEvent.Exited(SIGKILL, true));
                }
            }
            Sinks.Empty<Void> streaming = Sinks.empty();
            boolean tty = terminal != null;
            ExecStreamDecoder decoder = new ExecStreamDecoder(executor::streamError, streaming::tryEmitEmpty, tty);
            Publisher<ByteBuffer> input = stdin;
            if (tty && stdin != null) {
                // the terminal gets its size (which Docker sets only on a running exec) before the first keystroke
                input = streaming
                        .asMono()
                        .then(executor.resize(execId, terminal[0], terminal[1]).onErrorResume(e -> {
                            LOG.debug("could not size the terminal of exec {}: {}", execId, e.toString());
                            return Mono.empty();
                        }))
                        .thenMany(stdin);
            }
            Flux<RawEvent> body = executor.data()
                    .exec(execId, input, decoder, streaming, tty)
                    .doOnNext(e -> outputSeen = true)
                    .takeUntilOther(forceEnd.asMono())
                    .concatWith(Flux.defer(() -> ending(decoder)))
                    // a broken stream is most often a container that went away: say so when it is
                    .onErrorResume(
                            e -> e instanceof BackendException && !(e instanceof ProcessLaunchException),
                            e -> executor.checkRunning().then(Mono.error(e)));
            // the container's end (a Docker event) ends the stream: a dead gVisor sandbox's stream may never end
            return executor.untilTerminated(body, e -> e instanceof RawEvent.Exited)
                    .doOnCancel(() -> cancelled = true);
        });
    }

    private Flux<RawEvent> ending(ExecStreamDecoder decoder) {
        if (forced) {
            exited = true;
            return Flux.just(new RawEvent.Exited(SIGKILL, true));
        }
        return executor.exitCode(execId).flatMapMany(state -> {
            exited = true;
            long code = state.exitCode();
            byte[] launchError = decoder.heldLaunchError();
            // the daemon's own error, not output: the process never started (no pid) and the exit code is 126
            if (launchError != null && code == 126 && state.pid() == 0) {
                String message = new String(launchError, StandardCharsets.UTF_8).strip();
                // a container on its way out cannot start anything either: that is the better answer
                return executor.checkRunning()
                        .then(Mono.error(new ProcessLaunchException("cannot start the command: " + message, null)));
            }
            Flux<RawEvent> held =
                    launchError == null ? Flux.empty() : Flux.just(new RawEvent.Chunk(RawEvent.STDOUT, launchError));
            return held.concatWith(exit(code));
        });
    }

    private Mono<RawEvent> exit(long code) {
        if (code < 0 || code > 255) {
            return Mono.just(new RawEvent.Exited((int) (code & 0xFF), false));
        }
        if (code == 128) {
            // what the daemon reports for an exec whose gVisor sandbox died under it (a shell may exit 128 too)
            return executor.checkRunning().thenReturn(new RawEvent.Exited(128, false));
        }
        if (code < 128 || code > 128 + 64) {
            return Mono.just(new RawEvent.Exited((int) code, false));
        }
        int signal = (int) code - 128;
        boolean ours;
        synchronized (this) {
            ours = killRequested;
        }
        if (ours || signal != SIGKILL) {
            return Mono.just(new RawEvent.Exited(signal, true));
        }
        // a SIGKILL nobody here sent: the container stopping, or the OOM killer
        return executor.explainKill().map(oom -> new RawEvent.Exited(signal, true, oom));
    }

    private boolean stillStreaming() {
        return !exited && !cancelled;
    }

    @Override
    public void kill() {
        synchronized (this) {
            if (killRequested) {
                return;
            }
            killRequested = true;
            if (!subscribed || exited) {
                return;
            }
            executor.kill(execId, marker, outputSeen)
                    .then(Mono.delay(Duration.ofSeconds(KILL_GRACE_SECONDS)))
                    .filter(x -> stillStreaming())
                    .flatMap(x -> executor.kill(execId, marker, true))
                    .then(Mono.delay(Duration.ofSeconds(KILL_GRACE_SECONDS)))
                    .filter(x -> stillStreaming())
                    .subscribe(
                            x -> {
                                LOG.debug("exec {} still streams after two kills; cutting its stream", execId);
                                forced = true;
                                forceEnd.tryEmitValue(Boolean.TRUE);
                            },
                            e -> LOG.debug("could not kill exec {}: {}", execId, e.toString()));
        }
    }

    @Override
    public void signal(int signal) {
        if (signal == SIGKILL) {
            kill();
            return;
        }
        synchronized (this) {
            if (!subscribed || exited || killRequested) {
                return;
            }
        }
        executor.signal(execId, marker, signal, outputSeen)
                .subscribe(x -> {}, e -> LOG.debug("could not signal exec {}: {}", execId, e.toString()));
    }

    /** Blocks for one call to the daemon: callers run on a thread that may block. */
    @Override
    public void resize(int cols, int rows) {
        if (terminal == null) {
            SpawnedProcess.super.resize(cols, rows);
            return;
        }
        executor.resize(execId, cols, rows).block(Duration.ofSeconds(30));
    }
}
