package dev.sandbox.implementation.kubernetes;

import dev.sandbox.kubernetes.KubernetesSettings;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Toleration;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The pod of a session: an init container from the agent image copies the static agent into an {@code emptyDir}; the
 * session container mounts it read-only at {@link #AGENT_DIR} and runs the agent as its process 1. Nothing in the
 * user's image is needed, not even a shell.
 */
final class PodSpecs {
    /** Where the agent is mounted in the session container. */
    static final String AGENT_DIR = "/.dev-sandbox";

    /** The agent in the session container. */
    static final String AGENT_PATH = AGENT_DIR + "/sandbox-agent";

    /** The session container's name. */
    static final String CONTAINER = "sandbox";

    /** The init container's name. */
    static final String INSTALL_CONTAINER = "dev-sandbox-agent";

    private static final String AGENT_VOLUME = "dev-sandbox-agent";

    private PodSpecs() {}

    /** What a session pod is made of beyond the provider's settings. */
    record Request(
            String name,
            String namespace,
            Map<String, String> labels,
            Map<String, String> annotations,
            Map<String, String> env,
            String workdir,
            long agentDeadlineMillis,
            long agentIdleMillis,
            Long activeDeadlineSeconds,
            OwnerReference owner) {}

    static Pod pod(KubernetesSettings settings, Request r) {
        Map<String, String> labels = new LinkedHashMap<>(settings.labels());
        labels.putAll(r.labels());
        Map<String, String> annotations = new LinkedHashMap<>(settings.annotations());
        annotations.putAll(r.annotations());

        List<String> agent = new ArrayList<>(List.of(
                AGENT_PATH,
                "init",
                "--deadline-ms",
                Long.toString(r.agentDeadlineMillis()),
                "--idle-ms",
                Long.toString(r.agentIdleMillis())));
        List<EnvVar> env = new ArrayList<>();
        r.env().forEach((k, v) -> env.add(new EnvVar(k, v, null)));

        Container session = new ContainerBuilder()
                .withName(CONTAINER)
                .withImage(settings.image())
                .withImagePullPolicy(settings.pullPolicy().kubernetesName())
                .withCommand(agent)
                .withEnv(env)
                .withWorkingDir(r.workdir())
                .withNewResources()
                .addToRequests("cpu", cpu(settings.cpuRequest()))
                .addToRequests("memory", new Quantity(Long.toString(settings.memoryRequest())))
                .addToLimits("cpu", cpu(settings.cpuLimit()))
                .addToLimits("memory", new Quantity(Long.toString(settings.memoryLimit())))
                .endResources()
                .withNewSecurityContext()
                .withAllowPrivilegeEscalation(false)
                .withPrivileged(false)
                .withNewCapabilities()
                .withDrop("ALL")
                .withAdd(new ArrayList<>(settings.capabilities()))
                .endCapabilities()
                .endSecurityContext()
                .addNewVolumeMount()
                .withName(AGENT_VOLUME)
                .withMountPath(AGENT_DIR)
                .withReadOnly(true)
                .endVolumeMount()
                .build();

        Container install = new ContainerBuilder()
                .withName(INSTALL_CONTAINER)
                .withImage(settings.agentImage())
                .withImagePullPolicy(settings.pullPolicy().kubernetesName())
                .withCommand("/sandbox-agent", "install", AGENT_DIR)
                .withNewResources()
                .addToRequests("cpu", new Quantity("10m"))
                .addToRequests("memory", new Quantity("16Mi"))
                .addToLimits("cpu", new Quantity("200m"))
                .addToLimits("memory", new Quantity("32Mi"))
                .endResources()
                .withNewSecurityContext()
                .withAllowPrivilegeEscalation(false)
                .withPrivileged(false)
                .withReadOnlyRootFilesystem(true)
                .withNewCapabilities()
                .withDrop("ALL")
                .endCapabilities()
                .endSecurityContext()
                .addNewVolumeMount()
                .withName(AGENT_VOLUME)
                .withMountPath(AGENT_DIR)
                .endVolumeMount()
                .build();

        List<Toleration> tolerations = new ArrayList<>();
        for (KubernetesSettings.Toleration t : settings.tolerations()) {
            tolerations.add(new Toleration(t.effect(), t.key(), t.operator(), null, t.value()));
        }
        List<LocalObjectReference> pullSecrets = new ArrayList<>();
        settings.pullSecrets().forEach(s -> pullSecrets.add(new LocalObjectReference(s)));

        PodBuilder b = new PodBuilder()
                .withNewMetadata()
                .withName(r.name())
                .withNamespace(r.namespace())
                .withLabels(labels)
                .withAnnotations(annotations)
                .endMetadata()
                .withNewSpec()
                .withRestartPolicy("Never")
                .withAutomountServiceAccountToken(false)
                .withEnableServiceLinks(false)
                .withTerminationGracePeriodSeconds(2L)
                .withActiveDeadlineSeconds(r.activeDeadlineSeconds())
                .withRuntimeClassName(settings.runtimeClassName().orElse(null))
                .withNodeSelector(settings.nodeSelector().isEmpty() ? null : settings.nodeSelector())
                .withTolerations(tolerations)
                .withImagePullSecrets(pullSecrets)
                .withNewSecurityContext()
                .withNewSeccompProfile()
                .withType("RuntimeDefault")
                .endSeccompProfile()
                .endSecurityContext()
                .addNewVolume()
                .withName(AGENT_VOLUME)
                .withNewEmptyDir()
                .withSizeLimit(new Quantity("16Mi"))
                .endEmptyDir()
                .endVolume()
                .withInitContainers(install)
                .withContainers(session)
                .endSpec();
        if (r.owner() != null) {
            b.editMetadata().withOwnerReferences(r.owner()).endMetadata();
        }
        return b.build();
    }

    private static Quantity cpu(double cpus) {
        long milli = Math.max(
                1, new BigDecimal(Double.toString(cpus)).movePointRight(3).longValue());
        return new Quantity(milli + "m");
    }
}
