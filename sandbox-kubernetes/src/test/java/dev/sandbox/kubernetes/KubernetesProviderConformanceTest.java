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

    @BeforeAll
    void start() {
        support = new KubernetesTestSupport();
        provider = KubernetesTestSupport.provider();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    @Override
    public SandboxProvider provider() {
        return provider;
    }

    @Override
    public SessionOptions sessionOptions() {
        return support.sessionOptions();
    }
}
