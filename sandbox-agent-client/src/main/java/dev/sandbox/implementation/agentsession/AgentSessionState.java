package dev.sandbox.implementation.agentsession;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxNetwork;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionTerminatedException;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.implementation.agent.AgentErrnoException;
import dev.sandbox.implementation.agent.AgentListener;
import dev.sandbox.implementation.egress.EgressProxy;
import dev.sandbox.implementation.exec.ExecRunner;
import dev.sandbox.implementation.ports.Listener;
import dev.sandbox.implementation.ports.PortForwards;
import dev.sandbox.implementation.session.PauseControl;
import dev.sandbox.implementation.session.SessionTimers;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * One agent-backed session as a provider knows it, shared by every handle the provider gave out for it: what every
 * provider that runs the agent keeps (its agent, its commands, the agent-held processes it has handles to, its
 * timers, its end). A provider keeps what is its own (the container, the pod) in a subclass.
 */
public class AgentSessionState {
    /** The session's id. */
    public final String id;

    private volatile Map<String, String> labels;
    private volatile String name;
    /** When the session was created. */
    public final Instant createdAt;
    /** Known only to the provider instance that created or restored the session; empty otherwise. */
    public final Map<String, String> secrets;

    /** How the provider listens in the sandbox: reverse forwards and the egress proxy. */
    private final Listener listener;

    /** The session's network: a proxy once {@link #startEgress} started one, no egress otherwise. */
    private volatile SandboxNetwork network;

    private volatile EgressProxy egress;

    /** What every command gets on top of its own environment: the secrets, and the proxy's address once it runs. */
    private volatile Map<String, String> commandEnv;

    /** The way into the sandbox: its agent. */
    public final SessionAgent agent;

    /** The session's foreground commands, as this provider instance runs them. */
    public final ExecRunner runner = new ExecRunner();

    /** The session's port forwards, each connection a {@code CONNECT} stream of the agent connection. */
    public final PortForwards ports;
    /** Background processes and PTYs held by the agent that this provider has handles to. */
    final AgentProcesses processes = new AgentProcesses();

    /** Lifetime and idle timeout as this client enforces them; the sandbox's agent is the backstop. */
    public final SessionTimers timers;

    /** Pause and resume, one after the other; every new use of the agent connection passes it first. */
    public final PauseControl pauses;

    private final String providerName;
    private volatile SessionEndReason endReason;
    private volatile boolean destroying;
    /** Why the sandbox ended on its own or from outside, once its control plane said so; {@code null} otherwise. */
    private volatile String terminationCause;

    /**
     * The state of a session.
     *
     * @param providerName the provider's name, in the session's info
     * @param id the session's id
     * @param labels its labels
     * @param createdAt when it was created
     * @param secrets its secrets (added to every command's environment)
     * @param agent the way to its agent
     * @param end called when the session's lifetime or idle timeout ends it, with the reason
     */
    // freeze and thaw are called on a pause, after the subclass is made
    @SuppressWarnings("this-escape")
    public AgentSessionState(
            String providerName,
            String id,
            Map<String, String> labels,
            Instant createdAt,
            Map<String, String> secrets,
            SessionAgent agent,
            Consumer<SessionEndReason> end) {
        this.providerName = providerName;
        this.id = id;
        this.labels = Map.copyOf(labels);
        this.createdAt = createdAt;
        this.secrets = Map.copyOf(secrets);
        this.commandEnv = this.secrets;
        this.network = SandboxNetwork.none("session " + id);
        this.agent = agent;
        this.listener = (port, max, listening) -> agent.connection()
                .flatMapMany(c -> c.net().listen(port, max, listening))
                .map(AgentSessionState::incoming)
                .onErrorMap(
                        e -> e instanceof AgentErrnoException x && (x.code() == EADDRINUSE || x.code() == EACCES),
                        e -> new InvalidArgumentException(
                                "sandboxPort",
                                "cannot listen on sandboxPort " + port + " in the sandbox: " + e.getMessage()));
        this.ports = new PortForwards(
                "session " + id,
                (port, toServer) -> agent.connection().flatMapMany(c -> c.net().connect(port, toServer)),
                listener);
        // activity as this provider knows it without a round trip: its running commands, the agent-held processes
        // and PTYs it has handles to (ones started by another provider instance count there), its open port
        // connections
        this.timers = new SessionTimers(
                id,
                () -> runner.runningCount()
                        + processes.running(false)
                        + processes.running(true)
                        + ports.openConnections(),
                end);
        this.pauses = new PauseControl(id, timers, this::freeze, this::thaw);
        agent.gate(pauses::beforeCall);
    }

    /**
     * Whether this provider can pause the session's sandbox; {@code false} unless a subclass can.
     *
     * @return whether {@link #freeze()} and {@link #thaw()} work
     */
    protected boolean pausable() {
        return false;
    }

    /**
     * Freezes every process of the sandbox, its agent included, with the memory kept; only called when {@link
     * #pausable()}. Runs its blocking steps on a scheduler that may block; the agent is reached through {@link
     * SessionAgent#ungated()}.
     *
     * @return completes once frozen
     */
    protected Mono<Void> freeze() {
        return Mono.error(new UnsupportedFeatureException(providerName, "pausing a session"));
    }

    /**
     * Lets the sandbox's processes run again after {@link #freeze()}.
     *
     * @return completes once they run
     */
    protected Mono<Void> thaw() {
        return Mono.error(new UnsupportedFeatureException(providerName, "resuming a session"));
    }

    /**
     * Whether the session can be paused here.
     *
     * @return true when its provider can freeze it
     */
    public boolean canPause() {
        return pausable();
    }

    private static final int EACCES = 13;
    private static final int EADDRINUSE = 98;

    /** A connection accepted by the agent, as the port forwards take it. */
    private static Listener.Incoming incoming(AgentListener.Accepted a) {
        return new Listener.Incoming() {
            @Override
            public Flux<ByteBuffer> received() {
                return a.received();
            }

            @Override
            public void send(Publisher<ByteBuffer> bytes) {
                a.send(bytes);
            }

            @Override
            public void close() {
                a.close();
            }
        };
    }

    /**
     * Starts the session's egress proxy for an allowlist policy; nothing for {@link NetworkPolicy#none()}. Call once,
     * before the session is handed out: commands started afterwards get the proxy's address. With a certificate
     * authority for credential rules, its certificate is written into the sandbox ({@link EgressProxy#CA_FILE}), and
     * with the image's trusted certificates ({@link EgressProxy#CA_BUNDLE}) for the programs told to use one file.
     *
     * @param policy the policy the session was created with
     * @param files the session's files
     * @return completes once the proxy listens in the sandbox and its certificate is in place
     */
    public Mono<Void> startEgress(NetworkPolicy policy, SandboxFiles files) {
        if (policy.mode() == NetworkPolicy.Mode.NONE) {
            return Mono.empty();
        }
        return Mono.defer(() -> {
                    EgressProxy proxy = new EgressProxy("session " + id, listener, policy, this::ending);
                    String pem = proxy.caPem();
                    Mono<Boolean> certificate = pem == null ? Mono.just(false) : installCa(files, pem);
                    boolean credentials =
                            policy.rules().stream().anyMatch(r -> !r.headers().isEmpty());
                    return proxy.start()
                            .then(certificate)
                            .doOnSuccess(systemBundle -> {
                                // the bundle replaces what programs trust: named only where it holds the image's own
                                // certificates too, or where a rule needs the authority (a later credential rule then
                                // reaches programs that read the authority's file themselves)
                                boolean withCa = pem != null && (Boolean.TRUE.equals(systemBundle) || credentials);
                                Map<String, String> env = new LinkedHashMap<>(proxy.env(withCa));
                                env.putAll(secrets);
                                egress = proxy;
                                network = proxy;
                                commandEnv = Map.copyOf(env);
                                if (destroyed()) {
                                    proxy.close();
                                }
                            })
                            .doOnError(e -> proxy.close())
                            .then();
                })
                .subscribeOn(Schedulers.boundedElastic()); // the authority's keys read the system's entropy
    }

    /** The largest trusted-certificates file of an image read into the bundle. */
    private static final long MAX_SYSTEM_BUNDLE = 4L << 20;

    /**
     * Writes the authority's certificate, and the bundle of the image's first trusted-certificates file with it.
     *
     * @return whether the image had such a file
     */
    private static Mono<Boolean> installCa(SandboxFiles files, String pem) {
        byte[] ca = pem.getBytes(StandardCharsets.US_ASCII);
        Mono<byte[]> system = Flux.fromIterable(EgressProxy.SYSTEM_BUNDLES)
                .concatMap(path -> files.readAllBytes(path, MAX_SYSTEM_BUNDLE).onErrorResume(e -> Mono.empty()), 1)
                .next()
                .defaultIfEmpty(new byte[0]);
        return files.write(EgressProxy.CA_FILE, ca).then(system).flatMap(sys -> {
            byte[] bundle = new byte[sys.length + 1 + ca.length];
            System.arraycopy(sys, 0, bundle, 0, sys.length);
            bundle[sys.length] = '\n';
            System.arraycopy(ca, 0, bundle, sys.length + 1, ca.length);
            return files.write(EgressProxy.CA_BUNDLE, bundle).thenReturn(sys.length > 0);
        });
    }

    /**
     * The session's network.
     *
     * @return its proxy's view, or a network without egress
     */
    public SandboxNetwork network() {
        return network;
    }

    /**
     * The variables every command gets on top of its own environment: the secrets, and the egress proxy's address
     * once it runs (a command's own environment wins over both).
     *
     * @return an unmodifiable map
     */
    public Map<String, String> commandEnv() {
        return commandEnv;
    }

    private void closeEgress() {
        EgressProxy p = egress;
        if (p != null) {
            p.close();
        }
    }

    /**
     * The session's labels, as the provider shows them, those added since its create included.
     *
     * @return an unmodifiable map
     */
    public Map<String, String> labels() {
        return labels;
    }

    /**
     * The session's name.
     *
     * @return the name, or {@code null} for an unnamed session
     */
    public String name() {
        return name;
    }

    /**
     * Names the session; called by its provider before any handle sees it.
     *
     * @param name the name, or {@code null} for none
     * @return this state
     */
    public AgentSessionState named(String name) {
        this.name = name;
        return this;
    }

    /**
     * Adds labels (checked and recorded with the provider by the caller), replacing the values of keys it has.
     *
     * @param added the labels to add
     * @return the labels the session has now
     */
    public synchronized Map<String, String> addLabels(Map<String, String> added) {
        labels = dev.sandbox.implementation.session.LabelUpdate.merged(labels, added);
        return labels;
    }

    /** Records activity on the session. */
    public void touch() {
        timers.touch();
    }

    /**
     * Whether the session ended.
     *
     * @return true once it ended
     */
    public boolean destroyed() {
        return endReason != null;
    }

    /**
     * Why the session ended.
     *
     * @return the reason, or {@code null} while it runs
     */
    public SessionEndReason endReason() {
        return endReason;
    }

    /**
     * Destroyed, or a destroy is under way: no new handle may be given out.
     *
     * @return whether the session is ending or ended
     */
    public boolean ending() {
        return endReason != null || destroying;
    }

    /**
     * Marks a destroy as under way, or as failed.
     *
     * @param on whether a destroy is under way
     */
    public void destroying(boolean on) {
        destroying = on;
    }

    /**
     * Ends the session: its timers stop, its commands and the processes it watches fail with the end's error, and its
     * agent connection closes.
     *
     * @param reason why (the first reason given is kept)
     */
    public void markEnded(SessionEndReason reason) {
        if (endReason == null) {
            endReason = reason;
        }
        timers.stop();
        runner.killAll(() -> endError(reason));
        // the sandbox goes with the session: so do its processes
        processes.unwatchAll(() -> endError(reason));
        agent.ended(endError(endReason));
        ports.closeAll().subscribe();
        closeEgress();
    }

    /**
     * This provider instance lets go of the session without ending it: its timers stop (the sandbox's agent takes
     * over), its foreground commands and the waits on agent-held processes fail with {@link SessionClosedException}
     * ({@link SessionEndReason#PROVIDER_CLOSED}), and the agent connection closes (the agent ends this client's
     * foreground commands; background ones live on).
     */
    public void providerClosed() {
        timers.stop();
        runner.killAll(() -> new SessionClosedException(id, SessionEndReason.PROVIDER_CLOSED));
        processes.unwatchAll(() -> new SessionClosedException(id, SessionEndReason.PROVIDER_CLOSED));
        ports.closeAll().subscribe();
        closeEgress();
        agent.disconnect();
    }

    /**
     * The error of operations cut by the session's end: {@link SessionTerminatedException} naming the cause when the
     * sandbox ended on its own, else a {@link SessionClosedException} with the reason.
     *
     * @param reason why the session ended
     * @return the error
     */
    public RuntimeException endError(SessionEndReason reason) {
        String cause = terminationCause;
        return reason == SessionEndReason.TERMINATED && cause != null
                ? new SessionTerminatedException(id, cause)
                : new SessionClosedException(id, reason);
    }

    /**
     * Ends the session because its sandbox ended without this SDK asking (its control plane said it died or was
     * removed): its running streams fail with {@link SessionTerminatedException} naming the cause, and so does every
     * later call on its handles. Nothing happens when the session already ended or a destroy is under way (this SDK
     * removing the sandbox causes the same report).
     *
     * @param cause why, such as {@code its container is exited: it ran out of memory (...)}
     * @return whether this call ended the session
     */
    public boolean terminate(String cause) {
        synchronized (this) {
            if (ending()) {
                return false;
            }
            terminationCause = cause;
            endReason = SessionEndReason.TERMINATED;
        }
        agent.terminated(cause);
        markEnded(SessionEndReason.TERMINATED);
        return true;
    }

    /**
     * Why the sandbox ended, when {@link #terminate} ended the session.
     *
     * @return the cause, or {@code null}
     */
    public String terminationCause() {
        return terminationCause;
    }

    /**
     * The session's info.
     *
     * @return its id, provider, labels and creation time
     */
    public SessionInfo info() {
        return new SessionInfo(id, providerName, labels, createdAt, java.util.Optional.ofNullable(name));
    }
}
