package dev.sandbox.spring.boot.autoconfigure;

import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.WAIT;
import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.assertRefused;
import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.run;
import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.runner;
import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.kubernetes.KubernetesForbiddenException;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import dev.sandbox.kubernetes.KubernetesSettings;
import dev.sandbox.kubernetes.RequiresKubernetes;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The starter with {@code sandbox.provider=kubernetes} on the real cluster of {@code KUBECONFIG} (a service account
 * bound to the provider's Role in namespace sandbox-test), with the test image and the agent image loaded into the
 * node's Docker daemon: every {@code sandbox.kubernetes.*} property reaches the provider, and what the cluster makes of
 * them is read back from the pod and its lease with a plain fabric8 client.
 */
@RequiresKubernetes
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class KubernetesProviderAutoConfigurationTest {
    private static final String IMAGE = "sandbox-test:busybox";
    private static final String RUN_LABEL = "sandbox-test-run";

    private final String runId = UUID.randomUUID().toString();
    private KubernetesClient client;
    private String namespace;
    private String context;

    @BeforeAll
    void connect() {
        client = new KubernetesClientBuilder().build();
        namespace = client.getNamespace();
        context = client.getConfiguration().getCurrentContext().getName();
    }

    /** Closing the context destroyed the application's sessions: no pod of this run is left (any is removed). */
    @AfterAll
    void nothingIsLeft() {
        if (client == null) {
            return;
        }
        try {
            List<String> left = new ArrayList<>();
            for (Pod pod : client.pods()
                    .inNamespace(namespace)
                    .withLabel("labels.dev.sandbox/" + RUN_LABEL, runId)
                    .list()
                    .getItems()) {
                if (pod.getMetadata().getDeletionTimestamp() == null) {
                    left.add(pod.getMetadata().getName());
                    client.pods()
                            .inNamespace(namespace)
                            .resource(pod)
                            .withGracePeriod(0)
                            .delete();
                }
            }
            assertThat(left).as("pods the application left behind").isEmpty();
        } finally {
            client.close();
        }
    }

    private ApplicationContextRunner kubernetes() {
        return runner().withPropertyValues(
                        "sandbox.provider=kubernetes",
                        "sandbox.kubernetes.kubeconfig=" + System.getenv("KUBECONFIG"),
                        "sandbox.kubernetes.context=" + context,
                        "sandbox.kubernetes.namespace=" + namespace,
                        "sandbox.kubernetes.image=" + IMAGE,
                        "sandbox.kubernetes.pull-policy=never",
                        "sandbox.session.labels." + RUN_LABEL + "=" + runId);
    }

    @Test
    void the_properties_build_the_provider_and_reach_the_pod_and_its_lease() {
        kubernetes()
                .withPropertyValues(
                        "sandbox.kubernetes.agent-image=" + KubernetesSettings.defaultAgentImage(),
                        "sandbox.kubernetes.lease=20s",
                        "sandbox.kubernetes.max-lifetime=30m")
                .run(app -> {
                    assertThat(app).hasNotFailed();
                    KubernetesSandboxProvider provider = (KubernetesSandboxProvider)
                            app.getBean(ManagedSandboxProvider.class).delegate();
                    assertThat(provider.namespace()).isEqualTo(namespace);
                    assertThat(provider.settings().image()).isEqualTo(IMAGE);
                    assertThat(provider.settings().pullPolicy()).isEqualTo(KubernetesSettings.PullPolicy.NEVER);
                    assertThat(provider.settings().agentImage()).isEqualTo(KubernetesSettings.defaultAgentImage());
                    assertThat(provider.settings().runtimeClassName()).isEmpty();

                    Health health =
                            app.getBean(SandboxHealthIndicator.class).health().block(WAIT);
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails()).containsEntry("provider", "kubernetes");

                    try (SandboxClient session =
                            app.getBean(SandboxClientFactory.class).create()) {
                        assertThat(run(session, "echo hi")).isEqualTo("hi");
                        Pod pod = client.pods()
                                .inNamespace(namespace)
                                .withName(run(session, "hostname"))
                                .get();
                        assertThat(pod.getMetadata().getLabels())
                                .containsEntry("labels.dev.sandbox/" + RUN_LABEL, runId);
                        // max-lifetime is the pods' activeDeadlineSeconds (with the provider's grace)
                        assertThat(pod.getSpec().getActiveDeadlineSeconds())
                                .isEqualTo(30 * 60L + KubernetesSandboxProvider.LIFETIME_GRACE_SECONDS);
                        assertThat(pod.getSpec().getContainers().getFirst().getImagePullPolicy())
                                .isEqualTo("Never");
                        // a session without a chosen lifetime is owned by the provider's lease, of the bound length
                        OwnerReference owner = pod.getMetadata().getOwnerReferences().stream()
                                .filter(o -> "Lease".equals(o.getKind()))
                                .findFirst()
                                .orElseThrow(() -> new AssertionError("no lease owns " + pod.getMetadata()));
                        Lease lease = client.leases()
                                .inNamespace(namespace)
                                .withName(owner.getName())
                                .get();
                        assertThat(lease.getSpec().getLeaseDurationSeconds()).isEqualTo(20);
                    }
                });
    }

    @Test
    void the_runtime_class_reaches_the_pod_settings() {
        kubernetes()
                .withPropertyValues("sandbox.kubernetes.runtime-class-name=gvisor")
                .run(app -> {
                    assertThat(app).hasNotFailed();
                    KubernetesSandboxProvider provider = (KubernetesSandboxProvider)
                            app.getBean(ManagedSandboxProvider.class).delegate();
                    assertThat(provider.settings().runtimeClassName()).hasValue("gvisor");
                });
    }

    @Test
    void bad_kubernetes_settings_are_refused_at_startup_naming_the_property() {
        kubernetes()
                .withPropertyValues("sandbox.kubernetes.namespace=Team_A")
                .run(app -> assertRefused(app, "sandbox.kubernetes.namespace", "'Team_A'"));
        kubernetes()
                .withPropertyValues("sandbox.kubernetes.pull-policy=sometimes")
                .run(app -> assertRefused(app, "sandbox.kubernetes.pull-policy", "'sometimes'"));
        kubernetes()
                .withPropertyValues("sandbox.kubernetes.image=")
                .run(app -> assertRefused(app, "sandbox.kubernetes.image", "python:3.12-slim"));
        kubernetes()
                .withPropertyValues("sandbox.kubernetes.lease=1s")
                .run(app -> assertRefused(app, "sandbox.kubernetes.lease", "PT1S"));
        kubernetes()
                .withPropertyValues("sandbox.kubernetes.max-lifetime=10s")
                .run(app -> assertRefused(app, "sandbox.kubernetes.max-lifetime", "PT10S"));
        kubernetes()
                .withPropertyValues("sandbox.kubernetes.kubeconfig=/nonexistent/kubeconfig")
                .run(app -> assertRefused(app, "sandbox.kubernetes.kubeconfig", "/nonexistent/kubeconfig"));
        kubernetes()
                .withPropertyValues("sandbox.kubernetes.runtime-class-name=Not A Name")
                .run(app -> assertRefused(app, "sandbox.kubernetes.runtime-class-name", "'Not A Name'"));
    }

    @Test
    void a_namespace_the_account_may_not_use_stops_the_start_with_the_api_servers_refusal() {
        // the account has no Role in sandbox-test-denied (scripts/kube-up.sh)
        kubernetes()
                .withPropertyValues("sandbox.kubernetes.namespace=sandbox-test-denied")
                .run(app -> {
                    assertThat(app).hasFailed();
                    Throwable cause = app.getStartupFailure();
                    while (cause != null && !(cause instanceof KubernetesForbiddenException)) {
                        cause = cause.getCause();
                    }
                    assertThat(cause)
                            .as("KubernetesForbiddenException in %s", app.getStartupFailure())
                            .isNotNull();
                    KubernetesForbiddenException forbidden = (KubernetesForbiddenException) cause;
                    assertThat(forbidden.namespace()).isEqualTo("sandbox-test-denied");
                    assertThat(forbidden.resource()).isEqualTo("pods");
                    assertThat(forbidden.getMessage()).contains("forbids", "sandbox-test-denied");
                });
    }
}
