package dev.sandbox.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.InvalidArgumentException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The settings' defaults and their typed errors naming the field and the value. */
class KubernetesSettingsTest {

    @Test
    void theDefaultProfileIsDockers() {
        KubernetesSettings s = KubernetesSettings.of("python:3.12-slim");
        assertThat(s.memoryLimit()).isEqualTo(1L << 30);
        assertThat(s.cpuLimit()).isEqualTo(1.0);
        assertThat(s.capabilities())
                .containsExactlyInAnyOrder(
                        "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "SETUID", "SETGID", "KILL", "NET_BIND_SERVICE");
        assertThat(s.pullPolicy()).isEqualTo(KubernetesSettings.PullPolicy.IF_NOT_PRESENT);
        assertThat(s.agentImage()).startsWith("dev.sandbox/sandbox-agent:");
        assertThat(s.runtimeClassName()).isEmpty();
    }

    @Test
    void badValuesAreTypedErrorsNamingTheFieldAndTheValue() {
        KubernetesSettings s = KubernetesSettings.of("busybox");
        assertThatThrownBy(() -> KubernetesSettings.of(" "))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("image"));
        assertThatThrownBy(() -> s.withRuntimeClassName("Not_A_Name"))
                .isInstanceOfSatisfying(InvalidArgumentException.class, e -> {
                    assertThat(e.field()).isEqualTo("runtimeClassName");
                    assertThat(e.getMessage()).contains("Not_A_Name");
                });
        assertThatThrownBy(() -> s.withMemory(64L << 20, 1024))
                .isInstanceOfSatisfying(InvalidArgumentException.class, e -> {
                    assertThat(e.field()).isEqualTo("memoryLimit");
                    assertThat(e.getMessage()).contains("1024");
                });
        assertThatThrownBy(() -> s.withCpu(2, 1))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("cpuLimit"));
        assertThatThrownBy(() -> s.withLabels(Map.of("dev.sandbox/x", "y")))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("labels"));
        assertThatThrownBy(() -> s.withNodeSelector(Map.of("pool", "has space")))
                .isInstanceOfSatisfying(InvalidArgumentException.class, e -> {
                    assertThat(e.field()).isEqualTo("nodeSelector");
                    assertThat(e.getMessage()).contains("has space");
                });
        assertThatThrownBy(() -> s.withCapabilities(Set.of("cap_net_raw")))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("capabilities"));
        assertThatThrownBy(() -> s.withPullSecrets(List.of("UPPER")))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("pullSecrets"));
        assertThatThrownBy(() -> new KubernetesSettings.Toleration("k", "Sometimes", null, null))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("toleration.operator"));
        assertThatThrownBy(() -> KubernetesSandboxProvider.builder().namespace("Bad_Namespace"))
                .isInstanceOfSatisfying(InvalidArgumentException.class, e -> {
                    assertThat(e.field()).isEqualTo("namespace");
                    assertThat(e.getMessage()).contains("Bad_Namespace");
                });
        // nothing changed on the original
        assertThat(s).isEqualTo(KubernetesSettings.of("busybox"));
    }

    @Test
    void withMethodsReturnChangedCopies() {
        KubernetesSettings s = KubernetesSettings.of("busybox")
                .withMemory(64L << 20, 256L << 20)
                .withCpu(0.1, 0.5)
                .withRuntimeClassName("gvisor")
                .withNodeSelector(Map.of("pool", "sandboxes"))
                .withTolerations(List.of(new KubernetesSettings.Toleration("sandbox", "Exists", null, "NoSchedule")));
        assertThat(s.memoryRequest()).isEqualTo(64L << 20);
        assertThat(s.memoryLimit()).isEqualTo(256L << 20);
        assertThat(s.cpuRequest()).isEqualTo(0.1);
        assertThat(s.runtimeClassName()).contains("gvisor");
        assertThat(s.nodeSelector()).containsEntry("pool", "sandboxes");
        assertThat(s.tolerations()).hasSize(1);
        assertThat(s.withMemoryLimit(32L << 20).memoryRequest()).isEqualTo(32L << 20);
    }
}
