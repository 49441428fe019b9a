package dev.sandbox.benchmarks;

import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import dev.sandbox.server.SandboxServer;
import java.time.Duration;

/**
 * A sandbox server on loopback over a local provider, with a remote client, and one session on each side: the
 * remote rows compare the same work through the server with the local provider directly.
 *
 * <pre>{@code
 * try (Loopback loopback = Loopback.start()) {
 *     loopback.remote().run(ExecOptions.of("true")).block();
 * }
 * }</pre>
 */
final class Loopback implements AutoCloseable {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final char[] TOKEN = "benchmark-token-0123456789abcdef".toCharArray();

    private final LocalSandboxProvider local;
    private final SandboxServer server;
    private final RemoteSandboxProvider client;
    private final SandboxSession localSession;
    private final SandboxSession remoteSession;

    private Loopback() {
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local).port(0).token(TOKEN).start();
        client = RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(TOKEN)
                .build();
        SessionOptions options = SessionOptions.defaults().withUnlimitedLifetime();
        localSession = local.create(options).block(TIMEOUT);
        remoteSession = client.create(options).block(TIMEOUT);
    }

    static Loopback start() {
        return new Loopback();
    }

    SandboxSession local() {
        return localSession;
    }

    SandboxSession remote() {
        return remoteSession;
    }

    @Override
    public void close() {
        try {
            remoteSession.destroy().block(TIMEOUT);
            localSession.destroy().block(TIMEOUT);
        } finally {
            client.close();
            server.close();
            local.close();
        }
    }
}
