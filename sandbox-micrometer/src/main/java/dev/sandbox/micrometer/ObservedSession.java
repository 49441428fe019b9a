package dev.sandbox.micrometer;

import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.ProcessInfo;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxNetwork;
import dev.sandbox.SandboxPorts;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionStatus;
import dev.sandbox.Wrapped;
import java.time.Duration;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A session whose operations are observed. It says what it wraps ({@link Wrapped}), so the sandbox server streams a
 * command's output with the wrapped session's own batching of lines; such a command is not observed as an {@code
 * exec} (every other operation, {@code run} included, is).
 */
final class ObservedSession implements SandboxSession, Wrapped<SandboxSession> {
    private final SandboxSession delegate;
    private final Instrumentation instrumentation;
    private final ObservedFiles files;

    ObservedSession(SandboxSession delegate, Instrumentation instrumentation) {
        this.delegate = delegate;
        this.instrumentation = instrumentation;
        this.files = new ObservedFiles(delegate.files(), delegate.id(), instrumentation);
    }

    @Override
    public SandboxSession unwrap() {
        return delegate;
    }

    @Override
    public String id() {
        return delegate.id();
    }

    @Override
    public java.util.Optional<String> name() {
        return delegate.name();
    }

    @Override
    public Map<String, String> labels() {
        return delegate.labels();
    }

    @Override
    public Flux<ExecEvent> exec(ExecOptions options) {
        return instrumentation.flux(
                SandboxObservationNames.EXEC, id(), () -> delegate.exec(options), instrumentation::execEvent);
    }

    @Override
    public Mono<ExecResult> run(ExecOptions options) {
        return instrumentation.mono(
                SandboxObservationNames.RUN, id(), () -> delegate.run(options), instrumentation::runResult);
    }

    @Override
    public Mono<BackgroundProcess> start(ExecOptions options) {
        return instrumentation.mono(
                SandboxObservationNames.START, id(), () -> delegate.start(options), (call, process) -> {});
    }

    @Override
    public Mono<BackgroundProcess> start(ExecOptions options, BackgroundOptions background) {
        return instrumentation.mono(
                SandboxObservationNames.START, id(), () -> delegate.start(options, background), (call, process) -> {});
    }

    @Override
    public Flux<ProcessInfo> processes() {
        return delegate.processes();
    }

    @Override
    public Mono<BackgroundProcess> process(String processId) {
        return delegate.process(processId);
    }

    @Override
    public Mono<PtySession> pty(PtyOptions options) {
        return delegate.pty(options);
    }

    @Override
    public Flux<ProcessInfo> ptys() {
        return delegate.ptys();
    }

    @Override
    public Mono<PtySession> attachPty(String ptyId) {
        return delegate.attachPty(ptyId);
    }

    @Override
    public SandboxFiles files() {
        return files;
    }

    @Override
    public SandboxPorts ports() {
        return delegate.ports();
    }

    @Override
    public SandboxNetwork network() {
        return delegate.network();
    }

    @Override
    public Flux<dev.sandbox.SessionStats> stats(Duration interval) {
        return delegate.stats(interval);
    }

    @Override
    public Mono<Void> setLifetime(Duration fromNow) {
        return delegate.setLifetime(fromNow);
    }

    @Override
    public Mono<Void> addLabels(Map<String, String> labels) {
        return delegate.addLabels(labels);
    }

    @Override
    public Mono<Void> pause() {
        return delegate.pause();
    }

    @Override
    public Mono<Void> resume() {
        return delegate.resume();
    }

    @Override
    public Mono<Void> setIdleTimeout(Duration idleTimeout) {
        return delegate.setIdleTimeout(idleTimeout);
    }

    @Override
    public Mono<SessionStatus> ping() {
        return delegate.ping();
    }

    @Override
    public Mono<Void> close() {
        return delegate.close();
    }

    @Override
    public Mono<Void> destroy() {
        return instrumentation.mono(SandboxObservationNames.DESTROY, id(), delegate::destroy, (call, nothing) -> {});
    }

    @Override
    public String toString() {
        return "observed " + delegate;
    }
}
