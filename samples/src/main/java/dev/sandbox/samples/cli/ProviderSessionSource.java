package dev.sandbox.samples.cli;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Sessions of a provider whose sessions outlive the CLI (Docker, remote): every command can use them, a later command
 * reaches a session by its id, and closing the source closes the provider.
 */
class ProviderSessionSource implements SessionSource {
    private final SandboxProvider provider;

    ProviderSessionSource(SandboxProvider provider) {
        this.provider = provider;
    }

    @Override
    public SandboxClient create(SessionOptions options, Duration wait) {
        return SandboxClient.builder().defaultTimeout(wait).create(provider, options);
    }

    @Override
    public SandboxClient createDetached(SessionOptions options, Duration wait) {
        SandboxSession session = provider.create(options).block(wait);
        return SandboxClient.builder().defaultTimeout(wait).attach(session);
    }

    @Override
    public SandboxClient attach(String sessionId, Duration wait) {
        return SandboxClient.builder().defaultTimeout(wait).attach(provider, sessionId);
    }

    @Override
    public Lease session(String sessionId, Duration wait) {
        if (sessionId != null) {
            SandboxSession session = provider.attach(sessionId).block(wait);
            return new Lease(session, () -> session.close().block(wait));
        }
        SandboxSession session = provider.create(SessionOptions.defaults().withUnlimitedLifetime())
                .block(wait);
        return new Lease(session, () -> session.destroy().block(wait));
    }

    @Override
    public String createSession(SessionOptions options, String fromSnapshot, Duration wait) {
        SandboxSession session = fromSnapshot == null
                ? provider.create(options).block(wait)
                : provider.restore(fromSnapshot, options).block(wait);
        session.close().block(wait);
        return session.id();
    }

    @Override
    public List<SessionInfo> list(Map<String, String> labels, Duration wait) {
        return provider.list(labels).collectList().block(wait);
    }

    @Override
    public void destroy(String sessionId, Duration wait) {
        provider.attach(sessionId).flatMap(SandboxSession::destroy).block(wait);
    }

    @Override
    public void close() {
        provider.close();
    }
}
