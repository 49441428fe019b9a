package dev.sandbox.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.InvalidArgumentException;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.File;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Creates that cannot succeed, on the real cluster, each failing typed and leaving nothing: an image no daemon has
 * (pull policy NEVER), an agent image no daemon has, a namespace whose ResourceQuota allows no pod, a namespace where
 * the provider's account has no Role. The Docker provider's equivalent is DockerRetryAndCloseTest's absent image.
 */
@RequiresKubernetes
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesCreateFailuresTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The create timeout of this class's provider: an image problem must be told well before it. */
    private static final Duration CREATE_TIMEOUT = Duration.ofSeconds(30);
    /** scripts/kube-up.sh: the provider's Role is bound here, and a ResourceQuota allows 0 pods. */
    private static final String QUOTA_NAMESPACE = "sandbox-test-quota";
    /** scripts/kube-up.sh: the provider's account has no Role here. */
    private static final String DENIED_NAMESPACE = "sandbox-test-denied";

    private static final String ADMIN_KUBECONFIG = "/tmp/dev-sandbox-kube/admin.kubeconfig";

    private KubernetesTestSupport support;
    private KubernetesSandboxProvider provider;

    @BeforeAll
    void start() {
        KubernetesTestSupport.loadAgentImage();
        support = new KubernetesTestSupport();
        provider = KubernetesSandboxProvider.builder()
                .settings(KubernetesTestSupport.settings())
                .createTimeout(CREATE_TIMEOUT)
                .build();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    /** Every pod of this run in a namespace, deleting or not (a pod being deleted is still there). */
    private List<Pod> podsOfRun(KubernetesClient client, String namespace) {
        return client.pods()
                .inNamespace(namespace)
                .withLabel("labels.dev.sandbox/" + KubernetesTestSupport.RUN_LABEL, support.runId)
                .list()
                .getItems();
    }

    /** Waits (bounded) until no pod of this run is left in the namespace, deletions included. */
    private void assertNoPodOfTheRun(KubernetesClient client, String namespace) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        List<Pod> left = podsOfRun(client, namespace);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(200);
            left = podsOfRun(client, namespace);
        }
        assertThat(left.stream().map(p -> p.getMetadata().getName()))
                .as("pods of the run left in %s", namespace)
                .isEmpty();
    }

    private void assertImageRefused(KubernetesSettings settings, String field, String image) throws Exception {
        long t0 = System.nanoTime();
        assertThatThrownBy(() ->
                        provider.create(support.sessionOptions(), settings).block(WAIT))
                .isInstanceOfSatisfying(InvalidArgumentException.class, e -> {
                    assertThat(e.field()).isEqualTo(field);
                    assertThat(e.isRetryable()).isFalse();
                })
                .hasMessageContaining(image)
                .hasMessageContaining("ErrImageNeverPull");
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        System.out.println("measured: " + field + " '" + image + "' refused after (ms): " + took.toMillis());
        assertThat(took).as("told before the create timeout").isLessThan(CREATE_TIMEOUT);
        assertNoPodOfTheRun(support.client, support.namespace);
    }

    @Test
    void anImageNoDaemonHasFailsTheCreateNamingTheImageAndLeavesNoPod() throws Exception {
        String image = "sandbox-test:no-daemon-has-this-" + support.runId.substring(0, 8);
        assertImageRefused(KubernetesTestSupport.settings().withImage(image), "image", image);
    }

    @Test
    void anAgentImageNoDaemonHasFailsTheCreateNamingTheAgentImageAndLeavesNoPod() throws Exception {
        String image = "dev.sandbox/sandbox-agent:no-such-version-" + support.runId.substring(0, 8);
        assertImageRefused(KubernetesTestSupport.settings().withAgentImage(image), "agentImage", image);
    }

    @Test
    void aFullQuotaFailsTheCreateRetryablyAndLeavesNoPod() throws Exception {
        try (KubernetesSandboxProvider quota = KubernetesSandboxProvider.builder()
                .namespace(QUOTA_NAMESPACE)
                .settings(KubernetesTestSupport.settings())
                .createTimeout(CREATE_TIMEOUT)
                .build()) {
            assertThatThrownBy(() -> quota.create(support.sessionOptions()).block(WAIT))
                    .isInstanceOfSatisfying(KubernetesQuotaExceededException.class, e -> {
                        assertThat(e.isRetryable()).isTrue();
                        assertThat(e.namespace()).isEqualTo(QUOTA_NAMESPACE);
                    })
                    .hasMessageContaining(QUOTA_NAMESPACE)
                    .hasMessageContaining("pods=");
            assertNoPodOfTheRun(support.client, QUOTA_NAMESPACE);
        }
    }

    /**
     * Building the provider is where an account without the Role fails: the provider watches its namespace's session
     * pods from the start (every session's end is read from that watch), so an account that may not list pods
     * there cannot have a working provider, and failing at once beats failing on the first create with nothing made.
     */
    @Test
    void anAccountWithoutTheRoleFailsToBuildTheProviderNamingVerbResourceAndNamespace() throws Exception {
        assertThatThrownBy(() -> KubernetesSandboxProvider.builder()
                        .namespace(DENIED_NAMESPACE)
                        .settings(KubernetesTestSupport.settings())
                        .build()
                        .close())
                .isInstanceOfSatisfying(KubernetesForbiddenException.class, e -> {
                    assertThat(e.verb()).isEqualTo("list");
                    assertThat(e.resource()).isEqualTo("pods");
                    assertThat(e.namespace()).isEqualTo(DENIED_NAMESPACE);
                    assertThat(e.isRetryable()).isFalse();
                })
                .hasMessageContaining("list")
                .hasMessageContaining("pods")
                .hasMessageContaining(DENIED_NAMESPACE);
        // looked at as the administrator: the provider's account may not even list there
        try (KubernetesClient admin = new KubernetesClientBuilder()
                .withConfig(Config.fromKubeconfig(null, new File(ADMIN_KUBECONFIG)))
                .build()) {
            assertNoPodOfTheRun(admin, DENIED_NAMESPACE);
            assertThat(admin.leases().inNamespace(DENIED_NAMESPACE).list().getItems())
                    .as("leases in %s", DENIED_NAMESPACE)
                    .isEmpty();
        }
    }
}
