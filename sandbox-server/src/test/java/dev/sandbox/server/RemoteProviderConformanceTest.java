package dev.sandbox.server;

import dev.sandbox.SandboxProvider;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import dev.sandbox.tck.SandboxProviderConformance;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** The provider conformance kit on the remote provider, through a real server on loopback over a local provider. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RemoteProviderConformanceTest implements SandboxProviderConformance {
    private static final char[] TOKEN = "conformance-token-0123456789".toCharArray();

    private LocalSandboxProvider local;
    private SandboxServer server;
    private RemoteSandboxProvider remote;
    private RemoteSandboxProvider second;

    @BeforeAll
    void start() {
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local).port(0).token(TOKEN).start();
        remote = RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(TOKEN)
                .build();
        second = RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(TOKEN)
                .build();
    }

    @AfterAll
    void stop() {
        remote.close();
        second.close();
        server.close();
        local.close();
    }

    @Override
    public boolean supportsPty() {
        return true;
    }

    @Override
    public java.util.Optional<SandboxProvider> secondProvider() {
        return java.util.Optional.of(second);
    }

    @Override
    public SandboxProvider provider() {
        return remote;
    }
}
