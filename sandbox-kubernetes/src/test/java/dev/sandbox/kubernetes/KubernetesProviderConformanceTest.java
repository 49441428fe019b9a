package dev.sandbox.kubernetes;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.tck.SandboxProviderConformance;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** The conformance kit on the Kubernetes provider, against the real test cluster. */
@RequiresKubernetes
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesProviderConformanceTest implements SandboxProviderConformance {
    private KubernetesTestSupport support;
    private KubernetesSandboxProvider provider;
    private KubernetesSandboxProvider second;

    @BeforeAll
    void start() {
        support = new KubernetesTestSupport();
        provider = KubernetesTestSupport.provider();
        second = KubernetesTestSupport.provider();
    }

    @AfterAll
    void stop() {
        second.close();
        support.finish(provider);
    }

    @Override
    public SandboxProvider provider() {
        return provider;
    }

    @Override
    public java.util.Optional<SandboxProvider> secondProvider() {
        return java.util.Optional.of(second);
    }

    @Override
    public SessionOptions sessionOptions() {
        return support.sessionOptions();
    }

    /** No resource stats: the provider says so with the typed error (README, "Resource stats"). */
    @Override
    public boolean supportsStats() {
        return false;
    }
}
