package dev.sandbox.docker;

import dev.sandbox.InvalidArgumentException;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * Docker-specific settings of a session: which image, how to get it, the limits and isolation of its container, and
 * how long it may live. Instances are immutable; every {@code with} method returns a copy.
 *
 * <p>These settings hold what only Docker has. What every provider has comes from {@link dev.sandbox.SessionOptions}
 * and combines with them like this:
 *
 * <ul>
 *   <li><b>workdir</b>: {@code SessionOptions.workdir()} wins over {@link #workdir()}; with neither, the image's own
 *       working directory is used ({@code /} when it sets none). Docker creates a missing workdir, owned by root.
 *   <li><b>env</b>: {@code SessionOptions.env()} becomes the container's environment, over the image's. It is visible
 *       to {@code docker inspect} and kept in snapshots.
 *   <li><b>secrets</b>: never stored in Docker. They are added to each command's environment by the handles of the
 *       provider instance that created or restored the session, so they appear neither in {@code docker inspect} of
 *       the container nor in snapshots. A handle attached from another provider instance or process does not know
 *       them.
 *   <li><b>labels</b>: become container labels, next to the SDK's own {@code dev.sandbox.*} labels.
 * </ul>
 *
 * <p>Defaults: pull policy {@link PullPolicy#IF_NOT_PRESENT}, network {@link Network#NONE}, runtime {@link
 * Runtime#RUNC}, the image's user, no resource limits. A session's lifetime and idle timeout come from its {@link
 * dev.sandbox.SessionOptions}, as with every provider.
 *
 * <pre>{@code
 * DockerSettings settings = DockerSettings.of("python:3.12-slim")
 *     .withMemoryLimit(512L * 1024 * 1024)
 *     .withCpuLimit(1.5)
 *     .withPidsLimit(256)
 *     .withRuntime(DockerSettings.Runtime.RUNSC);
 * }</pre>
 */
public final class DockerSettings {

    /** The smallest memory limit Docker accepts: 6 MiB. */
    public static final long MIN_MEMORY_LIMIT = 6L * 1024 * 1024;

    /** When to pull the image from its registry before creating a container. */
    public enum PullPolicy {
        /** Pull every time; fails when the registry cannot be reached. */
        ALWAYS,
        /** Pull only when the image is not present locally. */
        IF_NOT_PRESENT,
        /** Never pull; an image that is not present locally is an {@link InvalidArgumentException} naming it. */
        NEVER
    }

    /** The container's network. */
    public enum Network {
        /** No network interface besides loopback. */
        NONE("none"),
        /** Docker's default bridge network, with outbound access. */
        BRIDGE("bridge");

        private final String dockerName;

        Network(String dockerName) {
            this.dockerName = dockerName;
        }

        /**
         * The network mode as Docker names it.
         *
         * @return {@code none} or {@code bridge}
         */
        public String dockerName() {
            return dockerName;
        }
    }

    /** The OCI runtime that runs the container. */
    public enum Runtime {
        /** The default runtime: Linux namespaces and cgroups on the host kernel. */
        RUNC("runc"),
        /**
         * gVisor: a user-space kernel between the container and the host. The daemon must have a runtime named
         * {@code runsc} configured.
         */
        RUNSC("runsc");

        private final String dockerName;

        Runtime(String dockerName) {
            this.dockerName = dockerName;
        }

        /**
         * The runtime as the daemon's configuration names it.
         *
         * @return {@code runc} or {@code runsc}
         */
        public String dockerName() {
            return dockerName;
        }
    }

    private final String image;
    private final PullPolicy pullPolicy;
    private final String workdir;
    private final Double cpuLimit;
    private final Long memoryLimit;
    private final Long pidsLimit;
    private final Network network;
    private final Runtime runtime;
    private final String user;

    private DockerSettings(
            String image,
            PullPolicy pullPolicy,
            String workdir,
            Double cpuLimit,
            Long memoryLimit,
            Long pidsLimit,
            Network network,
            Runtime runtime,
            String user) {
        this.image = image;
        this.pullPolicy = pullPolicy;
        this.workdir = workdir;
        this.cpuLimit = cpuLimit;
        this.memoryLimit = memoryLimit;
        this.pidsLimit = pidsLimit;
        this.network = network;
        this.runtime = runtime;
        this.user = user;
    }

    /**
     * Settings for an image, with defaults for everything else. The image needs a POSIX {@code sh} with {@code
     * sleep}, {@code kill} and {@code grep} (busybox is enough): the SDK keeps the container alive and stops commands
     * with them.
     *
     * @param image an image reference such as {@code busybox:1.36} or {@code registry.example/team/tool:2}
     * @return the settings
     */
    public static DockerSettings of(String image) {
        return new DockerSettings(
                Objects.requireNonNull(image, "image"),
                PullPolicy.IF_NOT_PRESENT,
                null,
                null,
                null,
                null,
                Network.NONE,
                Runtime.RUNC,
                null);
    }

    /**
     * Uses another image.
     *
     * @param image an image reference
     * @return a copy with the image set
     */
    public DockerSettings withImage(String image) {
        return new DockerSettings(
                Objects.requireNonNull(image, "image"),
                pullPolicy,
                workdir,
                cpuLimit,
                memoryLimit,
                pidsLimit,
                network,
                runtime,
                user);
    }

    /**
     * Sets when the image is pulled.
     *
     * @param pullPolicy the policy
     * @return a copy with the policy set
     */
    public DockerSettings withPullPolicy(PullPolicy pullPolicy) {
        return new DockerSettings(
                image,
                Objects.requireNonNull(pullPolicy, "pullPolicy"),
                workdir,
                cpuLimit,
                memoryLimit,
                pidsLimit,
                network,
                runtime,
                user);
    }

    /**
     * Sets the default working directory of sessions; {@link dev.sandbox.SessionOptions#withWorkdir(String)} wins over
     * it.
     *
     * @param workdir an absolute path inside the container, or {@code null} for the image's
     * @return a copy with the workdir set
     */
    public DockerSettings withWorkdir(String workdir) {
        return new DockerSettings(image, pullPolicy, workdir, cpuLimit, memoryLimit, pidsLimit, network, runtime, user);
    }

    /**
     * Limits the CPU time the container may use, in CPUs ({@code 0.5} is half of one CPU).
     *
     * @param cpus a positive number of CPUs
     * @return a copy with the limit set
     */
    public DockerSettings withCpuLimit(double cpus) {
        return new DockerSettings(image, pullPolicy, workdir, cpus, memoryLimit, pidsLimit, network, runtime, user);
    }

    /**
     * Limits the container's memory, swap included: past it the kernel kills a process, and the command ends with
     * {@link dev.sandbox.ExecEvent.Termination#OOM_KILLED}.
     *
     * @param bytes at least {@link #MIN_MEMORY_LIMIT}
     * @return a copy with the limit set
     */
    public DockerSettings withMemoryLimit(long bytes) {
        return new DockerSettings(image, pullPolicy, workdir, cpuLimit, bytes, pidsLimit, network, runtime, user);
    }

    /**
     * Limits how many processes and threads may exist in the container at once, which stops fork bombs. The SDK needs
     * a few for itself (an init, the keep-alive and a short helper when a command is stopped), so allow some headroom.
     *
     * @param pids a positive count
     * @return a copy with the limit set
     */
    public DockerSettings withPidsLimit(long pids) {
        return new DockerSettings(image, pullPolicy, workdir, cpuLimit, memoryLimit, pids, network, runtime, user);
    }

    /**
     * Sets the container's network.
     *
     * @param network {@link Network#NONE} or {@link Network#BRIDGE}
     * @return a copy with the network set
     */
    public DockerSettings withNetwork(Network network) {
        return new DockerSettings(
                image,
                pullPolicy,
                workdir,
                cpuLimit,
                memoryLimit,
                pidsLimit,
                Objects.requireNonNull(network, "network"),
                runtime,
                user);
    }

    /**
     * Sets the OCI runtime.
     *
     * @param runtime {@link Runtime#RUNC} or {@link Runtime#RUNSC}
     * @return a copy with the runtime set
     */
    public DockerSettings withRuntime(Runtime runtime) {
        return new DockerSettings(
                image,
                pullPolicy,
                workdir,
                cpuLimit,
                memoryLimit,
                pidsLimit,
                network,
                Objects.requireNonNull(runtime, "runtime"),
                user);
    }

    /**
     * Runs the container and its commands as this user.
     *
     * @param user a name or {@code uid[:gid]} known to the image, or {@code null} for the image's user
     * @return a copy with the user set
     */
    public DockerSettings withUser(String user) {
        return new DockerSettings(image, pullPolicy, workdir, cpuLimit, memoryLimit, pidsLimit, network, runtime, user);
    }

    /**
     * The image reference.
     *
     * @return the image
     */
    public String image() {
        return image;
    }

    /**
     * When the image is pulled.
     *
     * @return the pull policy
     */
    public PullPolicy pullPolicy() {
        return pullPolicy;
    }

    /**
     * The default working directory, if set.
     *
     * @return the absolute path, or empty for the image's
     */
    public Optional<String> workdir() {
        return Optional.ofNullable(workdir);
    }

    /**
     * The CPU limit in CPUs, if set.
     *
     * @return the limit or empty
     */
    public OptionalDouble cpuLimit() {
        return cpuLimit == null ? OptionalDouble.empty() : OptionalDouble.of(cpuLimit);
    }

    /**
     * The memory limit in bytes, if set.
     *
     * @return the limit or empty
     */
    public OptionalLong memoryLimit() {
        return memoryLimit == null ? OptionalLong.empty() : OptionalLong.of(memoryLimit);
    }

    /**
     * The process count limit, if set.
     *
     * @return the limit or empty
     */
    public OptionalLong pidsLimit() {
        return pidsLimit == null ? OptionalLong.empty() : OptionalLong.of(pidsLimit);
    }

    /**
     * The container's network.
     *
     * @return the network
     */
    public Network network() {
        return network;
    }

    /**
     * The OCI runtime.
     *
     * @return the runtime
     */
    public Runtime runtime() {
        return runtime;
    }

    /**
     * The user, if set.
     *
     * @return the user or empty for the image's
     */
    public Optional<String> user() {
        return Optional.ofNullable(user);
    }

    /**
     * Checks the settings as the provider does before creating anything.
     *
     * @return these settings
     * @throws InvalidArgumentException naming the first field that is wrong and its value
     */
    public DockerSettings validate() {
        if (image.isBlank() || image.chars().anyMatch(c -> Character.isWhitespace(c) || c == 0)) {
            throw new InvalidArgumentException("image", "image must be an image reference, got '" + image + "'");
        }
        if (workdir != null && (!workdir.startsWith("/") || workdir.indexOf('\0') >= 0)) {
            throw new InvalidArgumentException("workdir", "workdir must be an absolute path, got '" + workdir + "'");
        }
        if (cpuLimit != null && !(cpuLimit > 0 && cpuLimit <= 1024)) {
            throw new InvalidArgumentException(
                    "cpuLimit", "cpuLimit must be a positive number of CPUs, got " + cpuLimit);
        }
        if (memoryLimit != null && memoryLimit < MIN_MEMORY_LIMIT) {
            throw new InvalidArgumentException(
                    "memoryLimit",
                    "memoryLimit must be at least " + MIN_MEMORY_LIMIT + " bytes (6 MiB), got " + memoryLimit);
        }
        if (pidsLimit != null && pidsLimit <= 0) {
            throw new InvalidArgumentException("pidsLimit", "pidsLimit must be positive, got " + pidsLimit);
        }
        if (user != null && (user.isBlank() || user.indexOf('\0') >= 0)) {
            throw new InvalidArgumentException("user", "user must be a name or uid[:gid], got '" + user + "'");
        }
        return this;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DockerSettings s
                && image.equals(s.image)
                && pullPolicy == s.pullPolicy
                && Objects.equals(workdir, s.workdir)
                && Objects.equals(cpuLimit, s.cpuLimit)
                && Objects.equals(memoryLimit, s.memoryLimit)
                && Objects.equals(pidsLimit, s.pidsLimit)
                && network == s.network
                && runtime == s.runtime
                && Objects.equals(user, s.user);
    }

    @Override
    public int hashCode() {
        return Objects.hash(image, pullPolicy, workdir, cpuLimit, memoryLimit, pidsLimit, network, runtime, user);
    }

    @Override
    public String toString() {
        return "DockerSettings{image=" + image + ", pull=" + pullPolicy + ", workdir=" + workdir + ", cpus=" + cpuLimit
                + ", memory=" + memoryLimit + ", pids=" + pidsLimit + ", network=" + network.dockerName()
                + ", runtime=" + runtime.dockerName() + ", user=" + user + "}";
    }
}
