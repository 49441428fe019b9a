package dev.sandbox.implementation.kubernetes;

import dev.sandbox.BackendException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.ProviderClosedException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SandboxTimeoutException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNameInUseException;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.implementation.agentsession.AgentSessionState;
import dev.sandbox.implementation.agentsession.SessionAgent;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import dev.sandbox.kubernetes.KubernetesSettings;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * The sessions of one Kubernetes provider: each is a pod in the provider's namespace, labelled {@value
 * #SESSION_LABEL}={@code <id>}, watched by one {@link PodWatch}; its agent is reached over {@code exec}.
 */
public final class KubernetesSessions implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KubernetesSessions.class);

    /** The label that makes a pod a session pod; its value is the session id (the pod's name). */
    public static final String SESSION_LABEL = "dev.sandbox/session";
    /** The session's labels, exactly as given, as JSON. */
    static final String LABELS_ANNOTATION = "dev.sandbox/labels";
    /** The session's deadline in epoch seconds, or {@code never}. */
    static final String EXPIRES_ANNOTATION = "dev.sandbox/expires";
    /** The session's idle timeout in seconds, or {@code none}. */
    static final String IDLE_ANNOTATION = "dev.sandbox/idle-seconds";
    /** Session labels that are valid Kubernetes labels are also pod labels under this prefix, for selectors. */
    static final String LABEL_PREFIX = "labels.dev.sandbox/";
    /** The largest labels annotation read back from a pod. */
    static final int MAX_LABELS_JSON = 64 * 1024;

    private static final SecureRandom RANDOM = new SecureRandom();

    private final KubernetesClient client;
    private final KubeDataPlane data;
    private final String namespace;
    private final Duration createTimeout;
    private final Duration maxLifetime;
    private final Duration leaseDuration;
    private final ClientLease lease;
    private final PodWatch watch;
    private final NameLocks names;
    private final PodRecords records;
    private final Map<String, KubeSessionState> sessions = new ConcurrentHashMap<>();
    private final Map<String, Starting> starting = new ConcurrentHashMap<>();
    /**
     * Pods this client deleted that the watch may still show as alive: the API server has answered the delete, but
     * the watch event saying so can arrive later, and until it does {@code list} and {@code attach} must not show the
     * session. An entry goes when the watch sees the pod deleted or being deleted, or after {@link #TOMBSTONE_TTL}.
     */
    private final Map<String, Instant> deletedHere = new ConcurrentHashMap<>();

    private static final Duration TOMBSTONE_TTL = Duration.ofMinutes(2);
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Disposable renewals;

    /**
     * Starts watching the namespace's session pods.
     *
     * @param client the control-plane client
     * @param data the data plane
     * @param namespace the namespace of every session
     * @param createTimeout how long a pod may take to run its session container
     * @param maxLifetime the pods' {@code activeDeadlineSeconds}, or {@code null} for none
     * @param leaseDuration how long a leased session outlives its last client's renewal
     */
    public KubernetesSessions(
            KubernetesClient client,
            KubeDataPlane data,
            String namespace,
            Duration createTimeout,
            Duration maxLifetime,
            Duration leaseDuration) {
        this.client = client;
        this.data = data;
        this.namespace = namespace;
        this.createTimeout = createTimeout;
        this.maxLifetime = maxLifetime;
        this.leaseDuration = leaseDuration;
        this.lease = new ClientLease(client, namespace, "dev-sandbox-client-" + hex(8), leaseDuration);
        this.watch = new PodWatch(client, namespace, SESSION_LABEL, this::onPod);
        this.names = new NameLocks(client, namespace);
        this.records = new PodRecords(client, namespace);
        try {
            watch.start(Duration.ofSeconds(30));
        } catch (Exception e) {
            watch.close();
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            // the informer's first call is a list (then a watch): name the verb the API server refused first
            throw KubernetesErrors.map(cause, "list", "pods", namespace);
        }
        Duration every = leaseDuration.dividedBy(3);
        this.renewals = Flux.interval(Duration.ZERO, every, Schedulers.boundedElastic())
                .onBackpressureDrop()
                .concatMap(tick -> Mono.fromRunnable(this::renewAndSweep).onErrorResume(e -> {
                    LOG.warn("kubernetes lease renewal or sweep failed: {}", e.toString());
                    return Mono.empty();
                }))
                .subscribe();
    }

    private void renewAndSweep() {
        lease.renew();
        List<String> swept = lease.sweep();
        if (!swept.isEmpty()) {
            LOG.info("deleted {} expired client lease(s) in {}: {}", swept.size(), namespace, swept);
        }
    }

    String namespace() {
        return namespace;
    }

    /**
     * Deletes the expired client leases of the namespace now (the garbage collector then removes their sessions).
     *
     * @return the leases deleted
     */
    public Mono<List<String>> sweep() {
        return blocking(lease::sweep);
    }

    // ------------------------------------------------------------------------------------------ the watch's events

    private void onPod(Pod pod, boolean deleted) {
        String name = pod.getMetadata().getName();
        if (deleted || pod.getMetadata().getDeletionTimestamp() != null) {
            deletedHere.remove(name);
        }
        Starting start = starting.get(name);
        if (start != null) {
            Sinks.One<Pod> waiter = start.pod();
            if (deleted) {
                waiter.tryEmitError(new BackendException(
                        "the pod of session " + name + " was deleted before it started", null, true));
            } else {
                PodStates.Start s = PodStates.start(pod);
                if (s instanceof PodStates.Running) {
                    waiter.tryEmitValue(pod);
                } else if (s instanceof PodStates.Failed f) {
                    waiter.tryEmitError(
                            f.image() != null
                                    ? new InvalidArgumentException(
                                            f.image().equals(start.settings().agentImage())
                                                            && !f.image()
                                                                    .equals(start.settings()
                                                                            .image())
                                                    ? "agentImage"
                                                    : "image",
                                            "session " + name + ": " + f.why())
                                    : new BackendException(
                                            "session " + name + " cannot start: " + f.why(), null, false));
                }
            }
        }
        KubeSessionState state = sessions.get(name);
        if (state != null) {
            String cause = deleted ? "its pod was deleted" : PodStates.ended(pod);
            if (cause == null && pod.getMetadata().getDeletionTimestamp() != null) {
                cause = "its pod is being deleted";
            }
            if (cause != null && state.terminate(cause)) {
                sessions.remove(name, state);
                LOG.debug("kubernetes session {} ended: {}", name, cause);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------- create

    /**
     * Creates a session pod and waits until its agent answers.
     *
     * @param options workdir, environment, secrets, labels, lifetime
     * @param settings the pod's settings
     * @return the session
     */
    public Mono<SandboxSession> create(SessionOptions options, KubernetesSettings settings) {
        return Mono.defer(() -> {
            ensureOpen();
            options.validate();
            if (options.network().mode() != NetworkPolicy.Mode.NONE) {
                // a pod has the cluster's network: confining it takes a NetworkPolicy the cluster's CNI enforces
                throw new UnsupportedFeatureException(
                        KubernetesSandboxProvider.NAME, "egress policies yet (a pod has the cluster's network)");
            }
            for (String key : options.labels().keySet()) {
                if (key.startsWith("dev.sandbox/") || key.startsWith(LABEL_PREFIX)) {
                    throw new InvalidArgumentException(
                            "labels", "labels may not start with 'dev.sandbox/', got '" + key + "'");
                }
            }
            Duration lifetime = options.lifetime().orElse(null);
            if (lifetime != null && maxLifetime != null && lifetime.compareTo(maxLifetime) > 0) {
                throw new InvalidArgumentException(
                        "lifetime",
                        "lifetime must not exceed the provider's maxLifetime " + maxLifetime + ", got " + lifetime);
            }
            return blocking(() -> hex(8)).flatMap(hex -> {
                String id = "kube-" + hex;
                String name = options.name().orElse(null);
                Duration idle = options.idleTimeout().orElse(null);
                Instant now = Instant.now();
                long deadline = lifetime == null ? 0 : now.plus(lifetime).getEpochSecond() + 1;
                Sinks.One<Pod> started = Sinks.one();
                starting.put(id, new Starting(started, settings));
                return blocking(() -> {
                            OwnerReference owner = options.lifetimeChosen() ? null : lease.owner();
                            if (name != null) {
                                // the name first, in one create the API server makes atomic; then the pod
                                names.take(name, id, lease.owner(), this::liveSession);
                            }
                            Pod pod = PodSpecs.pod(settings, request(id, options, deadline, idle, owner));
                            Pod made;
                            try {
                                made = client.pods()
                                        .inNamespace(namespace)
                                        .resource(pod)
                                        .create();
                            } catch (KubernetesClientException e) {
                                throw KubernetesErrors.map(e, "create", "pods", namespace);
                            }
                            if (name != null) {
                                names.bind(name, made);
                            }
                            return made;
                        })
                        .then(started.asMono()
                                .timeout(
                                        createTimeout,
                                        Mono.error(() -> new SandboxTimeoutException(
                                                "starting the pod of session " + id + " (image '" + settings.image()
                                                        + "')",
                                                createTimeout))))
                        .flatMap(pod -> {
                            KubeSessionState state = newState(
                                    id,
                                    pod,
                                    options.workdir().orElse(null),
                                    userLabels(options.labels()),
                                    now,
                                    options.secrets());
                            state.named(name);
                            state.timers.setLifetime(lifetime);
                            state.timers.setIdleTimeout(idle);
                            sessions.put(id, state);
                            // the session is ready once its agent answered
                            return state.agent
                                    .untilTerminated(state.agent.connection().flatMap(c -> c.ping()))
                                    .thenReturn((SandboxSession) new KubernetesSession(this, state))
                                    .doOnError(e -> sessions.remove(id, state));
                        })
                        .onErrorResume(e -> e instanceof SessionNameInUseException
                                ? Mono.error(e) // nothing was made: the name was another session's
                                : deletePod(id)
                                        .then(name == null ? Mono.<Object>empty() : blocking(() -> release(name, id)))
                                        .onErrorResume(x -> Mono.empty())
                                        .then(Mono.error(e)))
                        .doFinally(s -> starting.remove(id))
                        // as the other providers do: the caller's next step runs where it may block
                        .publishOn(Schedulers.boundedElastic());
            });
        });
    }

    private PodSpecs.Request request(
            String id, SessionOptions options, long deadline, Duration idle, OwnerReference owner) {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(SESSION_LABEL, id);
        options.name().ifPresent(n -> labels.put(NameLocks.NAME_LABEL, n));
        labels.put("app.kubernetes.io/managed-by", "dev.sandbox");
        options.labels().forEach((k, v) -> {
            String key = LABEL_PREFIX + k;
            if (LabelSyntax.valid(key, v)) {
                labels.put(key, v);
            }
        });
        Map<String, String> annotations = new LinkedHashMap<>();
        annotations.put(LABELS_ANNOTATION, Serialization.asJson(new LinkedHashMap<>(options.labels())));
        annotations.put(EXPIRES_ANNOTATION, deadline > 0 ? Long.toString(deadline) : "never");
        annotations.put(IDLE_ANNOTATION, idle != null ? Long.toString(seconds(idle)) : "none");
        long agentDeadline = deadline > 0 ? (deadline + KubernetesSandboxProvider.LIFETIME_GRACE_SECONDS) * 1000 : 0;
        long agentIdle = idle != null ? (seconds(idle) + KubernetesSandboxProvider.IDLE_GRACE_SECONDS) * 1000 : 0;
        Long active =
                maxLifetime == null ? null : maxLifetime.toSeconds() + KubernetesSandboxProvider.LIFETIME_GRACE_SECONDS;
        return new PodSpecs.Request(
                id,
                namespace,
                labels,
                annotations,
                options.env(),
                options.workdir().orElse(null),
                agentDeadline,
                agentIdle,
                active,
                owner);
    }

    private KubeSessionState newState(
            String id,
            Pod pod,
            String workdir,
            Map<String, String> labels,
            Instant createdAt,
            Map<String, String> secrets) {
        KubeAgentHost host = new KubeAgentHost(data, namespace, id, workdir, () -> watch.get(namespace, id));
        SessionAgent agent = new SessionAgent(host, id);
        host.agent(agent);
        KubeSessionState[] self = new KubeSessionState[1];
        self[0] = new KubeSessionState(id, labels, createdAt, secrets, agent, reason -> {
            // the lifetime or idle timeout ran out, as this client keeps them: the pod goes
            KubeSessionState s = self[0];
            if (s != null && !s.ending()) {
                destroy(s, reason).subscribe(null, e -> LOG.warn("cannot end session {}: {}", id, e.toString()));
            }
        });
        return self[0];
    }

    // --------------------------------------------------------------------------------------- attach, list, destroy

    /**
     * A handle to a session of this namespace, made by this or another provider instance.
     *
     * @param id the session id
     * @return the handle
     */
    public Mono<SandboxSession> attach(String id) {
        return Mono.defer(() -> {
            ensureOpen();
            if (id == null || id.isBlank()) {
                throw new InvalidArgumentException("sessionId", "sessionId must not be empty, got '" + id + "'");
            }
            KubeSessionState known = sessions.get(id);
            if (known != null && !known.ending()) {
                return Mono.just((SandboxSession) new KubernetesSession(this, known));
            }
            Pod pod = watch.get(namespace, id);
            if (pod == null
                    || deletedHere.containsKey(id)
                    || pod.getMetadata().getDeletionTimestamp() != null
                    || PodStates.ended(pod) != null
                    || !(PodStates.start(pod) instanceof PodStates.Running)) {
                return Mono.error(new SessionNotFoundException(id));
            }
            Map<String, String> annotations = pod.getMetadata().getAnnotations();
            KubeSessionState state =
                    newState(id, pod, null, PodRecords.labelsOf(pod), PodRecords.createdAt(pod), Map.of());
            state.named(nameOf(pod));
            KubeSessionState kept = sessions.putIfAbsent(id, state);
            KubeSessionState chosen = kept == null ? state : kept;
            if (kept == null) {
                long expires = PodRecords.parseLong(annotations == null ? null : annotations.get(EXPIRES_ANNOTATION));
                long idle = PodRecords.parseLong(annotations == null ? null : annotations.get(IDLE_ANNOTATION));
                if (expires > 0) {
                    state.timers.setLifetime(
                            Duration.ofMillis(Math.max(1, expires * 1000 - System.currentTimeMillis())));
                }
                if (idle > 0) {
                    state.timers.setIdleTimeout(Duration.ofSeconds(idle));
                }
            }
            // whoever attaches to a leased session holds it too: its lease becomes one more owner of the pod
            Mono<Void> held = PodRecords.holdsLease(pod)
                    ? blocking(() -> records.addOwner(id, lease.owner())).then()
                    : Mono.empty();
            return held.then(chosen.agent.untilTerminated(
                            chosen.agent.connection().flatMap(c -> c.ping())))
                    .thenReturn((SandboxSession) new KubernetesSession(this, chosen))
                    .publishOn(Schedulers.boundedElastic());
        });
    }

    /**
     * A handle to the live session with this name in the namespace, made by this or another provider instance: the
     * watched pod labelled with the name, attached by its id.
     *
     * @param name the session's name
     * @return the handle, or {@link SessionNotFoundException} naming the name
     */
    public Mono<SandboxSession> attachByName(String name) {
        return Mono.defer(() -> {
            ensureOpen();
            SessionOptions.validateName(name);
            for (Pod p : watch.all()) {
                if (name.equals(nameOf(p))
                        && p.getMetadata().getDeletionTimestamp() == null
                        && liveSession(p.getMetadata().getName())) {
                    return attach(p.getMetadata().getName())
                            .onErrorMap(SessionNotFoundException.class, e -> SessionNotFoundException.named(name));
                }
            }
            return Mono.error(SessionNotFoundException.named(name));
        });
    }

    /** Whether a session id is a running session that is not ending, as the watch and this client know it. */
    private boolean liveSession(String id) {
        Pod pod = watch.get(namespace, id);
        KubeSessionState known = sessions.get(id);
        return pod != null
                && pod.getMetadata().getDeletionTimestamp() == null
                && !deletedHere.containsKey(id)
                && PodStates.ended(pod) == null
                && PodStates.start(pod) instanceof PodStates.Running
                && (known == null || !known.ending());
    }

    private Object release(String name, String id) {
        names.release(name, id);
        return name;
    }

    private static String nameOf(Pod pod) {
        Map<String, String> labels = pod.getMetadata().getLabels();
        return labels == null ? null : labels.get(NameLocks.NAME_LABEL);
    }

    /**
     * The sessions whose labels include these.
     *
     * @param wanted labels to match
     * @return their infos
     */
    public Flux<SessionInfo> list(Map<String, String> wanted) {
        return Flux.defer(() -> {
            ensureOpen();
            return Flux.fromIterable(watch.all())
                    .filter(p -> p.getMetadata().getDeletionTimestamp() == null && PodStates.ended(p) == null)
                    .filter(p -> !deletedHere.containsKey(p.getMetadata().getName()))
                    .filter(p -> {
                        KubeSessionState s = sessions.get(p.getMetadata().getName());
                        return s == null || !s.ending();
                    })
                    .map(p -> new SessionInfo(
                            p.getMetadata().getName(),
                            KubernetesSandboxProvider.NAME,
                            withKnown(
                                    PodRecords.labelsOf(p),
                                    sessions.get(p.getMetadata().getName())),
                            PodRecords.createdAt(p),
                            java.util.Optional.ofNullable(nameOf(p))))
                    .filter(info -> info.labels().entrySet().containsAll(wanted.entrySet()));
        });
    }

    Mono<Void> destroy(KubeSessionState state, SessionEndReason reason) {
        return Mono.defer(() -> {
            synchronized (state) {
                if (state.ending()) {
                    return Mono.empty();
                }
                state.destroying(true);
            }
            state.agent.ending(state.endError(reason));
            String name = state.name();
            return deletePod(state.id)
                    // the name is free once the pod is deleted: a create for it need not wait for the collector
                    .then(name == null ? Mono.<Object>empty() : blocking(() -> release(name, state.id)))
                    .then()
                    .doOnSuccess(x -> {
                        state.markEnded(reason);
                        sessions.remove(state.id, state);
                    })
                    .doOnError(e -> state.destroying(false));
        });
    }

    private Mono<Void> deletePod(String id) {
        return blocking(() -> {
                    try {
                        client.pods()
                                .inNamespace(namespace)
                                .withName(id)
                                .withGracePeriod(0)
                                .delete();
                    } catch (KubernetesClientException e) {
                        if (e.getCode() != 404) {
                            throw KubernetesErrors.map(e, "delete", "pods", namespace);
                        }
                    }
                    rememberDeleted(id);
                    return id;
                })
                .then();
    }

    private void rememberDeleted(String id) {
        Instant now = Instant.now();
        deletedHere.values().removeIf(at -> at.plus(TOMBSTONE_TTL).isBefore(now));
        Pod pod = watch.get(namespace, id);
        if (pod != null && pod.getMetadata().getDeletionTimestamp() == null) {
            deletedHere.put(id, now);
            // the watch may have seen the deletion between the get and the put
            Pod again = watch.get(namespace, id);
            if (again == null || again.getMetadata().getDeletionTimestamp() != null) {
                deletedHere.remove(id);
            }
        }
    }

    /**
     * Records a session's labels after an addition on its pod: the JSON annotation every client reads them from, and
     * a pod label for each that Kubernetes's label syntax allows (as at create).
     *
     * @param state the session
     * @param labels every label the session will have
     * @return completes when the pod has them
     */
    Mono<Void> recordLabels(KubeSessionState state, Map<String, String> labels) {
        return Mono.defer(() -> {
            String json = PodRecords.labelsJson(labels);
            return blocking(() -> records.patchLabels(state.id, labels, json)).then();
        });
    }

    /**
     * Records a session's new lifetime and idle timeout: on the pod (so that another client attaching knows) and
     * with its agent (the backstop when no client is left).
     */
    Mono<Void> setTimers(KubeSessionState state, Duration lifetime, Duration idle) {
        return Mono.defer(() -> {
            if (lifetime != null && maxLifetime != null) {
                Duration lived = Duration.between(state.createdAt, Instant.now());
                if (lived.plus(lifetime).compareTo(maxLifetime) > 0) {
                    throw new InvalidArgumentException(
                            "lifetime",
                            "the session would outlive the provider's maxLifetime " + maxLifetime
                                    + " (the pod's activeDeadlineSeconds), got " + lifetime);
                }
            }
            if (lifetime != null) {
                state.timers.setLifetime(lifetime);
            }
            if (idle != null) {
                state.timers.setIdleTimeout(idle);
            }
            Instant expires = state.timers.expiresAt();
            Duration idleNow = state.timers.idleTimeout();
            long deadline = expires == null ? 0 : expires.getEpochSecond() + 1;
            long agentDeadline =
                    deadline == 0 ? 0 : (deadline + KubernetesSandboxProvider.LIFETIME_GRACE_SECONDS) * 1000;
            long agentIdle =
                    idleNow == null ? 0 : (seconds(idleNow) + KubernetesSandboxProvider.IDLE_GRACE_SECONDS) * 1000;
            Mono<Void> recorded = blocking(() -> records.patchTimers(state.id, deadline, idleNow))
                    .then();
            return recorded.then(state.agent.untilTerminated(
                    state.agent.connection().flatMap(c -> c.timers(agentDeadline, agentIdle))));
        });
    }

    // ---------------------------------------------------------------------------------------------------- helpers

    boolean isClosed() {
        return closed.get();
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new ProviderClosedException(KubernetesSandboxProvider.NAME);
        }
    }

    /**
     * A pod's labels with those this client added since (its watch may not have seen the patch yet).
     */
    private static Map<String, String> withKnown(Map<String, String> fromPod, KubeSessionState known) {
        if (known == null) {
            return fromPod;
        }
        Map<String, String> all = new LinkedHashMap<>(fromPod);
        all.putAll(known.labels());
        return all;
    }

    private static Map<String, String> userLabels(Map<String, String> labels) {
        return new LinkedHashMap<>(labels);
    }

    static long seconds(Duration d) {
        long s = d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
        return Math.max(1, s);
    }

    private static String hex(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    static <T> Mono<T> blocking(Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * Stops the watch and the lease renewals; ends this client's handles. The pods stay: sessions with a lifetime
     * until it ends, leased ones until their lease expires (unless another provider holds them).
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        renewals.dispose();
        for (KubeSessionState s : sessions.values()) {
            s.providerClosed();
        }
        sessions.clear();
        watch.close();
    }

    /** A pod on its way to running: where the watch tells it, and the settings it was made with. */
    private record Starting(Sinks.One<Pod> pod, KubernetesSettings settings) {}

    /** One session's state, with the pod's own facts. */
    static final class KubeSessionState extends AgentSessionState {
        KubeSessionState(
                String id,
                Map<String, String> labels,
                Instant createdAt,
                Map<String, String> secrets,
                SessionAgent agent,
                java.util.function.Consumer<SessionEndReason> end) {
            super(KubernetesSandboxProvider.NAME, id, labels, createdAt, secrets, agent, end);
        }
    }
}
