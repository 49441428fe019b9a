package dev.sandbox.implementation.agentsession;

import dev.sandbox.BackendException;
import dev.sandbox.ExecOptions;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.SessionTerminatedException;
import dev.sandbox.implementation.agent.AgentConnection;
import dev.sandbox.implementation.agent.AgentErrnoException;
import dev.sandbox.implementation.agent.AgentProcess;
import dev.sandbox.implementation.agent.AgentSpawn;
import dev.sandbox.implementation.agent.AgentStarted;
import dev.sandbox.implementation.process.RawEvent;
import dev.sandbox.implementation.process.SpawnedProcess;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * The way into one session's sandbox (its container or pod): a connection to its agent ({@code sandbox-agent}, the
 * sandbox's main process), made on first use and made again after it broke, plus what the provider's control plane
 * says about the sandbox (its end, its working directory), asked through an {@link AgentHost}.
 *
 * <p>Everything the agent sends is untrusted (code in the sandbox runs as root beside it); the connection bounds it
 * ({@link AgentConnection}). A connection that ends while the sandbox still runs fails what ran on it with a
 * retryable {@link BackendException}; when the sandbox is gone they fail with {@link SessionTerminatedException}
 * naming why, found with one question to the control plane.
 */
public final class SessionAgent {
    /** How long making a connection may take: one relay started by the control plane and the agent's {@code HELLO}. */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(30);

    /** How often a lost connection's sandbox is asked about while its end may not be recorded yet. */
    private static final Duration SETTLE_STEP = Duration.ofMillis(100);

    /** How many answers a lost connection waits for at most (about 1.5 s in all). */
    private static final int SETTLE_STEPS = 15;

    private final AgentHost host;
    private final String sessionId;
    private final Mono<Facts> facts;
    private final Object lock = new Object();
    private Mono<AgentConnection> connecting; // guarded by lock
    /** What a new use of the connection waits for first: a paused session's resume. */
    private volatile Supplier<Mono<Void>> gate;

    /** Why the sandbox ended, once its control plane said so; {@code null} while it runs. */
    private volatile String terminatedCause;
    /** Emits once the sandbox ended: every stream of it stops waiting then. */
    private final Sinks.One<Boolean> terminatedSignal = Sinks.one();
    /** Why the session ended, once it did by this SDK's hand; {@code null} while it runs. */
    private volatile RuntimeException endedError;
    /** Why the session is ending by this SDK's hand while its sandbox is removed; {@code null} otherwise. */
    private volatile RuntimeException endingError;

    /**
     * A session agent; it connects on first use.
     *
     * @param host the pipes to the sandbox's agent and what its control plane says about it
     * @param sessionId the session, named in errors
     */
    public SessionAgent(AgentHost host, String sessionId) {
        this.host = host;
        this.sessionId = sessionId;
        this.facts = Mono.fromCallable(this::inspectFacts)
                .subscribeOn(Schedulers.boundedElastic())
                .cache(f -> Duration.ofDays(3650), e -> Duration.ZERO, () -> Duration.ZERO);
    }

    /**
     * What file operations need to know about the sandbox, fixed at its creation.
     *
     * @param workdir the working directory commands start in, {@code /} when the sandbox sets none
     */
    record Facts(String workdir) {}

    Mono<Facts> facts() {
        return facts;
    }

    private Facts inspectFacts() {
        String workdir = host.workdir();
        return new Facts(workdir == null || workdir.isEmpty() ? "/" : workdir);
    }

    /**
     * The connection to the agent: the open one, or a new one (one relay through the host's transport).
     *
     * @return the connection
     */
    public Mono<AgentConnection> connection() {
        return Mono.defer(() -> {
            Supplier<Mono<Void>> g = gate;
            Mono<Void> first = g == null ? null : g.get();
            return first == null ? ungated() : first.then(ungated());
        });
    }

    /**
     * Sets what every new use of the connection waits for first (a paused session's resume), or fails with; the
     * supplier gives {@code null} when nothing is to be waited for.
     *
     * @param gate the gate
     */
    public void gate(Supplier<Mono<Void>> gate) {
        this.gate = gate;
    }

    /**
     * The connection to the agent without the {@link #gate}: for pausing and resuming the session itself.
     *
     * @return the connection
     */
    public Mono<AgentConnection> ungated() {
        return Mono.defer(() -> {
            String known = terminatedCause;
            if (known != null) {
                return Mono.error(new SessionTerminatedException(sessionId, known));
            }
            Mono<AgentConnection> m;
            synchronized (lock) {
                if (connecting == null) {
                    AgentConnection.Options options = AgentConnection.Options.defaults()
                            .withSessionId(sessionId)
                            .withLostError(cause -> new AgentLostException(sessionId, cause));
                    java.util.concurrent.atomic.AtomicReference<Mono<AgentConnection>> self =
                            new java.util.concurrent.atomic.AtomicReference<>();
                    Mono<AgentConnection> made = AgentConnection.open(host.transport(), options)
                            .timeout(CONNECT_TIMEOUT)
                            .doOnNext(
                                    c -> c.onClose().subscribe(null, e -> forget(self.get()), () -> forget(self.get())))
                            .doOnError(e -> forget(self.get()))
                            .onErrorResume(e -> !(e instanceof SessionTerminatedException), this::explain)
                            .cache();
                    self.set(made);
                    connecting = made;
                }
                m = connecting;
            }
            return m.flatMap(c -> c.isClosed()
                    ? Mono.defer(() -> {
                        forgetClosed(c);
                        return ungated();
                    })
                    : Mono.just(c));
        });
    }

    private void forget(Mono<AgentConnection> which) {
        synchronized (lock) {
            if (connecting == which) {
                connecting = null;
            }
        }
    }

    private void forgetClosed(AgentConnection c) {
        synchronized (lock) {
            Mono<AgentConnection> m = connecting;
            if (m != null) {
                AgentConnection cached = m.toFuture().getNow(null);
                if (cached == c) {
                    connecting = null;
                }
            }
        }
    }

    /**
     * The session ended (destroyed, expired, idle): what still runs on the connection fails with {@code why} rather
     * than a lost connection, and the connection is closed.
     *
     * @param why the error of the session's end
     */
    public void ended(RuntimeException why) {
        if (endedError == null) {
            endedError = why;
        }
        disconnect();
    }

    /**
     * A destroy of the session is under way (or, with {@code null}, failed): what the sandbox's removal cuts fails
     * with {@code why} rather than as a sandbox that ended on its own.
     *
     * @param why the error of the session's end, or {@code null}
     */
    public void ending(RuntimeException why) {
        endingError = why;
    }

    /** The error of the session's end by this SDK's hand, ended or under way; {@code null} otherwise. */
    private RuntimeException sdkEnd() {
        RuntimeException ended = endedError;
        return ended != null ? ended : endingError;
    }

    /** Closes the connection, if one is open; what ran on it fails. */
    public void disconnect() {
        Mono<AgentConnection> m;
        synchronized (lock) {
            m = connecting;
            connecting = null;
        }
        if (m != null) {
            AgentConnection c = m.toFuture().getNow(null);
            if (c != null) {
                c.close();
            }
        }
    }

    /**
     * A process in the sandbox, started when its events are subscribed.
     *
     * @param options the command (validated)
     * @param secrets variables added to its environment
     * @param cols terminal columns, 0 without a terminal
     * @param rows terminal rows, 0 without a terminal
     * @return the process
     */
    SpawnedProcess spawn(ExecOptions options, Map<String, String> secrets, int cols, int rows) {
        Map<String, String> env = new LinkedHashMap<>(secrets);
        env.putAll(options.env());
        AgentSpawn spec = new AgentSpawn(
                options.argv(), env, options.cwd().orElse(""), options.stdin().orElse(null), cols, rows);
        AgentConnection c = connection().block(CONNECT_TIMEOUT.plusSeconds(5));
        AgentProcess p = c.processes().spawn(spec);
        return new SpawnedProcess() {
            @Override
            public long pid() {
                return p.pid();
            }

            @Override
            public Flux<RawEvent> events() {
                return untilTerminated(p.events(), e -> e instanceof RawEvent.Exited);
            }

            @Override
            public void kill() {
                p.kill();
            }

            @Override
            public void signal(int signal) {
                p.signal(signal);
            }

            @Override
            public void resize(int c, int r) {
                p.resize(c, r);
            }
        };
    }

    /**
     * Starts a background process (or a PTY) that the agent holds: its output stays in the agent's rings after this
     * call, readable by any provider instance that attaches to the session.
     *
     * @param options the command (validated); a stdin publisher in it asks for a stdin pipe, fed by the caller
     * @param secrets variables added to its environment
     * @param cols terminal columns, 0 without a terminal
     * @param rows terminal rows, 0 without a terminal
     * @param ringBytes bytes the agent keeps per output stream
     * @param throttle stop the process while its ring is full of unread bytes, instead of dropping the oldest
     * @return the agent's id and the pid
     */
    Mono<AgentStarted> spawnBackground(
            ExecOptions options, Map<String, String> secrets, int cols, int rows, long ringBytes, boolean throttle) {
        return Mono.defer(() -> {
            Map<String, String> env = new LinkedHashMap<>(secrets);
            env.putAll(options.env());
            // a background process always gets a stdin pipe (unless on a terminal): writeStdin feeds it later
            AgentSpawn spec = new AgentSpawn(
                    options.argv(), env, options.cwd().orElse(""), cols > 0 ? null : Flux.empty(), cols, rows);
            return untilTerminated(connection()
                    .flatMap(c -> c.processes().spawnBackground(spec, ringBytes, throttle))
                    .onErrorMap(
                            ProcessLaunchException.class,
                            e -> e.getCause() instanceof AgentErrnoException a ? launchError(options, a) : e));
        });
    }

    private static RuntimeException launchError(ExecOptions options, AgentErrnoException e) {
        String program = options.argv().get(0);
        return new ProcessLaunchException("cannot start '" + program + "': " + e.agentMessage(), e, e.isRetryable());
    }

    /**
     * A stream of this sandbox that ends with {@link SessionTerminatedException} as soon as the sandbox is known to
     * have ended, and whose lost connection is explained (the sandbox's end, or a retryable error while it runs).
     *
     * @param body the stream
     * @param isEnd whether an item is the stream's last word
     * @param <T> the items
     * @return the stream
     */
    public <T> Flux<T> untilTerminated(Flux<T> body, Predicate<T> isEnd) {
        return Flux.defer(() -> {
            AtomicBoolean ended = new AtomicBoolean();
            return body.takeUntilOther(terminatedSignal.asMono())
                    .doOnNext(item -> {
                        if (isEnd.test(item)) {
                            ended.set(true);
                        }
                    })
                    .concatWith(Flux.defer(() -> terminatedCause == null || ended.get()
                            ? Flux.empty()
                            : Flux.error(new SessionTerminatedException(sessionId, terminatedCause))))
                    .onErrorResume(e -> e instanceof AgentLostException, e -> explain(e))
                    // a connection closed because the session ended says how it ended
                    .onErrorMap(
                            e -> sdkEnd() != null
                                    && (!(e instanceof dev.sandbox.SessionClosedException)
                                            || e instanceof SessionTerminatedException),
                            e -> sdkEnd());
        });
    }

    /**
     * A mono version of {@link #untilTerminated(Flux, Predicate)}.
     *
     * @param body the result
     * @param <T> its type
     * @return the result, or the sandbox's end
     */
    public <T> Mono<T> untilTerminated(Mono<T> body) {
        return untilTerminated(body.flux(), x -> true).next();
    }

    /**
     * The sandbox's end if it ended, else the error itself. The relay's stream ends a moment before the control plane
     * records that the sandbox stopped, so its word is awaited for a short while: its end reported through {@link
     * #terminated}, or an answer of the host (every {@link #SETTLE_STEP}, at most {@link #SETTLE_STEPS} times) that
     * no longer finds it running.
     */
    private <T> Mono<T> explain(Throwable e) {
        Mono<Void> died = terminatedSignal
                .asMono()
                .then(Mono.error(() -> new SessionTerminatedException(sessionId, terminatedCause)));
        // one question after another, a step apart (an answer may take longer than a step: none is skipped)
        Mono<Void> inspected = Flux.range(0, SETTLE_STEPS)
                .concatMap(i -> Mono.delay(i == 0 ? Duration.ZERO : SETTLE_STEP)
                        .then(checkRunning())
                        .onErrorResume(x -> !(x instanceof SessionTerminatedException), x -> Mono.empty()))
                .then();
        return Mono.firstWithSignal(died, inspected).then(Mono.error(e));
    }

    /**
     * Fails with {@link SessionTerminatedException} when the sandbox no longer runs.
     *
     * @return completes when it runs
     */
    public Mono<Void> checkRunning() {
        return Mono.fromCallable(() -> {
                    String known = terminatedCause;
                    if (known != null) {
                        throw new SessionTerminatedException(sessionId, known);
                    }
                    String cause = host.endCause();
                    if (cause != null) {
                        throw new SessionTerminatedException(sessionId, cause);
                    }
                    return Boolean.TRUE;
                })
                .subscribeOn(Schedulers.boundedElastic())
                .then();
    }

    /**
     * Records that the sandbox ended: every stream fails with {@link SessionTerminatedException} naming the cause.
     *
     * @param cause why
     */
    public void terminated(String cause) {
        if (terminatedCause == null) {
            terminatedCause = cause;
        }
        terminatedSignal.tryEmitValue(Boolean.TRUE);
        disconnect();
    }

    /**
     * Why the sandbox ended, once {@link #terminated} said so.
     *
     * @return the cause, or {@code null} while it runs
     */
    public String terminatedCause() {
        return terminatedCause;
    }

    /** The agent connection ended under a running operation. */
    static final class AgentLostException extends BackendException {
        private static final long serialVersionUID = 1L;

        AgentLostException(String sessionId, Throwable cause) {
            super(
                    "the connection to the agent of session " + sessionId + " ended"
                            + (cause == null ? "" : ": " + cause.getMessage()),
                    cause,
                    true);
        }
    }
}
