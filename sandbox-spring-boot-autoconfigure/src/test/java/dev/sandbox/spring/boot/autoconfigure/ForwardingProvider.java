package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A decorator that passes everything on, for tests to override one method of. */
class ForwardingProvider implements SandboxProvider {
    final SandboxProvider delegate;

    ForwardingProvider(SandboxProvider delegate) {
        this.delegate = delegate;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public Mono<SandboxSession> create(SessionOptions options) {
        return delegate.create(options);
    }

    @Override
    public Mono<SandboxSession> attach(String sessionId) {
        return delegate.attach(sessionId);
    }

    @Override
    public Flux<SessionInfo> list(Map<String, String> labels) {
        return delegate.list(labels);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public Mono<Void> closeAsync() {
        return delegate.closeAsync();
    }
}
