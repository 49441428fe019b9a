package dev.sandbox.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.SandboxPool;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Labels added to a running Kubernetes session, as a warm pool's claim adds them: on the pod (its JSON annotation, and
 * a pod label where the syntax allows), shown by this provider's {@code list} at once and by another provider's once
 * its watch sees the patch.
 */
@RequiresKubernetes
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesLabelsTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private KubernetesTestSupport support;
    private KubernetesSandboxProvider provider;
    private KubernetesSandboxProvider other;

    @BeforeAll
    void start() {
        KubernetesTestSupport.loadAgentImage();
        support = new KubernetesTestSupport();
        provider = KubernetesTestSupport.provider();
        other = KubernetesTestSupport.provider();
    }

    @AfterAll
    void stop() {
        other.close();
        support.finish(provider);
    }

    private List<String> ids(KubernetesSandboxProvider p, Map<String, String> labels) {
        return p.list(labels).map(SessionInfo::id).collectList().block(WAIT);
    }

    @Test
    void aClaimsLabelIsOnThePodAndFoundByThisAndAnotherProvider() throws InterruptedException {
        String id;
        try (SandboxPool pool = SandboxPool.builder(provider)
                .template(support.sessionOptions())
                .warm(1)
                .build()) {
            SandboxSession s =
                    pool.acquire(Claim.defaults().withLabel("tenant", "acme")).block(WAIT);
            id = s.id();
            Map<String, String> wanted = Map.of("tenant", "acme", KubernetesTestSupport.RUN_LABEL, support.runId);
            assertThat(s.labels()).containsAllEntriesOf(wanted);
            assertThat(ids(provider, wanted)).as("this provider, at once").containsExactly(id);
            assertThat(support.pod(id).getMetadata().getLabels()).containsEntry("labels.dev.sandbox/tenant", "acme");
            // another client sees it once its watch has the patch: a bounded wait
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (ids(other, wanted).isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(ids(other, wanted)).as("another provider").containsExactly(id);
            SandboxSession attached = other.attach(id).block(WAIT);
            assertThat(attached.labels()).containsEntry("tenant", "acme");
            attached.close().block(WAIT);

            assertThatThrownBy(() ->
                            s.addLabels(Map.of("dev.sandbox/session", "x")).block(WAIT))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("dev.sandbox/");
            s.destroy().block(WAIT);
        }
        assertThat(ids(provider, Map.of("tenant", "acme"))).doesNotContain(id);
    }
}
