package dev.sandbox.docker;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.tck.SandboxProviderConformance;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** The conformance kit on the Docker provider with the default runtime (runc). */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerProviderConformanceTest implements SandboxProviderConformance {
    private DockerTestSupport support;
    private DockerSandboxProvider provider;
    private DockerSandboxProvider second;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        provider = DockerSandboxProvider.create(DockerTestSupport.settings());
        second = DockerSandboxProvider.create(DockerTestSupport.settings());
    }

    @AfterAll
    void stop() {
        second.close();
        support.finish(provider);
    }

    @Override
    public boolean supportsEgress() {
        return true;
    }

    @Override
    public SandboxProvider provider() {
        return provider;
    }

    @Override
    public Optional<SandboxProvider> secondProvider() {
        return Optional.of(second);
    }

    /** Docker pauses with the cgroup freezer ({@code docker pause}). */
    @Override
    public boolean supportsPause() {
        return true;
    }

    @Override
    public SessionOptions sessionOptions() {
        return support.sessionOptions();
    }
}
