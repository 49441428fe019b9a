package dev.sandbox.kubernetes;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.implementation.kubernetes.LabelSyntax;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What the pod of a Kubernetes session is made of: the image, how it is pulled, the scheduling constraints, the
 * resources and the security profile. Immutable; every {@code with} method returns a changed copy.
 *
 * <p>The default profile is the Docker provider's: a limit of {@value #DEFAULT_MEMORY_LIMIT} bytes (1 GiB) and
 * {@value #DEFAULT_CPU_LIMIT} CPU, every Linux capability dropped except {@link #DEFAULT_CAPABILITIES}, no privilege
 * escalation, the runtime's default seccomp profile ({@code RuntimeDefault}) and no service-account token mounted in
 * the sandbox. The requests (what the scheduler reserves on a node) are small by default, {@value
 * #DEFAULT_CPU_REQUEST} CPU and {@value #DEFAULT_MEMORY_REQUEST} bytes, so that many idle sandboxes share a node;
 * raise them to what your workloads need. Loosen the profile only on purpose.
 *
 * <pre>{@code
 * KubernetesSettings settings = KubernetesSettings.of("python:3.12-slim")
 *         .withPullPolicy(KubernetesSettings.PullPolicy.IF_NOT_PRESENT)
 *         .withRuntimeClassName("gvisor")
 *         .withMemoryLimit(2L << 30)
 *         .withNodeSelector(Map.of("pool", "sandboxes"))
 *         .withAgentImage("registry.example.com/dev.sandbox/sandbox-agent:0.1.0");
 * }</pre>
 */
public final class KubernetesSettings {
    /** The image sessions run when none is set, as on Docker. */
    public static final String DEFAULT_IMAGE = "python:3.12-slim";

    /** The memory limit of the default profile: 1 GiB. */
    public static final long DEFAULT_MEMORY_LIMIT = 1024L * 1024 * 1024;

    /** The CPU limit of the default profile. */
    public static final double DEFAULT_CPU_LIMIT = 1.0;

    /** The memory the scheduler reserves for a session by default: 32 MiB. */
    public static final long DEFAULT_MEMORY_REQUEST = 32L * 1024 * 1024;

    /** The CPU the scheduler reserves for a session by default: a hundredth of a CPU. */
    public static final double DEFAULT_CPU_REQUEST = 0.01;

    /** The smallest memory limit a session may have: the agent and a shell need a few MiB. */
    public static final long MIN_MEMORY_LIMIT = 6L * 1024 * 1024;

    /**
     * The capabilities the default profile keeps, the same as the Docker provider's: change file ownership and
     * permissions, switch users, signal other users' processes and listen below port 1024.
     */
    public static final Set<String> DEFAULT_CAPABILITIES = Collections.unmodifiableSet(new LinkedHashSet<>(
            List.of("CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL", "NET_BIND_SERVICE")));

    /** When the kubelet pulls an image (the container's {@code imagePullPolicy}). */
    public enum PullPolicy {
        /** Pull every time a pod starts. */
        ALWAYS("Always"),
        /** Pull only when the node does not have the image. */
        IF_NOT_PRESENT("IfNotPresent"),
        /** Never pull: the image must be on the node already. */
        NEVER("Never");

        private final String kubernetesName;

        PullPolicy(String kubernetesName) {
            this.kubernetesName = kubernetesName;
        }

        /**
         * The value of {@code imagePullPolicy}.
         *
         * @return {@code Always}, {@code IfNotPresent} or {@code Never}
         */
        public String kubernetesName() {
            return kubernetesName;
        }
    }

    /**
     * A toleration of the session pods, so they may be scheduled on nodes with matching taints.
     *
     * @param key the taint key, or {@code null} with operator {@code Exists} to tolerate every taint
     * @param operator {@code Equal} or {@code Exists}
     * @param value the taint value for {@code Equal}, else {@code null}
     * @param effect {@code NoSchedule}, {@code PreferNoSchedule}, {@code NoExecute}, or {@code null} for all
     */
    public record Toleration(
            @Nullable String key,
            String operator,
            @Nullable String value,
            @Nullable String effect) {
        /**
         * Checks the fields.
         *
         * @throws InvalidArgumentException naming the field that is wrong
         */
        public Toleration {
            if (!"Equal".equals(operator) && !"Exists".equals(operator)) {
                throw new InvalidArgumentException(
                        "toleration.operator", "operator must be Equal or Exists, got '" + operator + "'");
            }
            if ("Exists".equals(operator) && value != null) {
                throw new InvalidArgumentException(
                        "toleration.value", "a toleration with operator Exists takes no value, got '" + value + "'");
            }
            if (effect != null
                    && !Set.of("NoSchedule", "PreferNoSchedule", "NoExecute").contains(effect)) {
                throw new InvalidArgumentException(
                        "toleration.effect",
                        "effect must be NoSchedule, PreferNoSchedule or NoExecute, got '" + effect + "'");
            }
        }
    }

    private static final Pattern CAPABILITY = Pattern.compile("[A-Z_]{2,32}");

    private final String image;
    private final PullPolicy pullPolicy;
    private final String agentImage;
    private final List<String> pullSecrets;
    private final @Nullable String runtimeClassName;
    private final double cpuRequest;
    private final double cpuLimit;
    private final long memoryRequest;
    private final long memoryLimit;
    private final Map<String, String> nodeSelector;
    private final List<Toleration> tolerations;
    private final Map<String, String> labels;
    private final Map<String, String> annotations;
    private final Set<String> capabilities;

    private KubernetesSettings(
            String image,
            PullPolicy pullPolicy,
            String agentImage,
            List<String> pullSecrets,
            @Nullable String runtimeClassName,
            double cpuRequest,
            double cpuLimit,
            long memoryRequest,
            long memoryLimit,
            Map<String, String> nodeSelector,
            List<Toleration> tolerations,
            Map<String, String> labels,
            Map<String, String> annotations,
            Set<String> capabilities) {
        this.image = image;
        this.pullPolicy = pullPolicy;
        this.agentImage = agentImage;
        this.pullSecrets = List.copyOf(pullSecrets);
        this.runtimeClassName = runtimeClassName;
        this.cpuRequest = cpuRequest;
        this.cpuLimit = cpuLimit;
        this.memoryRequest = memoryRequest;
        this.memoryLimit = memoryLimit;
        this.nodeSelector = Collections.unmodifiableMap(new LinkedHashMap<>(nodeSelector));
        this.tolerations = List.copyOf(tolerations);
        this.labels = Collections.unmodifiableMap(new LinkedHashMap<>(labels));
        this.annotations = Collections.unmodifiableMap(new LinkedHashMap<>(annotations));
        this.capabilities = Collections.unmodifiableSet(new LinkedHashSet<>(capabilities));
    }

    /**
     * The default profile with an image.
     *
     * @param image the image sessions run, such as {@code python:3.12-slim}
     * @return the settings
     * @throws InvalidArgumentException when the image is blank
     */
    public static KubernetesSettings of(String image) {
        return new KubernetesSettings(
                        DEFAULT_IMAGE,
                        PullPolicy.IF_NOT_PRESENT,
                        defaultAgentImage(),
                        List.of(),
                        null,
                        DEFAULT_CPU_REQUEST,
                        DEFAULT_CPU_LIMIT,
                        DEFAULT_MEMORY_REQUEST,
                        DEFAULT_MEMORY_LIMIT,
                        Map.of(),
                        List.of(),
                        Map.of(),
                        Map.of(),
                        DEFAULT_CAPABILITIES)
                .withImage(image);
    }

    /**
     * The agent image of this SDK's version: {@code dev.sandbox/sandbox-agent:<version>}, as the build makes it
     * (module {@code sandbox-agent-image}). Push it to a registry your nodes pull from and name that copy with
     * {@link #withAgentImage}.
     *
     * @return the image reference
     */
    public static String defaultAgentImage() {
        return "dev.sandbox/sandbox-agent:" + dev.sandbox.implementation.Version.get();
    }

    private KubernetesSettings copy(Values v) {
        return new KubernetesSettings(
                v.image,
                v.pullPolicy,
                v.agentImage,
                v.pullSecrets,
                v.runtimeClassName,
                v.cpuRequest,
                v.cpuLimit,
                v.memoryRequest,
                v.memoryLimit,
                v.nodeSelector,
                v.tolerations,
                v.labels,
                v.annotations,
                v.capabilities);
    }

    private Values values() {
        Values v = new Values();
        v.image = image;
        v.pullPolicy = pullPolicy;
        v.agentImage = agentImage;
        v.pullSecrets = pullSecrets;
        v.runtimeClassName = runtimeClassName;
        v.cpuRequest = cpuRequest;
        v.cpuLimit = cpuLimit;
        v.memoryRequest = memoryRequest;
        v.memoryLimit = memoryLimit;
        v.nodeSelector = nodeSelector;
        v.tolerations = tolerations;
        v.labels = labels;
        v.annotations = annotations;
        v.capabilities = capabilities;
        return v;
    }

    /** The mutable values a {@code with} method changes; {@link #values()} fills every field. */
    @SuppressWarnings("NullAway.Init")
    private static final class Values {
        String image;
        PullPolicy pullPolicy;
        String agentImage;
        List<String> pullSecrets;

        @Nullable
        String runtimeClassName;

        double cpuRequest;
        double cpuLimit;
        long memoryRequest;
        long memoryLimit;
        Map<String, String> nodeSelector;
        List<Toleration> tolerations;
        Map<String, String> labels;
        Map<String, String> annotations;
        Set<String> capabilities;
    }

    /**
     * With another image.
     *
     * @param image the image sessions run
     * @return a changed copy
     * @throws InvalidArgumentException when the image is blank or holds white space
     */
    public KubernetesSettings withImage(String image) {
        Values v = values();
        v.image = imageRef("image", image);
        return copy(v);
    }

    /**
     * With another pull policy for the session image and the agent image.
     *
     * @param pullPolicy when the kubelet pulls
     * @return a changed copy
     */
    public KubernetesSettings withPullPolicy(PullPolicy pullPolicy) {
        Values v = values();
        v.pullPolicy = Objects.requireNonNull(pullPolicy, "pullPolicy");
        return copy(v);
    }

    /**
     * With the agent image the init container copies the agent from: your registry's copy of {@link
     * #defaultAgentImage()}.
     *
     * @param agentImage the image reference
     * @return a changed copy
     * @throws InvalidArgumentException when blank or holding white space
     */
    public KubernetesSettings withAgentImage(String agentImage) {
        Values v = values();
        v.agentImage = imageRef("agentImage", agentImage);
        return copy(v);
    }

    /**
     * With image pull secrets: names of {@code kubernetes.io/dockerconfigjson} secrets in the session namespace.
     *
     * @param names the secret names
     * @return a changed copy
     * @throws InvalidArgumentException when a name is not a DNS subdomain
     */
    public KubernetesSettings withPullSecrets(List<String> names) {
        Values v = values();
        for (String n : names) {
            dnsSubdomain("pullSecrets", n);
        }
        v.pullSecrets = new ArrayList<>(names);
        return copy(v);
    }

    /**
     * With a runtime class, such as {@code gvisor} or {@code kata}: the RuntimeClass object must exist in the
     * cluster (the API server refuses the pod otherwise).
     *
     * @param runtimeClassName the RuntimeClass name, or {@code null} for the cluster's default runtime
     * @return a changed copy
     * @throws InvalidArgumentException when the name is not a DNS subdomain
     */
    public KubernetesSettings withRuntimeClassName(@Nullable String runtimeClassName) {
        Values v = values();
        v.runtimeClassName = runtimeClassName == null ? null : dnsSubdomain("runtimeClassName", runtimeClassName);
        return copy(v);
    }

    /**
     * With a CPU request and limit.
     *
     * @param request what the scheduler reserves, in CPUs (at least 0.001)
     * @param limit the most the session may use, in CPUs, not below the request
     * @return a changed copy
     * @throws InvalidArgumentException naming the value that is out of range
     */
    public KubernetesSettings withCpu(double request, double limit) {
        if (!(request >= 0.001) || !Double.isFinite(request)) {
            throw new InvalidArgumentException("cpuRequest", "cpuRequest must be at least 0.001, got " + request);
        }
        if (!(limit >= request) || !Double.isFinite(limit)) {
            throw new InvalidArgumentException(
                    "cpuLimit", "cpuLimit must be finite and at least the request " + request + ", got " + limit);
        }
        Values v = values();
        v.cpuRequest = request;
        v.cpuLimit = limit;
        return copy(v);
    }

    /**
     * With a memory limit, keeping the request (lowered to the limit when above it).
     *
     * @param bytes the limit, at least {@value #MIN_MEMORY_LIMIT}
     * @return a changed copy
     * @throws InvalidArgumentException when below the minimum
     */
    public KubernetesSettings withMemoryLimit(long bytes) {
        return withMemory(Math.min(memoryRequest, bytes), bytes);
    }

    /**
     * With a memory request and limit.
     *
     * @param request what the scheduler reserves, in bytes (at least 1 MiB)
     * @param limit the most the session may use, in bytes, at least {@value #MIN_MEMORY_LIMIT} and the request
     * @return a changed copy
     * @throws InvalidArgumentException naming the value that is out of range
     */
    public KubernetesSettings withMemory(long request, long limit) {
        if (request < 1024 * 1024) {
            throw new InvalidArgumentException(
                    "memoryRequest", "memoryRequest must be at least 1 MiB (1048576 bytes), got " + request);
        }
        if (limit < MIN_MEMORY_LIMIT || limit < request) {
            throw new InvalidArgumentException(
                    "memoryLimit",
                    "memoryLimit must be at least " + MIN_MEMORY_LIMIT + " bytes and the request " + request + ", got "
                            + limit);
        }
        Values v = values();
        v.memoryRequest = request;
        v.memoryLimit = limit;
        return copy(v);
    }

    /**
     * With a node selector: the pods go only to nodes with these labels.
     *
     * @param nodeSelector label keys and values
     * @return a changed copy
     */
    public KubernetesSettings withNodeSelector(Map<String, String> nodeSelector) {
        Values v = values();
        nodeSelector.forEach((k, x) -> labelEntry("nodeSelector", k, x));
        v.nodeSelector = nodeSelector;
        return copy(v);
    }

    /**
     * With tolerations of node taints.
     *
     * @param tolerations the tolerations
     * @return a changed copy
     */
    public KubernetesSettings withTolerations(List<Toleration> tolerations) {
        Values v = values();
        v.tolerations = List.copyOf(tolerations);
        return copy(v);
    }

    /**
     * With labels on every session pod, beside the SDK's own ({@code dev.sandbox/...}) and the session's labels.
     *
     * @param labels keys and values, valid Kubernetes labels outside the {@code dev.sandbox/} prefix
     * @return a changed copy
     * @throws InvalidArgumentException naming a key or value Kubernetes would refuse
     */
    public KubernetesSettings withLabels(Map<String, String> labels) {
        Values v = values();
        labels.forEach((k, x) -> {
            labelEntry("labels", k, x);
            if (k.startsWith("dev.sandbox/")) {
                throw new InvalidArgumentException("labels", "the prefix dev.sandbox/ is the SDK's, got '" + k + "'");
            }
        });
        v.labels = labels;
        return copy(v);
    }

    /**
     * With annotations on every session pod.
     *
     * @param annotations keys and values
     * @return a changed copy
     * @throws InvalidArgumentException when a key uses the SDK's {@code dev.sandbox/} prefix
     */
    public KubernetesSettings withAnnotations(Map<String, String> annotations) {
        Values v = values();
        annotations.forEach((k, x) -> {
            if (k == null || k.isBlank() || k.startsWith("dev.sandbox/") || x == null) {
                throw new InvalidArgumentException(
                        "annotations", "annotation keys must be set and outside dev.sandbox/, got '" + k + "'");
            }
        });
        v.annotations = annotations;
        return copy(v);
    }

    /**
     * With other Linux capabilities kept (every other one is dropped).
     *
     * @param capabilities names without the {@code CAP_} prefix, such as {@code NET_RAW}
     * @return a changed copy
     * @throws InvalidArgumentException naming a malformed capability
     */
    public KubernetesSettings withCapabilities(Set<String> capabilities) {
        for (String c : capabilities) {
            if (c == null || !CAPABILITY.matcher(c).matches()) {
                throw new InvalidArgumentException(
                        "capabilities", "a capability is a name like NET_RAW without CAP_, got '" + c + "'");
            }
        }
        Values v = values();
        v.capabilities = capabilities;
        return copy(v);
    }

    /**
     * Returns the image sessions run.
     *
     * @return the image sessions run
     */
    public String image() {
        return image;
    }

    /**
     * Returns when images are pulled.
     *
     * @return when images are pulled
     */
    public PullPolicy pullPolicy() {
        return pullPolicy;
    }

    /**
     * Returns the image the agent is copied from.
     *
     * @return the image the agent is copied from
     */
    public String agentImage() {
        return agentImage;
    }

    /**
     * Returns the image pull secrets' names.
     *
     * @return the image pull secrets' names
     */
    public List<String> pullSecrets() {
        return pullSecrets;
    }

    /**
     * Returns the RuntimeClass, if one is set.
     *
     * @return the RuntimeClass, if one is set
     */
    public Optional<String> runtimeClassName() {
        return Optional.ofNullable(runtimeClassName);
    }

    /**
     * Returns the CPU request, in CPUs.
     *
     * @return the CPU request, in CPUs
     */
    public double cpuRequest() {
        return cpuRequest;
    }

    /**
     * Returns the CPU limit, in CPUs.
     *
     * @return the CPU limit, in CPUs
     */
    public double cpuLimit() {
        return cpuLimit;
    }

    /**
     * Returns the memory request, in bytes.
     *
     * @return the memory request, in bytes
     */
    public long memoryRequest() {
        return memoryRequest;
    }

    /**
     * Returns the memory limit, in bytes.
     *
     * @return the memory limit, in bytes
     */
    public long memoryLimit() {
        return memoryLimit;
    }

    /**
     * Returns the node selector.
     *
     * @return the node selector
     */
    public Map<String, String> nodeSelector() {
        return nodeSelector;
    }

    /**
     * Returns the tolerations.
     *
     * @return the tolerations
     */
    public List<Toleration> tolerations() {
        return tolerations;
    }

    /**
     * Returns the extra pod labels.
     *
     * @return the extra pod labels
     */
    public Map<String, String> labels() {
        return labels;
    }

    /**
     * Returns the pod annotations.
     *
     * @return the pod annotations
     */
    public Map<String, String> annotations() {
        return annotations;
    }

    /**
     * Returns the capabilities kept.
     *
     * @return the capabilities kept
     */
    public Set<String> capabilities() {
        return capabilities;
    }

    private static String imageRef(String field, String ref) {
        if (ref == null || ref.isBlank() || ref.chars().anyMatch(Character::isWhitespace)) {
            throw new InvalidArgumentException(field, field + " must be an image reference, got '" + ref + "'");
        }
        return ref;
    }

    private static String dnsSubdomain(String field, String name) {
        if (!LabelSyntax.dnsSubdomain(name)) {
            throw new InvalidArgumentException(
                    field, field + " must be a DNS subdomain (lower case, digits, '-', '.'), got '" + name + "'");
        }
        return name;
    }

    private static void labelEntry(String field, String key, String value) {
        if (!LabelSyntax.validKey(key)) {
            throw new InvalidArgumentException(field, field + " has a key Kubernetes refuses: '" + key + "'");
        }
        if (!LabelSyntax.validValue(value)) {
            throw new InvalidArgumentException(
                    field, field + " has a value Kubernetes refuses for key '" + key + "': '" + value + "'");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof KubernetesSettings s
                && image.equals(s.image)
                && pullPolicy == s.pullPolicy
                && agentImage.equals(s.agentImage)
                && pullSecrets.equals(s.pullSecrets)
                && Objects.equals(runtimeClassName, s.runtimeClassName)
                && cpuRequest == s.cpuRequest
                && cpuLimit == s.cpuLimit
                && memoryRequest == s.memoryRequest
                && memoryLimit == s.memoryLimit
                && nodeSelector.equals(s.nodeSelector)
                && tolerations.equals(s.tolerations)
                && labels.equals(s.labels)
                && annotations.equals(s.annotations)
                && capabilities.equals(s.capabilities);
    }

    @Override
    public int hashCode() {
        return Objects.hash(image, pullPolicy, agentImage, runtimeClassName, memoryLimit, cpuLimit);
    }

    @Override
    public String toString() {
        return "KubernetesSettings{image=" + image + ", pullPolicy=" + pullPolicy + ", agentImage=" + agentImage
                + ", runtimeClassName=" + runtimeClassName + ", cpu=" + cpuRequest + "/" + cpuLimit + ", memory="
                + memoryRequest + "/" + memoryLimit + ", nodeSelector=" + nodeSelector + ", tolerations="
                + tolerations.size() + ", capabilities=" + capabilities + "}";
    }
}
