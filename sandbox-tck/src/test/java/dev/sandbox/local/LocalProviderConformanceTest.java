package dev.sandbox.local;

import dev.sandbox.SandboxProvider;
import dev.sandbox.tck.SandboxProviderConformance;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** The conformance kit on the local provider with the native (epoll) launcher. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocalProviderConformanceTest implements SandboxProviderConformance {
    private LocalSandboxProvider provider;

    @BeforeAll
    void start() {
        provider = LocalSandboxProvider.create();
    }

    @AfterAll
    void stop() {
        provider.close();
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
