package dev.sandbox.docker;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.tck.SandboxProviderConformance;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** The conformance kit on the Docker provider with the default runtime (runc). */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerProviderConformanceTest implements SandboxProviderConformance {
    private DockerTestSupport support;
    private DockerSandboxProvider provider;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        provider = DockerSandboxProvider.create(DockerTestSupport.settings());
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
