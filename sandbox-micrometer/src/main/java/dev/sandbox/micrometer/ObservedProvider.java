package dev.sandbox.micrometer;

import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A provider whose sessions are observed; {@link SandboxObservations} makes it. */
final class ObservedProvider implements SandboxProvider {
    final SandboxProvider delegate;
    private final Instrumentation instrumentation;

    ObservedProvider(SandboxProvider delegate, Instrumentation instrumentation) {
        this.delegate = delegate;
        this.instrumentation = instrumentation;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public Mono<SandboxSession> create(SessionOptions options) {
        return instrumentation
                .mono(
                        SandboxObservationNames.CREATE,
                        null,
                        () -> delegate.create(options),
                        (call, session) -> call.session(session.id()))
                .map(this::observed);
    }

    @Override
    public Mono<SandboxSession> attach(String sessionId) {
        return instrumentation
                .mono(
                        SandboxObservationNames.ATTACH,
                        sessionId,
                        () -> delegate.attach(sessionId),
                        (call, session) -> {})
                .map(this::observed);
    }

    @Override
    public Mono<SandboxSession> attachByName(String name) {
        // observed as an attach; the session id is known once found
        return instrumentation
                .mono(
                        SandboxObservationNames.ATTACH,
                        null,
                        () -> delegate.attachByName(name),
                        (call, session) -> call.session(session.id()))
                .map(this::observed);
    }

    @Override
    public Flux<SessionInfo> list(Map<String, String> labels) {
        return delegate.list(labels);
    }

    @Override
    public Mono<SandboxSession> restore(String snapshotRef, SessionOptions options) {
        return instrumentation
                .mono(
                        SandboxObservationNames.CREATE,
                        null,
                        () -> delegate.restore(snapshotRef, options),
                        (call, session) -> call.session(session.id()))
                .map(this::observed);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public Mono<Void> closeAsync() {
        return delegate.closeAsync();
    }

    private SandboxSession observed(SandboxSession session) {
        return session instanceof ObservedSession ? session : new ObservedSession(session, instrumentation);
    }

    @Override
    public String toString() {
        return "observed " + delegate;
    }
}
