package dev.sandbox.spring.boot.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * The Sandbox SDK's settings, under the prefix {@code sandbox}: which provider runs the sessions, how it reaches
 * them, what every session gets unless told otherwise, and how long shutdown and health checks may take. A value
 * that cannot be used stops the application at startup with a message naming the property.
 *
 * <pre>{@code
 * sandbox.provider=docker
 * sandbox.docker.image=python:3.12-slim
 * sandbox.docker.runtime=runsc
 * sandbox.session.lifetime=15m
 * }</pre>
 *
 * @param provider which provider runs the sessions: local (the default; processes of this host, no
 *     isolation), docker (a container per session; needs sandbox-docker), kubernetes (a pod per session; needs
 *     sandbox-kubernetes) or remote (a sandbox server; needs sandbox-remote)
 * @param local the local provider's settings, used when provider is local
 * @param docker the Docker provider's settings, used when provider is docker
 * @param kubernetes the Kubernetes provider's settings, used when provider is kubernetes
 * @param remote the remote provider's settings, used when provider is remote
 * @param session what every session created through the application's provider gets unless its options say otherwise
 * @param client the settings of the blocking clients the SandboxClientFactory makes
 * @param pool the warm pool over the application's provider, made when sandbox.pool.enabled is true
 * @param shutdownTimeout how long shutdown waits for the sessions the application created to be destroyed, before the
 *     provider is closed anyway
 * @param healthTimeout how long the health check waits for the provider to answer before reporting it down
 */
@ConfigurationProperties("sandbox")
public record SandboxProperties(
        @DefaultValue("local") String provider,
        @DefaultValue Local local,
        @DefaultValue Docker docker,
        @DefaultValue Kubernetes kubernetes,
        @DefaultValue Remote remote,
        @DefaultValue Session session,
        @DefaultValue Client client,
        @DefaultValue Pool pool,
        @DefaultValue("30s") Duration shutdownTimeout,
        @DefaultValue("5s") Duration healthTimeout) {

    /**
     * The local provider's settings, under {@code sandbox.local}.
     *
     * <pre>{@code
     * sandbox.local.temp-root=/var/tmp/sandboxes
     * }</pre>
     *
     * @param tempRoot an existing directory under which each session without a workdir of its own gets a fresh one
     *     (the JVM's java.io.tmpdir when unset)
     */
    public record Local(@Nullable Path tempRoot) {}

    /**
     * The Docker provider's settings, under {@code sandbox.docker}: the default profile of every session's container.
     * A limit left unset keeps the SDK's default profile (1 GiB of memory, one CPU, 512 processes); {@code 0} lifts
     * it, as with {@code docker run}.
     *
     * <pre>{@code
     * sandbox.docker.image=python:3.12-slim
     * sandbox.docker.runtime=runsc
     * sandbox.docker.memory-limit=512MB
     * sandbox.docker.network=bridge
     * }</pre>
     *
     * @param image the image each session's container starts from (required with sandbox.provider=docker)
     * @param pull when to pull the image: if-not-present (the default), always or never
     * @param runtime runc (the default) or runsc, gVisor's user-space kernel
     * @param network none (the default: loopback only) or bridge (outbound access)
     * @param workdir the containers' working directory, an absolute path (the image's when unset)
     * @param user the user the containers run as, a name or uid[:gid] (the image's when unset)
     * @param memoryLimit the containers' memory limit, swap included; 0 for none
     * @param cpuLimit the CPUs each container may use, such as 1.5; 0 for no limit
     * @param pidsLimit how many processes and threads a sandbox may have at once; 0 for no limit
     * @param diskLimit the size limit of each container's writable layer (only some storage drivers allow one)
     * @param capabilities the Linux capabilities the containers keep, without the CAP_ prefix (the SDK's
     *     default set when unset)
     * @param readOnlyRootFilesystem whether the containers' root file system is read-only
     * @param host the daemon's address, such as unix:///var/run/docker.sock (DOCKER_HOST when unset)
     * @param lease how long a session without a chosen lifetime outlives the provider that held it
     * @param sweepInterval how often the provider looks for expired sessions
     * @param reaper whether to use the reaper container that removes expired sessions when no client is alive
     * @param directChannel whether sessions are reached over a socket in a host directory mounted into them, without
     *     the daemon in between, where the daemon shares this host's files
     */
    public record Docker(
            @Nullable String image,
            @DefaultValue("if-not-present") String pull,
            @DefaultValue("runc") String runtime,
            @DefaultValue("none") String network,
            @Nullable String workdir,
            @Nullable String user,
            @Nullable DataSize memoryLimit,
            @Nullable Double cpuLimit,
            @Nullable Long pidsLimit,
            @Nullable DataSize diskLimit,
            @Nullable List<String> capabilities,
            @DefaultValue("false") boolean readOnlyRootFilesystem,
            @Nullable String host,
            @DefaultValue("1m") Duration lease,
            @DefaultValue("1m") Duration sweepInterval,
            @DefaultValue("true") boolean reaper,
            @DefaultValue("true") boolean directChannel) {}

    /**
     * The Kubernetes provider's settings, under {@code sandbox.kubernetes}: where the session pods run and what they
     * are made of. The other settings of the pods keep the SDK's default profile (1 GiB of memory, one CPU, the
     * Docker provider's capabilities, no privilege escalation).
     *
     * <pre>{@code
     * sandbox.kubernetes.namespace=sandboxes
     * sandbox.kubernetes.image=python:3.12-slim
     * sandbox.kubernetes.agent-image=registry.example.com/dev.sandbox/sandbox-agent:0.1.0
     * sandbox.kubernetes.runtime-class-name=gvisor
     * }</pre>
     *
     * @param namespace the namespace of the session pods (the context's namespace, else default, when unset)
     * @param context the kubeconfig context to use (its current context when unset)
     * @param kubeconfig the kubeconfig file (KUBECONFIG, else ~/.kube/config, else the pod's service account when
     *     unset)
     * @param image the image each session's pod runs (required with sandbox.provider=kubernetes)
     * @param agentImage the image the SDK's agent is copied from, a copy the nodes can pull of the build's
     *     dev.sandbox/sandbox-agent image (that image when unset)
     * @param pullPolicy when the kubelet pulls the images: if-not-present (the default), always or never
     * @param runtimeClassName the RuntimeClass of the pods, such as gvisor or kata (the cluster's default runtime
     *     when unset)
     * @param lease how long a session without a chosen lifetime outlives the provider that held it
     * @param maxLifetime the longest any session lives, whatever its lifetime (the pods' activeDeadlineSeconds)
     */
    public record Kubernetes(
            @Nullable String namespace,
            @Nullable String context,
            @Nullable Path kubeconfig,
            @Nullable String image,
            @Nullable String agentImage,
            @DefaultValue("if-not-present") String pullPolicy,
            @Nullable String runtimeClassName,
            @DefaultValue("1m") Duration lease,
            @DefaultValue("24h") Duration maxLifetime) {}

    /**
     * The remote provider's settings, under {@code sandbox.remote}.
     *
     * <pre>{@code
     * sandbox.remote.url=http://127.0.0.1:7070
     * sandbox.remote.token-file=/etc/sandbox/token
     * sandbox.remote.trusted-certificates=/etc/sandbox/ca.pem
     * sandbox.remote.command-channel=true
     * }</pre>
     *
     * @param url the server's base URL, such as http://127.0.0.1:7070 or https://sandbox.internal:7443 (required with
     *     sandbox.provider=remote)
     * @param tokenFile the file holding the token the server accepts: its content, without surrounding whitespace, read
     *     once at startup (required with sandbox.provider=remote)
     * @param connectTimeout how long opening a connection to the server may take
     * @param responseTimeout how long a control call (create, stat, signal...) may wait for the server
     * @param trustedCertificates for an https URL: a PEM file of the certificates to trust (the server's own, or the
     *     authority's that signed it) instead of the JVM's trust store
     * @param commandChannel whether commands go over the server's one WebSocket command channel (the default) or each
     *     as its own HTTP request
     */
    public record Remote(
            @Nullable String url,
            @Nullable Path tokenFile,
            @DefaultValue("10s") Duration connectTimeout,
            @DefaultValue("30s") Duration responseTimeout,
            @Nullable Path trustedCertificates,
            @DefaultValue("true") boolean commandChannel) {}

    /**
     * What every session created through the application's provider gets when its own options leave it unset, under
     * {@code sandbox.session}.
     *
     * <pre>{@code
     * sandbox.session.lifetime=15m
     * sandbox.session.idle-timeout=2m
     * sandbox.session.labels.team=search
     * }</pre>
     *
     * @param lifetime how long a session may live, for sessions whose options keep the SDK's default lifetime (5
     *     minutes when unset)
     * @param idleTimeout after how long without activity a session ends, for sessions whose options set none (none when
     *     unset)
     * @param labels labels added to every session, unless its options set the same key
     * @param egressAllow an egress allowlist for sessions whose options set no network policy: entries of a domain
     *     (pypi.org, *.example.com) or an address block (10.0.0.0/8), each optionally followed by the ports it is for,
     *     separated by spaces (pypi.org 443); none when unset (no egress). The local provider refuses an allowlist
     */
    public record Session(
            @Nullable Duration lifetime,
            @Nullable Duration idleTimeout,
            @DefaultValue Map<String, String> labels,
            @DefaultValue List<String> egressAllow) {}

    /**
     * The warm pool's settings, under {@code sandbox.pool}: with {@code enabled=true} the application gets a {@code
     * SandboxPool} bean over its provider, whose sessions take the {@code sandbox.session.*} defaults.
     *
     * <pre>{@code
     * sandbox.pool.enabled=true
     * sandbox.pool.warm=8
     * sandbox.pool.max-sessions=32
     * }</pre>
     *
     * @param enabled whether to make the pool
     * @param warm how many sessions the pool keeps created and waiting
     * @param maxSessions the most sessions alive at once, warm and in use (four times warm, at least warm + 16, when
     *     unset)
     * @param maxCreatesInFlight the most creates running at once
     * @param maxWaiting the most callers waiting for a session at once
     * @param acquireTimeout how long a caller waits for a session
     * @param refillPerSecond the most creates started per second
     */
    public record Pool(
            @DefaultValue("false") boolean enabled,
            @DefaultValue("4") int warm,
            @Nullable Integer maxSessions,
            @DefaultValue("4") int maxCreatesInFlight,
            @DefaultValue("1024") int maxWaiting,
            @DefaultValue("30s") Duration acquireTimeout,
            @DefaultValue("10") double refillPerSecond) {}

    /**
     * The blocking clients' settings, under {@code sandbox.client}.
     *
     * <pre>{@code
     * sandbox.client.timeout=30s
     * }</pre>
     *
     * @param timeout how long a blocking call waits when no timeout is passed to it
     * @param streamPrefetch how many events a blocking output stream buffers ahead of its reader
     */
    public record Client(
            @DefaultValue("5m") Duration timeout,
            @DefaultValue("256") int streamPrefetch) {}
}
