package dev.sandbox.kubernetes;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.implementation.kubernetes.KubeDataPlane;
import dev.sandbox.implementation.kubernetes.KubernetesSessions;
import dev.sandbox.implementation.kubernetes.LabelSyntax;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Sessions as pods on a Kubernetes cluster. Each session is one pod in the provider's namespace whose process 1 is
 * the SDK's agent, copied in by an init container from the agent image ({@link KubernetesSettings#agentImage()});
 * every command, file and process operation goes to that agent over one {@code exec} connection per session through
 * the API server, so RBAC and audit apply. Nothing in the session's image is needed, not even a shell.
 *
 * <p>The client comes from a kubeconfig file and context, or from the pod's service account when the provider runs
 * in a cluster (both as {@code kubectl} finds them). The account needs the namespaced Role of the README's
 * "Kubernetes" section (pods, pods/exec, leases); a call it may not make fails with {@link
 * KubernetesForbiddenException}.
 *
 * <p>Lifetimes are enforced outside the sandbox: by this client's timers, by the agent's deadline (it ends the pod),
 * and as a ceiling by the pod's {@code activeDeadlineSeconds} ({@link Builder#maxLifetime}), which the kubelet
 * enforces. A session without a chosen lifetime is leased: a {@code coordination.k8s.io} Lease per provider instance
 * owns its pods, and when the provider's JVM dies any other provider of the namespace deletes the expired lease, and
 * Kubernetes' garbage collector its pods, within about a lease ({@link Builder#lease}).
 *
 * <pre>{@code
 * try (KubernetesSandboxProvider provider = KubernetesSandboxProvider.builder()
 *         .namespace("sandboxes")
 *         .settings(KubernetesSettings.of("python:3.12-slim")
 *                 .withAgentImage("registry.example.com/dev.sandbox/sandbox-agent:0.1.0"))
 *         .build()) {
 *     provider.withSession(SessionOptions.defaults(), s -> s.run("python3", "-c", "print(6 * 7)"))
 *             .map(ExecResult::stdout)
 *             .block(); // "42\n"
 * }
 * }</pre>
 */
public final class KubernetesSandboxProvider implements SandboxProvider {
    /** The provider's name, in session infos and statuses. */
    public static final String NAME = "kubernetes";

    /** How commands are started, in session statuses: by the agent, reached over the pod's exec. */
    public static final String PROCESS_LAUNCHER = "kubernetes-exec-agent";

    /** How long a leased session outlives the last renewal of its lease, by default. */
    public static final Duration DEFAULT_LEASE = Duration.ofMinutes(1);

    /** The shortest lease. */
    public static final Duration MIN_LEASE = Duration.ofSeconds(3);

    /** The default ceiling on a session's life: the pods' {@code activeDeadlineSeconds}. */
    public static final Duration DEFAULT_MAX_LIFETIME = Duration.ofHours(24);

    /** How long a pod may take by default to run its session container (scheduling, pulls, init). */
    public static final Duration DEFAULT_CREATE_TIMEOUT = Duration.ofMinutes(2);

    /** Seconds the agent's own deadline waits beyond the session's, so that the client ends it first and says why. */
    public static final int LIFETIME_GRACE_SECONDS = 5;

    /** Seconds the agent's own idle timeout waits beyond the session's. */
    public static final int IDLE_GRACE_SECONDS = 10;

    private final KubernetesClient client;
    private final KubeDataPlane data;
    private final KubernetesSessions sessions;
    private final KubernetesSettings settings;
    private final String namespace;

    private KubernetesSandboxProvider(Builder b) {
        Config config = b.config();
        this.namespace =
                b.namespace != null ? b.namespace : config.getNamespace() != null ? config.getNamespace() : "default";
        if (!LabelSyntax.dnsLabel(namespace)) {
            throw new InvalidArgumentException(
                    "namespace", "namespace must be a DNS label (lower case, digits, '-'), got '" + namespace + "'");
        }
        this.settings = b.settings;
        this.client = new KubernetesClientBuilder().withConfig(config).build();
        KubeDataPlane d = null;
        try {
            d = new KubeDataPlane(config, b.eventLoopThreads);
            this.sessions = new KubernetesSessions(client, d, namespace, b.createTimeout, b.maxLifetime, b.lease);
            this.data = d;
        } catch (RuntimeException e) {
            if (d != null) {
                d.close();
            }
            client.close();
            throw e;
        }
    }

    /**
     * A builder: kubeconfig and context as {@code kubectl} finds them, namespace from the context (else {@code
     * default}), the default settings.
     *
     * @return the builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Configures a {@link KubernetesSandboxProvider}. */
    public static final class Builder {
        private @Nullable Path kubeconfig;
        private @Nullable String context;
        private @Nullable String namespace;
        private KubernetesSettings settings = KubernetesSettings.of(KubernetesSettings.DEFAULT_IMAGE);
        private Duration lease = DEFAULT_LEASE;
        private Duration maxLifetime = DEFAULT_MAX_LIFETIME;
        private Duration createTimeout = DEFAULT_CREATE_TIMEOUT;
        private int eventLoopThreads = Math.max(2, Runtime.getRuntime().availableProcessors());

        private Builder() {}

        /**
         * Reads the cluster, credentials and namespace from this kubeconfig file instead of {@code KUBECONFIG} or
         * {@code ~/.kube/config}.
         *
         * @param kubeconfig the file
         * @return this builder
         * @throws InvalidArgumentException when the file cannot be read
         */
        public Builder kubeconfig(Path kubeconfig) {
            if (kubeconfig == null || !Files.isReadable(kubeconfig)) {
                throw new InvalidArgumentException(
                        "kubeconfig", "kubeconfig must be a readable file, got '" + kubeconfig + "'");
            }
            this.kubeconfig = kubeconfig;
            return this;
        }

        /**
         * Uses this context of the kubeconfig instead of its current one.
         *
         * @param context the context's name
         * @return this builder
         */
        public Builder context(String context) {
            if (context == null || context.isBlank()) {
                throw new InvalidArgumentException("context", "context must not be blank, got '" + context + "'");
            }
            this.context = context;
            return this;
        }

        /**
         * The namespace sessions live in (default: the context's, else {@code default}).
         *
         * @param namespace a DNS label
         * @return this builder
         */
        public Builder namespace(String namespace) {
            if (!LabelSyntax.dnsLabel(namespace)) {
                throw new InvalidArgumentException(
                        "namespace",
                        "namespace must be a DNS label (lower case, digits, '-'), got '" + namespace + "'");
            }
            this.namespace = namespace;
            return this;
        }

        /**
         * The pod settings of sessions.
         *
         * @param settings image, agent image, resources, scheduling, security
         * @return this builder
         */
        public Builder settings(KubernetesSettings settings) {
            this.settings = Objects.requireNonNull(settings, "settings");
            return this;
        }

        /**
         * How long a session without a chosen lifetime outlives the last renewal of its lease (default one minute).
         *
         * @param lease at least {@link #MIN_LEASE}
         * @return this builder
         */
        public Builder lease(Duration lease) {
            if (lease == null || lease.compareTo(MIN_LEASE) < 0) {
                throw new InvalidArgumentException("lease", "lease must be at least " + MIN_LEASE + ", got " + lease);
            }
            this.lease = lease;
            return this;
        }

        /**
         * The longest any session lives, whatever its lifetime: the pods' {@code activeDeadlineSeconds}, which the
         * kubelet enforces and which cannot be raised on a running pod. A lifetime beyond it is refused.
         *
         * @param maxLifetime at least one minute
         * @return this builder
         */
        public Builder maxLifetime(Duration maxLifetime) {
            if (maxLifetime == null || maxLifetime.compareTo(Duration.ofMinutes(1)) < 0) {
                throw new InvalidArgumentException(
                        "maxLifetime", "maxLifetime must be at least one minute, got " + maxLifetime);
            }
            this.maxLifetime = maxLifetime;
            return this;
        }

        /**
         * How long a pod may take to run its session container (scheduling, image pulls, the agent's install).
         *
         * @param createTimeout positive
         * @return this builder
         */
        public Builder createTimeout(Duration createTimeout) {
            if (createTimeout == null || createTimeout.isNegative() || createTimeout.isZero()) {
                throw new InvalidArgumentException(
                        "createTimeout", "createTimeout must be positive, got " + createTimeout);
            }
            this.createTimeout = createTimeout;
            return this;
        }

        /**
         * How many event-loop threads carry every session's agent connection (default: the CPU count, at least 2).
         *
         * @param threads at least 1
         * @return this builder
         */
        public Builder eventLoopThreads(int threads) {
            if (threads < 1) {
                throw new InvalidArgumentException(
                        "eventLoopThreads", "eventLoopThreads must be at least 1, got " + threads);
            }
            this.eventLoopThreads = threads;
            return this;
        }

        private Config config() {
            try {
                if (kubeconfig != null) {
                    return Config.fromKubeconfig(context, kubeconfig.toFile());
                }
                return Config.autoConfigure(context);
            } catch (RuntimeException e) {
                throw new InvalidArgumentException(
                        kubeconfig != null ? "kubeconfig" : "context",
                        "cannot read the Kubernetes client configuration"
                                + (kubeconfig != null ? " from " + kubeconfig : "")
                                + (context != null ? " (context '" + context + "')" : "") + ": " + e.getMessage());
            }
        }

        /**
         * Connects: reads the configuration, starts the watch on the namespace's session pods (one list).
         *
         * @return the provider
         * @throws KubernetesForbiddenException when the account may not list or watch pods in the namespace
         */
        public KubernetesSandboxProvider build() {
            return new KubernetesSandboxProvider(this);
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    /**
     * The namespace sessions live in.
     *
     * @return the namespace
     */
    public String namespace() {
        return namespace;
    }

    /**
     * The default pod settings.
     *
     * @return the settings
     */
    public KubernetesSettings settings() {
        return settings;
    }

    @Override
    public Mono<SandboxSession> create(SessionOptions options) {
        return sessions.create(options, settings);
    }

    /**
     * Creates a session with other pod settings than the provider's.
     *
     * @param options the session's options
     * @param settings the pod's settings
     * @return the session
     */
    public Mono<SandboxSession> create(SessionOptions options, KubernetesSettings settings) {
        return sessions.create(options, Objects.requireNonNull(settings, "settings"));
    }

    /**
     * {@inheritDoc}
     *
     * <p>On Kubernetes a name is the namespace's: taking it creates a Lease {@code dev-sandbox-name-<name>} (the API
     * server answers a second create with 409 AlreadyExists, so racing clients in any JVM cannot both win), owned by
     * the session's pod, and the pod carries the name as the label {@code dev.sandbox/name}. The session id stays
     * random. A destroy frees the name at once; a pod that ended otherwise frees it when the garbage collector has
     * removed its lock (seconds), and a create in that time is refused with a retryable {@link
     * dev.sandbox.SessionNameInUseException} ({@link #createOrAttach} waits for it, up to its bound). The provider's
     * role needs {@code create}, {@code get}, {@code update} and {@code delete} on leases, as it has.
     */
    @Override
    public Mono<SandboxSession> attachByName(String name) {
        return sessions.attachByName(name);
    }

    @Override
    public Mono<SandboxSession> attach(String sessionId) {
        return sessions.attach(sessionId);
    }

    @Override
    public Flux<SessionInfo> list(Map<String, String> labels) {
        return sessions.list(Objects.requireNonNull(labels, "labels"));
    }

    @Override
    public Mono<SandboxSession> restore(String snapshotRef, SessionOptions options) {
        return Mono.error(new UnsupportedFeatureException(
                NAME, "filesystem snapshots (a pod's file system cannot be captured through stable Kubernetes APIs)"));
    }

    /**
     * Deletes the namespace's expired client leases now (any provider's); Kubernetes then deletes the sessions they
     * alone held. Every provider does this on its own every third of a lease.
     *
     * @return the leases deleted
     */
    public Mono<List<String>> sweep() {
        return sessions.sweep();
    }

    @Override
    public void close() {
        sessions.close();
        data.close();
        client.close();
    }

    @Override
    public Mono<Void> closeAsync() {
        return Mono.fromRunnable(this::close)
                .subscribeOn(Schedulers.boundedElastic())
                .then();
    }
}
