package dev.sandbox.local;

import dev.sandbox.SandboxProvider;
import dev.sandbox.implementation.process.ProcessLauncher;
import dev.sandbox.tck.SandboxProviderConformance;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** The conformance kit on the local provider with the portable java.lang.Process launcher. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JdkLauncherConformanceTest implements SandboxProviderConformance {
    private LocalSandboxProvider provider;

    @BeforeAll
    void start() {
        provider = LocalSandboxProvider.create(ProcessLauncher.jdk(), Path.of(System.getProperty("java.io.tmpdir")));
    }

    @AfterAll
    void stop() {
        provider.close();
    }

    @Override
    public boolean supportsPty() {
        return false; // java.lang.Process has no pseudo-terminal
    }

    @Override
    public SandboxProvider provider() {
        return provider;
    }

    /** The local provider pauses with {@code SIGSTOP} of the session's marked processes. */
    @Override
    public boolean supportsPause() {
        return true;
    }
}
