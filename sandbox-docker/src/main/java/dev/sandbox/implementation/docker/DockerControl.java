package dev.sandbox.implementation.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.command.InspectExecResponse;
import com.github.dockerjava.api.command.InspectImageResponse;
import com.github.dockerjava.api.command.PullImageResultCallback;
import com.github.dockerjava.api.exception.BadRequestException;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.exception.NotModifiedException;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Mount;
import com.github.dockerjava.api.model.Volume;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.transport.DockerHttpClient;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandbox.BackendException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SessionTerminatedException;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control plane: short request/response calls to the Docker daemon through docker-java (create, start, inspect,
 * commit, list, remove, exec create and inspect). Every method blocks its thread for one or a few round trips, so
 * callers run them on a scheduler that may block (Reactor's bounded-elastic), never on an event loop.
 */
public final class DockerControl implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DockerControl.class);
    /** The label that marks a container as a session and carries its id. */
    public static final String SESSION_LABEL = "dev.sandbox.session";
    /**
     * When the session's container is removed at the latest, in epoch seconds: its deadline plus a grace in which its
     * holder ends it itself; {@code never} without a lifetime.
     */
    public static final String EXPIRES_LABEL = "dev.sandbox.expires-at";
    /**
     * How long a session without a deadline lives after its holder stops renewing its lease, in seconds (see {@link
     * DockerReaper}).
     */
    public static final String LEASE_LABEL = "dev.sandbox.lease-seconds";
    /** The idle timeout in seconds, for information; {@code none} without one. */
    public static final String IDLE_LABEL = "dev.sandbox.idle-timeout";
    /** On a snapshot image: the session it was taken from. */
    public static final String SNAPSHOT_SOURCE_LABEL = "dev.sandbox.snapshot.source";
    /** The prefix of every label the SDK manages; users may not set labels with it. */
    public static final String INTERNAL_PREFIX = "dev.sandbox.";
    /** The label holding a named session's name ({@link dev.sandbox.SessionOptions#withName}). */
    public static final String NAME_LABEL = "dev.sandbox.name";
    /**
     * What a named session's container name starts with; the rest is the session's name. The daemon keeps container
     * names unique: a second create with the name is refused (409), which is what makes a name atomic. Unnamed
     * sessions' containers are named by their ids ({@code docker-<hex>}), which never start with this.
     */
    public static final String NAMED_CONTAINER_PREFIX = "sandbox-named-";

    /**
     * The bridge network sessions with {@code Network.BRIDGE} join: outbound access like Docker's default bridge,
     * but with inter-container traffic off ({@code com.docker.network.bridge.enable_icc=false}), so one session
     * cannot reach another's listeners. Made on first use and left in place, like the reaper's volume.
     */
    public static final String ISOLATED_BRIDGE = "dev-sandbox-bridge";

    private static final Duration PULL_TIMEOUT = Duration.ofMinutes(10);
    /** Containers that were created but never started are left this long for their creator before sweeping. */
    private static final Duration CREATED_GRACE = Duration.ofMinutes(5);

    private final URI dockerHost;
    private final DockerClient client;
    private volatile boolean bridgeReady;

    private DockerControl(URI dockerHost, DockerClient client) {
        this.dockerHost = dockerHost;
        this.client = client;
    }

    /**
     * Connects as the {@code docker} CLI would: {@code DOCKER_HOST}, {@code DOCKER_TLS_VERIFY}, {@code
     * DOCKER_CERT_PATH} and {@code DOCKER_CONFIG}, or the default socket.
     *
     * @param dockerHost a daemon address overriding {@code DOCKER_HOST}, or {@code null}
     * @return the control plane; nothing is contacted yet
     */
    public static DockerControl connect(String dockerHost) {
        DefaultDockerClientConfig.Builder builder = DefaultDockerClientConfig.createDefaultConfigBuilder();
        if (dockerHost != null) {
            builder.withDockerHost(dockerHost);
        }
        DefaultDockerClientConfig config = builder.build();
        DockerHttpClient http = new ZerodepDockerHttpClient.Builder()
                .dockerHost(config.getDockerHost())
                .sslConfig(config.getSSLConfig())
                .maxConnections(128)
                .connectionTimeout(Duration.ofSeconds(10))
                .responseTimeout(Duration.ofMinutes(2))
                .build();
        return new DockerControl(config.getDockerHost(), DockerClientImpl.getInstance(config, http));
    }

    /** The docker-java client, for the reaper's few calls of its own. */
    DockerClient client() {
        return client;
    }

    /**
     * The daemon's address.
     *
     * @return a {@code unix://} or {@code tcp://} URI
     */
    public URI dockerHost() {
        return dockerHost;
    }

    /**
     * Whether the client would use TLS to reach the daemon.
     *
     * @return {@code true} when {@code DOCKER_TLS_VERIFY} is set
     */
    public static boolean tlsRequested() {
        String verify = System.getenv("DOCKER_TLS_VERIFY");
        return verify != null && !verify.isEmpty() && !verify.equals("0");
    }

    /**
     * Makes sure an image is present according to a pull policy.
     *
     * @param image the reference
     * @param pull {@code ALWAYS}, {@code IF_NOT_PRESENT} or {@code NEVER}
     * @return the image's labels
     */
    public Map<String, String> ensureImage(String image, String pull) {
        InspectImageResponse found = null;
        if (!pull.equals("ALWAYS")) {
            found = inspectImage(image);
            if (found == null && pull.equals("NEVER")) {
                throw new InvalidArgumentException(
                        "image", "image '" + image + "' is not present locally and the pull policy is NEVER");
            }
        }
        if (found == null) {
            pull(image);
            found = inspectImage(image);
            if (found == null) {
                throw DockerErrors.missingAfterPull(image);
            }
        }
        Map<String, String> labels =
                found.getConfig() == null ? null : found.getConfig().getLabels();
        return labels == null ? Map.of() : Map.copyOf(labels);
    }

    private InspectImageResponse inspectImage(String image) {
        try {
            return client.inspectImageCmd(image).exec();
        } catch (NotFoundException e) {
            return null;
        } catch (BadRequestException e) {
            throw new InvalidArgumentException(
                    "image", "image '" + image + "' is not a valid reference: " + message(e));
        } catch (RuntimeException e) {
            throw translate("inspect image '" + image + "'", e);
        }
    }

    private void pull(String image) {
        try {
            boolean done = client.pullImageCmd(image)
                    .exec(new QuietPull())
                    .awaitCompletion(PULL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            if (!done) {
                throw DockerErrors.pullTimedOut(image, PULL_TIMEOUT);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DockerErrors.interrupted("pulling image '" + image + "'", e);
        } catch (DockerException e) {
            // the daemon answered: no registry reachable, no such name or tag, a login refused
            throw new BackendException(
                    pullRefused(image, "HTTP " + e.getHttpStatus() + ": " + message(e)),
                    e,
                    DockerErrors.retryableStatus(e.getHttpStatus()));
        } catch (RuntimeException e) {
            throw translate("pull image '" + image + "'", e);
        }
    }

    /**
     * What a user reads when an image is missing and its pull failed: the image, that it could not be pulled and why,
     * and how to choose another image or pull policy (in the CLI, the Spring Boot starter and the Java API).
     *
     * @param image the image reference
     * @param reason the daemon's reason
     * @return the message
     */
    static String pullRefused(String image, String reason) {
        return "docker: image '" + image + "' is not present and could not be pulled (" + reason + "). Pull it where a"
                + " registry answers (docker pull " + image + "), or choose an image the daemon has (docker images):"
                + " --image IMAGE in the CLI, sandbox.docker.image in Spring Boot, DockerSettings.of(image) in Java;"
                + " the pull policy (--pull, sandbox.docker.pull, withPullPolicy: always, if-not-present or never)"
                + " says when to pull";
    }

    /**
     * Starts a created container. A start whose connection broke is made once more (the daemon may not have seen it,
     * or started the container and lost the answer: a second start of a running container is then no error), as a
     * connection to a busy daemon breaks now and then.
     */
    private void start(String id) {
        for (int attempt = 1; ; attempt++) {
            try {
                client.startContainerCmd(id).exec();
                return;
            } catch (NotModifiedException e) {
                return; // running already: the earlier attempt's answer was lost
            } catch (RuntimeException e) {
                if (attempt >= 2
                        || !DockerErrors.isConnectionFailure(e)
                        || Thread.currentThread().isInterrupted()) {
                    throw e;
                }
                pause(100);
            }
        }
    }

    /**
     * Removes a container that could not be started, trying three times over a busy daemon; one that is left (the
     * daemon unreachable throughout) never ran, and carries its session's labels, so the reaper removes it once its
     * lease is over.
     */
    private void removeUnstarted(String id) {
        // a create cancelled while it started the container interrupted this thread: its I/O would fail at once, and
        // the container must go all the same
        boolean interrupted = Thread.interrupted();
        try {
            for (int attempt = 1; attempt <= 3; attempt++) {
                try {
                    client.removeContainerCmd(id).withForce(true).exec();
                    return;
                } catch (NotFoundException e) {
                    return;
                } catch (RuntimeException e) {
                    LOG.debug("cannot remove unstarted container {} (attempt {}): {}", id, attempt, e.toString());
                    pause(100L * attempt);
                    interrupted |= Thread.interrupted();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Creates and starts a container; removes it again when it cannot be started.
     *
     * @param spec what to create
     * @param mounts the read-only mount of the agent's volume, and the session's channel directory if it has one
     * @return the container id
     */
    public String createAndStart(ContainerSpec spec, List<Mount> mounts) {
        String network = spec.network();
        if (network.equals("bridge")) {
            ensureIsolatedBridge();
            network = ISOLATED_BRIDGE;
        }
        HostConfig host = HostConfig.newHostConfig()
                // the agent is process 1: it reaps orphans, and code in the sandbox cannot SIGKILL it
                .withInit(false)
                .withAutoRemove(true)
                .withNetworkMode(network)
                .withRuntime(spec.runtime())
                .withSecurityOpts(List.of("no-new-privileges"))
                .withCapDrop(Capability.ALL)
                .withCapAdd(
                        spec.capabilities().stream().map(Capability::valueOf).toArray(Capability[]::new))
                .withReadonlyRootfs(spec.readOnlyRoot())
                // the agent, read-only: code in the sandbox cannot replace it
                .withMounts(mounts);
        if (spec.diskLimit() != null) {
            host.withStorageOpt(Map.of("size", Long.toString(spec.diskLimit())));
        }
        if (spec.nanoCpus() != null) {
            host.withNanoCPUs(spec.nanoCpus());
        }
        if (spec.memory() != null) {
            host.withMemory(spec.memory()).withMemorySwap(spec.memory());
        }
        if (spec.pids() != null) {
            host.withPidsLimit(DockerLimits.dockerPidsLimit(spec.pids(), spec.runtime()))
                    .withUlimits(DockerLimits.ulimits(spec.pids(), spec.runtime()));
        }
        String id;
        try {
            CreateContainerCmd create = client.createContainerCmd(spec.image())
                    .withName(spec.name())
                    .withEntrypoint(spec.entrypoint())
                    .withCmd(spec.cmd())
                    .withEnv(spec.env())
                    .withLabels(spec.labels())
                    .withAttachStdin(false)
                    .withAttachStdout(false)
                    .withAttachStderr(false)
                    .withStdinOpen(false)
                    .withTty(false)
                    .withHostConfig(host);
            if (spec.workdir() != null) {
                create.withWorkingDir(spec.workdir());
            }
            if (spec.user() != null) {
                create.withUser(spec.user());
            }
            if (!spec.writableDirs().isEmpty()) {
                create.withVolumes(spec.writableDirs().stream().map(Volume::new).toArray(Volume[]::new));
            }
            id = create.exec().getId();
        } catch (ConflictException e) {
            String sessionName = spec.labels().get(NAME_LABEL);
            if (sessionName != null && !sessionName.isEmpty()) {
                // the daemon holds the container name: another session has (or is still removing) it
                throw new dev.sandbox.SessionNameInUseException(sessionName, false);
            }
            throw translate("create a container from '" + spec.image() + "'", e);
        } catch (RuntimeException e) {
            if (spec.diskLimit() != null && message(e).contains("storage-opt")) {
                throw new InvalidArgumentException(
                        "diskLimit",
                        "diskLimit " + spec.diskLimit() + " cannot be applied: the daemon's storage driver does not"
                                + " limit a container's size here (" + message(e) + ")");
            }
            throw translate("create a container from '" + spec.image() + "'", e);
        }
        try {
            start(id);
        } catch (RuntimeException e) {
            removeUnstarted(id);
            throw translate("start container for " + spec.name(), e);
        }
        return id;
    }

    /** Makes {@link #ISOLATED_BRIDGE} unless it exists; several providers may race here, one network results. */
    private void ensureIsolatedBridge() {
        if (bridgeReady) {
            return;
        }
        try {
            client.inspectNetworkCmd().withNetworkId(ISOLATED_BRIDGE).exec();
        } catch (NotFoundException missing) {
            try {
                client.createNetworkCmd()
                        .withName(ISOLATED_BRIDGE)
                        .withDriver("bridge")
                        .withCheckDuplicate(true)
                        .withOptions(Map.of("com.docker.network.bridge.enable_icc", "false"))
                        .withLabels(Map.of(INTERNAL_PREFIX + "network", "isolated-bridge"))
                        .exec();
            } catch (ConflictException race) {
                // another provider made it meanwhile
            } catch (RuntimeException e) {
                throw translate("create the network " + ISOLATED_BRIDGE, e);
            }
        } catch (RuntimeException e) {
            throw translate("inspect the network " + ISOLATED_BRIDGE, e);
        }
        bridgeReady = true;
    }

    /**
     * The running session containers that carry every given label.
     *
     * @param labels labels to match, internal ones allowed
     * @param all whether to include containers that are not running
     * @return the containers
     */
    public List<Container> listSessions(Map<String, String> labels, boolean all) {
        List<String> filter = new ArrayList<>();
        filter.add(SESSION_LABEL);
        labels.forEach((k, v) -> filter.add(k + "=" + v));
        try {
            return client.listContainersCmd()
                    .withShowAll(all)
                    .withLabelFilter(filter)
                    .exec();
        } catch (RuntimeException e) {
            throw translate("list containers", e);
        }
    }

    /**
     * Inspects a container.
     *
     * @param containerId the id
     * @return the container, or {@code null} when it does not exist
     */
    public InspectContainerResponse inspectContainer(String containerId) {
        try {
            return client.inspectContainerCmd(containerId).exec();
        } catch (NotFoundException e) {
            return null;
        } catch (RuntimeException e) {
            throw translate("inspect container " + containerId, e);
        }
    }

    /**
     * Creates an exec in a session's container.
     *
     * @param sessionId the session, for errors
     * @param containerId the container
     * @param argv the command
     * @param env {@code NAME=value} entries added to the container's environment
     * @param cwd the working directory, or {@code null} for the container's
     * @param user the user, or {@code null} for the container's
     * @param stdin whether stdin is attached
     * @return the exec id
     * @throws SessionTerminatedException when the container is gone or not running
     */
    public String execCreate(
            String sessionId,
            String containerId,
            List<String> argv,
            List<String> env,
            String cwd,
            String user,
            boolean stdin) {
        return execCreate(sessionId, containerId, argv, env, cwd, user, stdin, false);
    }

    /**
     * Creates an exec, with or without a terminal.
     *
     * @param sessionId the session, for errors
     * @param containerId the container
     * @param argv the command
     * @param env {@code NAME=value} entries
     * @param cwd the working directory, or {@code null} for the container's
     * @param user the user, or {@code null} for the container's
     * @param stdin whether stdin is attached
     * @param tty whether the exec gets a terminal (its output is then one raw stream)
     * @return the exec's id
     */
    public String execCreate(
            String sessionId,
            String containerId,
            List<String> argv,
            List<String> env,
            String cwd,
            String user,
            boolean stdin,
            boolean tty) {
        try {
            var cmd = client.execCreateCmd(containerId)
                    .withCmd(argv.toArray(String[]::new))
                    .withEnv(env)
                    .withAttachStdout(true)
                    .withAttachStderr(true)
                    .withAttachStdin(stdin)
                    .withTty(tty);
            if (cwd != null) {
                cmd.withWorkingDir(cwd);
            }
            if (user != null) {
                cmd.withUser(user);
            }
            return cmd.exec().getId();
        } catch (NotFoundException e) {
            throw new SessionTerminatedException(sessionId, "its container no longer exists");
        } catch (ConflictException e) {
            String m = message(e);
            if (m.contains("paused")) {
                throw DockerErrors.paused(sessionId, m, e);
            }
            throw new SessionTerminatedException(sessionId, "its container is not running (" + m + ")");
        } catch (RuntimeException e) {
            throw translate("create an exec in session " + sessionId, e);
        }
    }

    /**
     * Sets the terminal size of a running exec.
     *
     * @param execId the exec
     * @param cols columns
     * @param rows rows
     */
    public void resizeExec(String execId, int cols, int rows) {
        try {
            client.resizeExecCmd(execId).withSize(rows, cols).exec(); // height first
        } catch (RuntimeException e) {
            throw translate("resize the terminal of exec " + execId, e);
        }
    }

    /**
     * The state of an exec.
     *
     * @param running whether its process still runs
     * @param exitCode its exit code once known
     * @param pid its process id on the daemon's host, 0 when it never started
     */
    public record ExecState(boolean running, Long exitCode, long pid) {}

    /**
     * Inspects an exec.
     *
     * @param execId the exec
     * @return its state, or {@code null} when the daemon no longer knows it (its container was removed)
     */
    public ExecState inspectExec(String execId) {
        try {
            InspectExecResponse r = client.inspectExecCmd(execId).exec();
            Long pid = r.getPidLong();
            return new ExecState(Boolean.TRUE.equals(r.isRunning()), r.getExitCodeLong(), pid == null ? 0 : pid);
        } catch (NotFoundException e) {
            return null;
        } catch (RuntimeException e) {
            throw translate("inspect exec " + execId, e);
        }
    }

    /**
     * Force-removes a container and waits until it is gone; a container that is already gone counts as removed.
     *
     * @param containerId the container
     * @param what how to name it in errors
     */
    public void removeContainer(String containerId, String what) {
        for (int attempt = 1; ; attempt++) {
            try {
                client.removeContainerCmd(containerId)
                        .withForce(true)
                        .withRemoveVolumes(true)
                        .exec();
                return;
            } catch (NotFoundException e) {
                return;
            } catch (ConflictException e) {
                // "removal already in progress": the daemon's auto-remove got there first; wait for it below
                break;
            } catch (RuntimeException e) {
                if (attempt < 2 && message(e).contains("zombie")) {
                    // a paused gVisor sandbox cannot be killed (paused by another client): unpause it, then again
                    DockerFreezer.unpauseQuietly(this, containerId);
                    continue;
                }
                // a connection to a busy daemon that broke: once more (a removal is idempotent)
                if (attempt >= 2 || !DockerErrors.isConnectionFailure(e)) {
                    throw translate("remove " + what, e);
                }
                pause(100);
            }
        }
        Duration wait = Duration.ofSeconds(30);
        long deadline = System.nanoTime() + wait.toNanos();
        while (inspectContainer(containerId) != null) {
            if (System.nanoTime() > deadline) {
                throw DockerErrors.removalTimedOut(what, wait);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw DockerErrors.interrupted("removing " + what, e);
            }
        }
    }

    /**
     * Commits a container to a local image.
     *
     * @param containerId the container
     * @param repository the image repository
     * @param tag the tag
     * @param labels labels added to the image
     * @return the image id
     */
    public String commit(String containerId, String repository, String tag, Map<String, String> labels) {
        try {
            return client.commitCmd(containerId)
                    .withRepository(repository)
                    .withTag(tag)
                    .withLabels(new LinkedHashMap<>(labels))
                    .withPause(true)
                    .exec();
        } catch (RuntimeException e) {
            throw translate("commit container " + containerId, e);
        }
    }

    /**
     * Removes an image by reference; an image that does not exist counts as removed.
     *
     * @param ref the reference
     */
    public void removeImage(String ref) {
        try {
            client.removeImageCmd(ref).exec();
        } catch (NotFoundException e) {
            // already gone
        } catch (RuntimeException e) {
            throw translate("remove image '" + ref + "'", e);
        }
    }

    /**
     * Removes session containers that are past their deadline, have stopped, or were created and never started. The
     * deadline is the {@link #EXPIRES_LABEL} label set at create, or what this provider knows of its own sessions;
     * never anything read from inside a container, which the sandboxed code could rewrite. Without the reaper this is
     * all the expiry there is.
     *
     * @param nowEpochSeconds the current time
     * @param knownDeadlines the current deadlines (epoch seconds, 0 for none) of the sessions this provider holds
     * @return the ids of the sessions removed
     */
    public List<String> sweep(long nowEpochSeconds, Map<String, Long> knownDeadlines) {
        List<String> removed = new ArrayList<>();
        for (Container c : listSessions(Map.of(), true)) {
            Map<String, String> labels = c.getLabels() == null ? Map.of() : c.getLabels();
            String sessionId = labels.get(SESSION_LABEL);
            String state = c.getState() == null ? "" : c.getState();
            boolean expired = false;
            Long known = knownDeadlines.get(sessionId);
            if (known != null) {
                expired = known > 0 && known <= nowEpochSeconds;
            } else {
                try {
                    String expires = labels.get(EXPIRES_LABEL);
                    expired = expires != null && Long.parseLong(expires) <= nowEpochSeconds;
                } catch (NumberFormatException ignored) {
                    // "never"
                }
            }
            boolean stale = state.equals("exited")
                    || state.equals("dead")
                    || (state.equals("created")
                            && c.getCreated() != null
                            && c.getCreated() + CREATED_GRACE.toSeconds() < nowEpochSeconds);
            if (expired || stale) {
                removeContainer(c.getId(), "session " + sessionId);
                removed.add(sessionId);
            }
        }
        return removed;
    }

    /**
     * Turns a docker-java failure into an SDK error naming what was attempted (see {@link DockerErrors#client}).
     *
     * @param what the operation
     * @param e the failure
     * @return the error to throw
     */
    public RuntimeException translate(String what, RuntimeException e) {
        return DockerErrors.client(dockerHost, what, e);
    }

    /**
     * The daemon's message from a docker-java error, without its JSON wrapping.
     *
     * @param e the error
     * @return the message
     */
    public static String message(Throwable e) {
        String m = String.valueOf(e.getMessage());
        int i = m.indexOf("\"message\":\"");
        String text = i >= 0 ? jsonString(m, i + 11) : m;
        // one line, bounded: the daemon's message goes into exception messages and the CLI's one-line errors
        text = text.strip().replaceAll("\\s*[\\r\\n]+\\s*", " ");
        return text.length() <= MAX_MESSAGE ? text : text.substring(0, MAX_MESSAGE) + "...";
    }

    /** The longest daemon message passed on. */
    private static final int MAX_MESSAGE = 2000;

    /**
     * Decodes the JSON string whose characters start at {@code start} (after its opening quote) up to its closing
     * quote or the end of the text: the daemon's messages quote image names and URLs ({@code Get \"https://...\"}).
     */
    private static String jsonString(String s, int start) {
        StringBuilder b = new StringBuilder();
        for (int i = start; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"') {
                break;
            }
            if (c != '\\' || i + 1 >= s.length()) {
                b.append(c);
                continue;
            }
            char e = s.charAt(++i);
            switch (e) {
                case 'n', 'r', 't' -> b.append(' ');
                case 'b', 'f' -> {}
                case 'u' -> {
                    if (i + 4 < s.length()) {
                        try {
                            b.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                            i += 4;
                        } catch (NumberFormatException bad) {
                            b.append('u');
                        }
                    }
                }
                default -> b.append(e); // \" \\ \/
            }
        }
        return b.toString();
    }

    /**
     * A pull whose failure goes to the caller alone: docker-java's callbacks also log every failure with its stack
     * trace at ERROR, which a program using the provider (the CLI) would print besides its own one-line message.
     */
    private static final class QuietPull extends PullImageResultCallback {
        private volatile Throwable failure;

        @Override
        public void onError(Throwable t) {
            if (failure == null) {
                failure = t;
            }
            try {
                close();
            } catch (IOException e) {
                // the pull's stream is closed anyway; its failure above is what the caller gets
            }
        }

        @Override
        protected void throwFirstError() {
            Throwable t = failure;
            if (t instanceof RuntimeException r) {
                throw r;
            }
            if (t instanceof Error e) {
                throw e;
            }
            if (t != null) {
                throw new IllegalStateException(t);
            }
            super.throwFirstError();
        }
    }

    @Override
    public void close() {
        try {
            client.close();
        } catch (IOException e) {
            throw DockerErrors.closeFailed("docker client", e);
        }
    }
}
