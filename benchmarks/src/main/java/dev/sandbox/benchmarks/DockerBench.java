package dev.sandbox.benchmarks;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectExecResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import java.io.IOException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * What the Docker rows share: the check that a daemon answers (else the row is {@link Skipped}), the SDK's provider
 * and session options, and the baseline's plain docker-java client with the few calls a user writes without the SDK
 * (create and start a container, run an exec and read its exit code).
 *
 * <p>Everything a row makes carries the label {@value #LABEL}{@code =<run id>}: SDK sessions through {@link
 * SessionOptions#withLabel}, baseline containers directly. {@link #close()} removes whatever still carries it, so a
 * failed or interrupted trial leaks nothing.
 *
 * <p>The baseline's containers get the settings the SDK gives a session's container: the same image, Docker's init,
 * auto-remove, no network, the {@code runc} runtime and {@code no-new-privileges}. Only the keep-alive command
 * differs: a plain {@code sleep} loop, where the SDK runs its own script that also enforces lifetimes.
 *
 * <pre>{@code
 * try (DockerBench docker = DockerBench.open("docker-exec-latency", config);
 *         DockerSandboxProvider provider = docker.provider()) {
 *     String container = docker.startContainer();
 *     long exit = docker.exec(container, List.of("true"), new ResultCallback.Adapter<>());
 * }
 * }</pre>
 */
final class DockerBench implements AutoCloseable {
    /** The image every Docker row runs; {@code scripts/test-image.sh} builds it. */
    static final String IMAGE = System.getProperty("sandbox.bench.docker.image", "sandbox-test:busybox");

    /** The label on every container a Docker row makes; its value is the run's id. */
    static final String LABEL = "sandbox-benchmark";

    /** The longest any single Docker call or stream may take. */
    static final Duration TIMEOUT = Duration.ofMinutes(2);

    /** The baseline's keep-alive: the container's main process, doing nothing until the container is removed. */
    private static final List<String> KEEP_ALIVE = List.of("/bin/sh", "-c", "while :; do sleep 3600; done");

    /** The run ids of this JVM, so a test can check that no container carrying one is left. */
    private static final Set<String> RUN_IDS = ConcurrentHashMap.newKeySet();

    private final String name;
    private final RunConfig config;
    private final String runId = UUID.randomUUID().toString();
    private final DockerClient docker;
    /** Removes the labelled containers when the JVM is stopped (Ctrl-C) before {@link #close()} ran. */
    private final Thread cleanupOnExit;

    private DockerBench(String name, RunConfig config, DockerClient docker) {
        this.name = name;
        this.config = config;
        this.docker = docker;
        RUN_IDS.add(runId);
        this.cleanupOnExit = new Thread(this::removeLabelled, "sandbox-bench-docker-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanupOnExit);
    }

    /**
     * The label values ({@value #LABEL}) of every Docker row run in this JVM so far.
     *
     * @return the run ids
     */
    static Set<String> runIds() {
        return Set.copyOf(RUN_IDS);
    }

    /**
     * Checks that a daemon answers and has the image, and opens the baseline's client.
     *
     * @param name the benchmark, for progress messages
     * @param config where progress goes
     * @return the shared parts
     * @throws Skipped when no daemon answers or the image is missing
     */
    static DockerBench open(String name, RunConfig config) throws Skipped {
        DefaultDockerClientConfig clientConfig =
                DefaultDockerClientConfig.createDefaultConfigBuilder().build();
        String problem = probe(clientConfig);
        if (problem != null) {
            throw new Skipped(problem);
        }
        // the baseline's client, as a user makes one without the SDK
        DockerClient docker = DockerClientImpl.getInstance(
                clientConfig,
                new ZerodepDockerHttpClient.Builder()
                        .dockerHost(clientConfig.getDockerHost())
                        .sslConfig(clientConfig.getSSLConfig())
                        .responseTimeout(TIMEOUT)
                        .build());
        return new DockerBench(name, config, docker);
    }

    /** Why the Docker rows cannot run here, or {@code null} when they can. */
    private static String probe(DefaultDockerClientConfig clientConfig) {
        try (DockerClient probe = DockerClientImpl.getInstance(
                clientConfig,
                new ZerodepDockerHttpClient.Builder()
                        .dockerHost(clientConfig.getDockerHost())
                        .sslConfig(clientConfig.getSSLConfig())
                        .connectionTimeout(Duration.ofSeconds(3))
                        .responseTimeout(Duration.ofSeconds(10))
                        .build())) {
            try {
                probe.pingCmd().exec();
            } catch (RuntimeException e) {
                return "no Docker daemon: nothing answers at " + clientConfig.getDockerHost() + ": " + e.getMessage();
            }
            try {
                probe.inspectImageCmd(IMAGE).exec();
            } catch (NotFoundException e) {
                return "the image " + IMAGE + " is missing; scripts/test-image.sh builds it";
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return "no Docker daemon: cannot talk to " + clientConfig.getDockerHost() + ": " + e;
        }
    }

    /**
     * The plain docker-java client of the baseline side.
     *
     * @return the client
     */
    DockerClient docker() {
        return docker;
    }

    /**
     * The SDK's settings for the benchmark image: never pull, everything else the provider's defaults.
     *
     * @return the settings
     */
    static DockerSettings settings() {
        return DockerSettings.of(IMAGE).withPullPolicy(DockerSettings.PullPolicy.NEVER);
    }

    /**
     * A provider with {@link #settings()}, as a user makes one; with {@code -Dsandbox.bench.docker.relay=true} (or
     * {@code SANDBOX_BENCH_DOCKER_RELAY=1}) one that reaches its agents through the daemon's relay, as on a daemon
     * that does not share this host's files.
     *
     * @return the provider; close it before this
     */
    DockerSandboxProvider provider() {
        return DockerSandboxProvider.builder()
                .settings(settings())
                .directChannel(!relayOnly())
                .build();
    }

    /** Whether the Docker rows measure the relay path. */
    static boolean relayOnly() {
        return Boolean.getBoolean("sandbox.bench.docker.relay")
                || "1".equals(System.getenv("SANDBOX_BENCH_DOCKER_RELAY"));
    }

    /**
     * Options for an SDK session: no lifetime (a full run can outlast the default) and this run's label.
     *
     * @return the options
     */
    SessionOptions sessionOptions() {
        return SessionOptions.defaults().withUnlimitedLifetime().withLabel(LABEL, runId);
    }

    /**
     * Baseline: creates and starts a container with the settings the SDK gives a session's container.
     *
     * @return the container's id
     */
    String startContainer() {
        HostConfig host = HostConfig.newHostConfig()
                .withInit(true)
                .withAutoRemove(true)
                .withNetworkMode("none")
                .withRuntime("runc")
                .withSecurityOpts(List.of("no-new-privileges"))
                // the default profile (DockerSettings): limits and capabilities
                .withMemory(DockerSettings.DEFAULT_MEMORY_LIMIT)
                .withMemorySwap(DockerSettings.DEFAULT_MEMORY_LIMIT)
                .withNanoCPUs(Math.round(DockerSettings.DEFAULT_CPU_LIMIT * 1e9))
                .withPidsLimit(DockerSettings.DEFAULT_PIDS_LIMIT)
                .withCapDrop(Capability.ALL)
                .withCapAdd(DockerSettings.DEFAULT_CAPABILITIES.stream()
                        .map(Capability::valueOf)
                        .toArray(Capability[]::new));
        String id = docker.createContainerCmd(IMAGE)
                .withName("sandbox-bench-"
                        + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()))
                .withEntrypoint(KEEP_ALIVE)
                .withLabels(Map.of(LABEL, runId))
                .withAttachStdin(false)
                .withAttachStdout(false)
                .withAttachStderr(false)
                .withTty(false)
                .withHostConfig(host)
                .exec()
                .getId();
        try {
            docker.startContainerCmd(id).exec();
        } catch (RuntimeException e) {
            remove(id);
            throw e;
        }
        return id;
    }

    /**
     * Baseline: runs a command in a container with stdout and stderr attached, hands every frame to the callback,
     * then reads the exit code. The daemon sets the exit code a moment after the stream ends, so the inspect is
     * repeated until the exec no longer runs.
     *
     * @param containerId the container
     * @param argv the command
     * @param callback receives the output frames; awaited here
     * @return the exit code
     * @throws InterruptedException when interrupted while waiting
     */
    long exec(String containerId, List<String> argv, ResultCallback.Adapter<Frame> callback)
            throws InterruptedException {
        String execId = docker.execCreateCmd(containerId)
                .withCmd(argv.toArray(String[]::new))
                .withAttachStdout(true)
                .withAttachStderr(true)
                .exec()
                .getId();
        docker.execStartCmd(execId).exec(callback);
        if (!callback.awaitCompletion(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("baseline: " + argv + " did not finish within " + TIMEOUT);
        }
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (true) {
            InspectExecResponse r = docker.inspectExecCmd(execId).exec();
            if (!Boolean.TRUE.equals(r.isRunning()) && r.getExitCodeLong() != null) {
                return r.getExitCodeLong();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("baseline: no exit code for " + argv + " within " + TIMEOUT);
            }
        }
    }

    /**
     * Removes a container by force; one that is gone or already being removed counts as removed.
     *
     * @param containerId the container
     */
    void remove(String containerId) {
        try {
            docker.removeContainerCmd(containerId).withForce(true).exec();
        } catch (NotFoundException | ConflictException e) {
            // gone, or its auto-remove is under way
        }
    }

    /** Removes every container that still carries this run's label, waits until they are gone, and closes. */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(cleanupOnExit);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs
        }
        try {
            removeLabelled();
        } finally {
            try {
                docker.close();
            } catch (IOException e) {
                config.log("%s: closing the docker client: %s", name, e);
            }
        }
    }

    private void removeLabelled() {
        try {
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            List<Container> left = labelled();
            int removed = left.size();
            while (!left.isEmpty()) {
                for (Container c : left) {
                    try {
                        remove(c.getId());
                    } catch (RuntimeException e) {
                        config.log("%s: cannot remove container %s: %s", name, c.getId(), e);
                    }
                }
                if (System.nanoTime() - deadline > 0) {
                    config.log("%s: %d labelled containers are still there", name, left.size());
                    break;
                }
                Thread.sleep(100);
                left = labelled();
            }
            if (removed > 0) {
                config.log("%s: removed %d container(s) the run left behind", name, removed);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            config.log("%s: cannot list the containers this run left: %s", name, e);
        }
    }

    private List<Container> labelled() {
        return docker.listContainersCmd()
                .withShowAll(true)
                .withLabelFilter(Map.of(LABEL, runId))
                .exec();
    }
}
