package dev.sandbox.implementation.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.kubernetes.KubernetesSettings;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The session pod as the API server receives it: the default profile, the agent's delivery, no token. */
class PodSpecsTest {

    private static Pod pod(KubernetesSettings settings) {
        return PodSpecs.pod(
                settings,
                new PodSpecs.Request(
                        "kube-0011223344556677",
                        "ns",
                        Map.of("dev.sandbox/session", "kube-0011223344556677"),
                        Map.of("dev.sandbox/labels", "{}"),
                        Map.of("GREETING", "hi"),
                        null,
                        0,
                        0,
                        86405L,
                        null));
    }

    @Test
    void theSessionContainerRunsTheAgentUnderTheDefaultProfile() {
        Pod pod = pod(KubernetesSettings.of("python:3.12-slim"));
        assertThat(pod.getSpec().getAutomountServiceAccountToken()).isFalse();
        assertThat(pod.getSpec().getEnableServiceLinks()).isFalse();
        assertThat(pod.getSpec().getRestartPolicy()).isEqualTo("Never");
        assertThat(pod.getSpec().getActiveDeadlineSeconds()).isEqualTo(86405L);
        assertThat(pod.getSpec().getSecurityContext().getSeccompProfile().getType())
                .isEqualTo("RuntimeDefault");

        Container c = pod.getSpec().getContainers().get(0);
        assertThat(c.getName()).isEqualTo("sandbox");
        assertThat(c.getCommand()).startsWith("/.dev-sandbox/sandbox-agent", "init");
        assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(c.getSecurityContext().getPrivileged()).isFalse();
        assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
        assertThat(c.getSecurityContext().getCapabilities().getAdd())
                .containsExactlyInAnyOrderElementsOf(KubernetesSettings.DEFAULT_CAPABILITIES);
        assertThat(c.getResources()
                        .getLimits()
                        .get("memory")
                        .getNumericalAmount()
                        .longValue())
                .isEqualTo(1L << 30);
        assertThat(c.getResources().getLimits().get("cpu").toString()).isEqualTo("1000m");
        assertThat(c.getEnv())
                .anyMatch(e -> e.getName().equals("GREETING") && e.getValue().equals("hi"));
        assertThat(c.getVolumeMounts())
                .anyMatch(m -> m.getMountPath().equals("/.dev-sandbox") && Boolean.TRUE.equals(m.getReadOnly()));

        Container init = pod.getSpec().getInitContainers().get(0);
        assertThat(init.getImage()).startsWith("dev.sandbox/sandbox-agent:");
        assertThat(init.getCommand()).containsExactly("/sandbox-agent", "install", "/.dev-sandbox");
        assertThat(init.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
        assertThat(init.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    }

    @Test
    void settingsReachThePod() {
        Pod pod = pod(KubernetesSettings.of("busybox")
                .withRuntimeClassName("gvisor")
                .withPullPolicy(KubernetesSettings.PullPolicy.NEVER)
                .withNodeSelector(Map.of("pool", "sandboxes"))
                .withLabels(Map.of("team", "search"))
                .withAnnotations(Map.of("owner", "me")));
        assertThat(pod.getSpec().getRuntimeClassName()).isEqualTo("gvisor");
        assertThat(pod.getSpec().getNodeSelector()).containsEntry("pool", "sandboxes");
        assertThat(pod.getMetadata().getLabels())
                .containsEntry("team", "search")
                .containsEntry("dev.sandbox/session", "kube-0011223344556677");
        assertThat(pod.getMetadata().getAnnotations()).containsEntry("owner", "me");
        assertThat(pod.getSpec().getContainers().get(0).getImagePullPolicy()).isEqualTo("Never");
    }
}
