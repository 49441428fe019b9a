package dev.sandbox.docker;

import dev.sandbox.InvalidArgumentException;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

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
 * <p><b>The default profile</b> is meant for untrusted code: pull policy {@link PullPolicy#IF_NOT_PRESENT}, no network
 * ({@link Network#NONE}), runtime {@link Runtime#RUNC}, the image's user, a memory limit of {@link
 * #DEFAULT_MEMORY_LIMIT} bytes (1 GiB, swap included), {@value #DEFAULT_CPU_LIMIT} CPU, {@value #DEFAULT_PIDS_LIMIT}
 * processes and threads, every Linux capability dropped except {@link #DEFAULT_CAPABILITIES}, {@code
 * no-new-privileges} and Docker's default seccomp profile (always on). Loosen it on purpose with {@link
 * #withoutMemoryLimit()}, {@link #withoutCpuLimit()}, {@link #withoutPidsLimit()}, {@link #withCapabilities(Set)};
 * tighten it with {@link #withReadOnlyRootFilesystem(boolean)}, {@link #withDiskLimit(long)}, {@link
 * #withUser(String)} and {@link Runtime#RUNSC}. A session's lifetime and idle timeout come from its {@link
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
        /**
         * A bridge network with outbound access, like Docker's default one, but with traffic between containers off:
         * sessions cannot reach each other's listeners (network {@code dev-sandbox-bridge}, made on first use).
         */
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

    /** The memory limit of the default profile: 1 GiB, swap included. */
    public static final long DEFAULT_MEMORY_LIMIT = 1024L * 1024 * 1024;

    /** The CPU limit of the default profile: one CPU. */
    public static final double DEFAULT_CPU_LIMIT = 1.0;

    /** The process and thread limit of the default profile, as the sandboxed code sees it. */
    public static final long DEFAULT_PIDS_LIMIT = 512;

    /**
     * The Linux capabilities a session keeps in the default profile; every other one is dropped. They let root in the
     * sandbox do what installing and running ordinary software needs: own and change files that belong to other users
     * ({@code CHOWN}, {@code DAC_OVERRIDE}, {@code FOWNER}, {@code FSETID}), switch users as package managers and
     * {@code su} do ({@code SETUID}, {@code SETGID}), signal processes of other users ({@code KILL}, which the SDK
     * also needs to stop commands run as another user) and listen on ports below 1024 ({@code NET_BIND_SERVICE}).
     * Docker's other defaults are dropped: {@code MKNOD} (device nodes), {@code NET_RAW} (raw sockets, packet
     * spoofing), {@code SYS_CHROOT}, {@code SETPCAP}, {@code SETFCAP} (file capabilities) and {@code AUDIT_WRITE}.
     */
    public static final Set<String> DEFAULT_CAPABILITIES = Collections.unmodifiableSet(new LinkedHashSet<>(
            List.of("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL", "NET_BIND_SERVICE")));

    /** The working directory of sessions with a read-only root file system when none is set. */
    public static final String READ_ONLY_DEFAULT_WORKDIR = "/workspace";

    private static final Set<String> KNOWN_CAPABILITIES = Set.of(
            "AUDIT_CONTROL",
            "AUDIT_READ",
            "AUDIT_WRITE",
            "BLOCK_SUSPEND",
            "BPF",
            "CHECKPOINT_RESTORE",
            "CHOWN",
            "DAC_OVERRIDE",
            "DAC_READ_SEARCH",
            "FOWNER",
            "FSETID",
            "IPC_LOCK",
            "IPC_OWNER",
            "KILL",
            "LEASE",
            "LINUX_IMMUTABLE",
            "MAC_ADMIN",
            "MAC_OVERRIDE",
            "MKNOD",
            "NET_ADMIN",
            "NET_BIND_SERVICE",
            "NET_BROADCAST",
            "NET_RAW",
            "PERFMON",
            "SETFCAP",
            "SETGID",
            "SETPCAP",
            "SETUID",
            "SYSLOG",
            "SYS_ADMIN",
            "SYS_BOOT",
            "SYS_CHROOT",
            "SYS_MODULE",
            "SYS_NICE",
            "SYS_PACCT",
            "SYS_PTRACE",
            "SYS_RAWIO",
            "SYS_RESOURCE",
            "SYS_TIME",
            "SYS_TTY_CONFIG",
            "WAKE_ALARM");

    private final String image;
    private final PullPolicy pullPolicy;
    private final @Nullable String workdir;
    private final @Nullable Double cpuLimit;
    private final @Nullable Long memoryLimit;
    private final @Nullable Long pidsLimit;
    private final Network network;
    private final Runtime runtime;
    private final @Nullable String user;
    private final Set<String> capabilities;
    private final boolean readOnlyRootFilesystem;
    private final @Nullable Long diskLimit;

    /** The mutable values a {@code with} method changes on a copy before a new instance is made of them. */
    private static final class Values {
        String image;
        PullPolicy pullPolicy = PullPolicy.IF_NOT_PRESENT;

        @Nullable
        String workdir;

        @Nullable
        Double cpuLimit = DEFAULT_CPU_LIMIT;

        @Nullable
        Long memoryLimit = DEFAULT_MEMORY_LIMIT;

        @Nullable
        Long pidsLimit = DEFAULT_PIDS_LIMIT;

        Network network = Network.NONE;
        Runtime runtime = Runtime.RUNC;

        @Nullable
        String user;

        Set<String> capabilities = DEFAULT_CAPABILITIES;
        boolean readOnlyRootFilesystem;

        @Nullable
        Long diskLimit;

        Values(String image) {
            this.image = image;
        }
    }

    private DockerSettings(Values v) {
        this.image = v.image;
        this.pullPolicy = v.pullPolicy;
        this.workdir = v.workdir;
        this.cpuLimit = v.cpuLimit;
        this.memoryLimit = v.memoryLimit;
        this.pidsLimit = v.pidsLimit;
        this.network = v.network;
        this.runtime = v.runtime;
        this.user = v.user;
        this.capabilities = v.capabilities;
        this.readOnlyRootFilesystem = v.readOnlyRootFilesystem;
        this.diskLimit = v.diskLimit;
    }

    private DockerSettings with(Consumer<Values> change) {
        Values v = new Values(image);
        v.pullPolicy = pullPolicy;
        v.workdir = workdir;
        v.cpuLimit = cpuLimit;
        v.memoryLimit = memoryLimit;
        v.pidsLimit = pidsLimit;
        v.network = network;
        v.runtime = runtime;
        v.user = user;
        v.capabilities = capabilities;
        v.readOnlyRootFilesystem = readOnlyRootFilesystem;
        v.diskLimit = diskLimit;
        change.accept(v);
        return new DockerSettings(v);
    }

    /**
     * Settings for an image with the default profile (see the class description). The image needs a POSIX {@code
     * sh} with {@code sleep}, {@code kill} and {@code grep} (busybox is enough): the SDK keeps the container alive and
     * stops commands with them.
     *
     * @param image an image reference such as {@code busybox:1.36} or {@code registry.example/team/tool:2}
     * @return the settings
     */
    public static DockerSettings of(String image) {
        Values v = new Values(Objects.requireNonNull(image, "image"));
        return new DockerSettings(v);
    }

    /**
     * Uses another image.
     *
     * @param image an image reference
     * @return a copy with the image set
     */
    public DockerSettings withImage(String image) {
        Objects.requireNonNull(image, "image");
        return with(v -> v.image = image);
    }

    /**
     * Sets when the image is pulled.
     *
     * @param pullPolicy the policy
     * @return a copy with the policy set
     */
    public DockerSettings withPullPolicy(PullPolicy pullPolicy) {
        Objects.requireNonNull(pullPolicy, "pullPolicy");
        return with(v -> v.pullPolicy = pullPolicy);
    }

    /**
     * Sets the default working directory of sessions; {@link dev.sandbox.SessionOptions#withWorkdir(String)} wins over
     * it.
     *
     * @param workdir an absolute path inside the container, or {@code null} for the image's
     * @return a copy with the workdir set
     */
    public DockerSettings withWorkdir(@Nullable String workdir) {
        return with(v -> v.workdir = workdir);
    }

    /**
     * Limits the CPU time the container may use, in CPUs ({@code 0.5} is half of one CPU). The default profile
     * allows {@value #DEFAULT_CPU_LIMIT}.
     *
     * @param cpus a positive number of CPUs
     * @return a copy with the limit set
     */
    public DockerSettings withCpuLimit(double cpus) {
        return with(v -> v.cpuLimit = cpus);
    }

    /**
     * Lifts the CPU limit: the container may use every CPU of the host.
     *
     * @return a copy without a CPU limit
     */
    public DockerSettings withoutCpuLimit() {
        return with(v -> v.cpuLimit = null);
    }

    /**
     * Limits the container's memory, swap included: past it the kernel kills a process, and the command ends with
     * {@link dev.sandbox.ExecEvent.Termination#OOM_KILLED}. The default profile allows {@link #DEFAULT_MEMORY_LIMIT}.
     *
     * @param bytes at least {@link #MIN_MEMORY_LIMIT}
     * @return a copy with the limit set
     */
    public DockerSettings withMemoryLimit(long bytes) {
        return with(v -> v.memoryLimit = bytes);
    }

    /**
     * Lifts the memory limit: the sandboxed code may use the host's memory until the host's own OOM killer acts.
     *
     * @return a copy without a memory limit
     */
    public DockerSettings withoutMemoryLimit() {
        return with(v -> v.memoryLimit = null);
    }

    /**
     * Limits how many processes and threads the sandboxed code may have at once, which stops fork bombs. The SDK needs
     * a few for itself (an init, the keep-alive and a short helper when a command is stopped), so allow some headroom.
     * Under gVisor ({@link Runtime#RUNSC}) the limit applies inside the sandbox as {@code RLIMIT_NPROC}, which gVisor
     * enforces (a fork beyond it fails with EAGAIN, as under runc), and the container's Docker pids limit becomes 1024
     * + 16 × the limit, because the host also counts gVisor's own threads (about 57 for an idle sandbox, 8 to 10 more
     * per running process, and they are not freed when processes end). The default profile allows {@value
     * #DEFAULT_PIDS_LIMIT}.
     *
     * @param pids a positive count
     * @return a copy with the limit set
     */
    public DockerSettings withPidsLimit(long pids) {
        return with(v -> v.pidsLimit = pids);
    }

    /**
     * Lifts the process limit.
     *
     * @return a copy without a process limit
     */
    public DockerSettings withoutPidsLimit() {
        return with(v -> v.pidsLimit = null);
    }

    /**
     * Sets the container's network.
     *
     * @param network {@link Network#NONE} or {@link Network#BRIDGE}
     * @return a copy with the network set
     */
    public DockerSettings withNetwork(Network network) {
        Objects.requireNonNull(network, "network");
        return with(v -> v.network = network);
    }

    /**
     * Sets the OCI runtime.
     *
     * @param runtime {@link Runtime#RUNC} or {@link Runtime#RUNSC}
     * @return a copy with the runtime set
     */
    public DockerSettings withRuntime(Runtime runtime) {
        Objects.requireNonNull(runtime, "runtime");
        return with(v -> v.runtime = runtime);
    }

    /**
     * Runs the container and its commands as this user instead of the image's (root for most images). A non-root
     * user takes away what the capabilities give root; the user must be able to write the working directory, which
     * Docker creates owned by root when the image lacks it.
     *
     * @param user a name or {@code uid[:gid]} known to the image, or {@code null} for the image's user
     * @return a copy with the user set
     */
    public DockerSettings withUser(@Nullable String user) {
        return with(v -> v.user = user);
    }

    /**
     * Sets the Linux capabilities the container keeps; all others are dropped. The default profile keeps {@link
     * #DEFAULT_CAPABILITIES}; an empty set drops every capability (root in the sandbox can then not even change the
     * owner of a file or stop another user's process).
     *
     * <pre>{@code
     * Set<String> caps = new HashSet<>(DockerSettings.DEFAULT_CAPABILITIES);
     * caps.add("NET_RAW"); // ping needs raw sockets
     * DockerSettings settings = DockerSettings.of("debian:12").withCapabilities(caps);
     * }</pre>
     *
     * @param capabilities capability names without the {@code CAP_} prefix, such as {@code CHOWN}
     * @return a copy with the capabilities set
     */
    public DockerSettings withCapabilities(Set<String> capabilities) {
        Objects.requireNonNull(capabilities, "capabilities");
        Set<String> copy = Collections.unmodifiableSet(new LinkedHashSet<>(capabilities));
        return with(v -> v.capabilities = copy);
    }

    /**
     * Makes the container's root file system read-only. The working directory (then {@value
     * #READ_ONLY_DEFAULT_WORKDIR} unless one is set) and {@code /tmp} become writable volumes of the container,
     * removed with it; nothing else can be written (the SDK's agent at {@code /.dev-sandbox} is read-only on every
     * container), so sandboxed code cannot change
     * the image's programs. Off by default, as many tools write elsewhere (package managers, caches in the home
     * directory).
     *
     * @param readOnly whether the root file system is read-only
     * @return a copy with the choice set
     */
    public DockerSettings withReadOnlyRootFilesystem(boolean readOnly) {
        return with(v -> v.readOnlyRootFilesystem = readOnly);
    }

    /**
     * Limits the size of the container's writable layer ({@code docker run --storage-opt size=}). Only some storage
     * drivers allow it: {@code overlay2} on XFS mounted with {@code pquota}, {@code btrfs}, {@code zfs} and {@code
     * devicemapper}. On any other (such as {@code overlay2} on ext4, the most common) creating a session fails with an
     * {@link InvalidArgumentException} naming {@code diskLimit}. No limit by default, for that reason: a session can
     * then fill the disk that holds Docker's data.
     *
     * @param bytes the largest size of the writable layer, at least 1 MiB
     * @return a copy with the limit set
     */
    public DockerSettings withDiskLimit(long bytes) {
        return with(v -> v.diskLimit = bytes);
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
     * The capabilities the container keeps.
     *
     * @return capability names without the {@code CAP_} prefix
     */
    public Set<String> capabilities() {
        return capabilities;
    }

    /**
     * Whether the root file system is read-only.
     *
     * @return {@code true} when only the workdir and {@code /tmp} are writable
     */
    public boolean readOnlyRootFilesystem() {
        return readOnlyRootFilesystem;
    }

    /**
     * The limit of the container's writable layer in bytes, if set.
     *
     * @return the limit or empty
     */
    public OptionalLong diskLimit() {
        return diskLimit == null ? OptionalLong.empty() : OptionalLong.of(diskLimit);
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
        for (String cap : capabilities) {
            if (cap == null || !KNOWN_CAPABILITIES.contains(cap)) {
                throw new InvalidArgumentException(
                        "capabilities",
                        "capabilities must be Linux capability names without the CAP_ prefix (such as CHOWN), got '"
                                + cap + "'");
            }
        }
        if (diskLimit != null && diskLimit < 1024 * 1024) {
            throw new InvalidArgumentException("diskLimit", "diskLimit must be at least 1 MiB, got " + diskLimit);
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
                && Objects.equals(user, s.user)
                && capabilities.equals(s.capabilities)
                && readOnlyRootFilesystem == s.readOnlyRootFilesystem
                && Objects.equals(diskLimit, s.diskLimit);
    }

    @Override
    public int hashCode() {
        return Objects.hash(
                image,
                pullPolicy,
                workdir,
                cpuLimit,
                memoryLimit,
                pidsLimit,
                network,
                runtime,
                user,
                capabilities,
                readOnlyRootFilesystem,
                diskLimit);
    }

    @Override
    public String toString() {
        return "DockerSettings{image=" + image + ", pull=" + pullPolicy + ", workdir=" + workdir + ", cpus=" + cpuLimit
                + ", memory=" + memoryLimit + ", pids=" + pidsLimit + ", network=" + network.dockerName()
                + ", runtime=" + runtime.dockerName() + ", user=" + user + ", capabilities=" + capabilities
                + ", readOnlyRoot="
                + readOnlyRootFilesystem + ", disk=" + diskLimit + "}";
    }
}
