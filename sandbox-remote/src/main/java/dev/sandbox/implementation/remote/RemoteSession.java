package dev.sandbox.implementation.remote;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.BackgroundOptions;
import dev.sandbox.BackgroundProcess;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.ProcessInfo;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxNetwork;
import dev.sandbox.SandboxPorts;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionClosedException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionStatus;
import dev.sandbox.implementation.ports.PortForwards;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.handler.codec.http.HttpMethod;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A handle to a session on a sandbox server. */
public final class RemoteSession implements SandboxSession {
    /** The provider name remote sessions report. */
    public static final String PROVIDER = "remote";

    private final RemoteTransport t;
    private final String id;
    private final Map<String, String> labels;
    private volatile String name;
    private final String path;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean destroyed = new AtomicBoolean();
    private final RemoteFiles files;
    private final PortForwards forwards;
    private final SandboxPorts ports;
    private final SandboxNetwork network;
    private final Leases leases;

    /**
     * Creates a handle.
     *
     * @param t the transport
     * @param id the session's id
     * @param labels its labels
     */
    public RemoteSession(RemoteTransport t, String id, Map<String, String> labels) {
        this(t, id, labels, null);
    }

    private RemoteSession(RemoteTransport t, String id, Map<String, String> labels, Leases leases) {
        this.leases = leases;
        this.t = t;
        this.id = id;
        this.labels = Map.copyOf(labels);
        this.path = "/v1/sessions/" + RemoteTransport.enc(id);
        this.files = new RemoteFiles(t, path, this::checkOpen);
        this.forwards = new PortForwards("session " + id + " at " + t.baseUrl(), new RemotePorts(t, path));
        this.ports = forwards.view(this, this::checkOpen);
        this.network = new RemoteNetwork(t, path, this::checkOpen);
    }

    /**
     * A handle from the server's answer to a create or an attach ({@code {"id","provider","labels"}}).
     *
     * @param t the transport
     * @param answer the answer
     * @return the handle
     */
    public static RemoteSession of(RemoteTransport t, JsonNode answer) {
        return of(t, answer, null);
    }

    /**
     * A handle from the server's answer to a create or an attach; when the server leased the session (the answer
     * has {@code leaseMs}), the handle's lease is renewed until it is closed or the session destroyed.
     *
     * @param t the transport
     * @param answer the answer
     * @param leases the provider's lease renewer, or {@code null}
     * @return the handle
     */
    public static RemoteSession of(RemoteTransport t, JsonNode answer, Leases leases) {
        ResourceBodies.SessionInfoBody body = ResourceBodies.read(answer, ResourceBodies.SessionInfoBody.class);
        RemoteSession s = new RemoteSession(t, body.id() == null ? "" : body.id(), body.labels(), leases);
        s.name = body.name();
        if (leases != null && body.leaseMs() != null) {
            leases.hold(s.id, body.leaseMs());
        }
        return s;
    }

    /** Fails when this handle was closed or its session destroyed through it. */
    void checkOpen() {
        if (destroyed.get()) {
            throw new SessionClosedException(id, SessionEndReason.DESTROYED);
        }
        if (closed.get()) {
            throw new SessionClosedException(id, SessionEndReason.HANDLE_CLOSED);
        }
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public Map<String, String> labels() {
        return labels;
    }

    @Override
    public java.util.Optional<String> name() {
        return java.util.Optional.ofNullable(name);
    }

    @Override
    public Flux<ExecEvent> exec(ExecOptions options) {
        return Flux.defer(() -> {
            checkOpen();
            options.validate();
            return RemoteStreams.exec(t, id, path, options);
        });
    }

    @Override
    public Mono<ExecResult> run(ExecOptions options) {
        return Mono.defer(() -> {
            checkOpen();
            options.validate();
            String stdinId = options.stdin().isPresent() ? RemoteTransport.newId() : null;
            RequestBodies.ExecBody body = RequestBodies.ExecBody.of(options, stdinId);
            Disposable[] upload = new Disposable[1];
            RemoteChannel channel = t.channel();
            Mono<JsonNode> answer = channel == null
                    ? t.runCall(HttpMethod.POST, path + "/run", body)
                    : channel.run(id, WireJson.bytes(body))
                            .retryWhen(t.busyRetry())
                            .onErrorResume(
                                    RemoteChannel.Refused.class, e -> t.runCall(HttpMethod.POST, path + "/run", body))
                            .onErrorMap(t::transportError);
            return answer.map(ResourceBodies::execResult)
                    .switchIfEmpty(Mono.error(() -> RemoteErrors.protocol("the server sent no result for run")))
                    .doOnSubscribe(s -> {
                        if (stdinId != null) {
                            upload[0] = RemoteStreams.uploadStdin(
                                    t, path, stdinId, options.stdin().get());
                        }
                    })
                    .doFinally(s -> {
                        if (upload[0] != null) {
                            upload[0].dispose();
                        }
                    });
        });
    }

    @Override
    public Mono<BackgroundProcess> start(ExecOptions options, BackgroundOptions background) {
        return Mono.defer(() -> {
            checkOpen();
            options.validate();
            background.validate();
            String stdinId = options.stdin().isPresent() ? RemoteTransport.newId() : null;
            RequestBodies.ExecBody body =
                    RequestBodies.ExecBody.of(options, stdinId).withBackground(background);
            return t.call(HttpMethod.POST, path + "/processes", body)
                    .map(this::process)
                    .doOnNext(p -> {
                        if (stdinId != null) {
                            // the process owns its stdin upload from now on; it ends with the publisher
                            RemoteStreams.uploadStdin(
                                    t, path, stdinId, options.stdin().get());
                        }
                    });
        });
    }

    private BackgroundProcess process(JsonNode n) {
        return new RemoteBackgroundProcess(
                t,
                this,
                path,
                ResourceBodies.read(n, ResourceBodies.ProcessInfoBody.class).info());
    }

    @Override
    public Flux<ProcessInfo> processes() {
        return Flux.defer(() -> {
            checkOpen();
            return t.call(HttpMethod.GET, path + "/processes", null)
                    .flatMapIterable(n -> ResourceBodies.read(n, ResourceBodies.ProcessList.class)
                            .processes())
                    .map(ResourceBodies.ProcessInfoBody::info);
        });
    }

    @Override
    public Flux<ProcessInfo> ptys() {
        return Flux.defer(() -> {
            checkOpen();
            return t.call(HttpMethod.GET, path + "/ptys", null)
                    .flatMapIterable(n -> ResourceBodies.read(n, ResourceBodies.ProcessList.class)
                            .processes())
                    .map(ResourceBodies.ProcessInfoBody::info);
        });
    }

    @Override
    public Mono<BackgroundProcess> process(String processId) {
        return Mono.defer(() -> {
            checkOpen();
            return t.call(HttpMethod.GET, path + "/processes/" + RemoteTransport.enc(processId), null)
                    .map(this::process);
        });
    }

    @Override
    public Mono<PtySession> pty(PtyOptions options) {
        return Mono.defer(() -> {
            checkOpen();
            options.toExecOptions(); // validates before anything is sent
            return t.call(HttpMethod.POST, path + "/ptys", RequestBodies.PtyBody.of(options))
                    .switchIfEmpty(Mono.error(() -> RemoteErrors.protocol("the server sent no PTY")))
                    .map(n -> new RemotePtySession(t, this, path, n));
        });
    }

    @Override
    public Mono<PtySession> attachPty(String ptyId) {
        return Mono.defer(() -> {
            checkOpen();
            return t.call(HttpMethod.GET, path + "/ptys/" + RemoteTransport.enc(ptyId), null)
                    .switchIfEmpty(Mono.error(() -> RemoteErrors.protocol("the server sent no PTY")))
                    .map(n -> new RemotePtySession(t, this, path, n));
        });
    }

    @Override
    public SandboxFiles files() {
        return files;
    }

    @Override
    public Mono<Void> setLifetime(Duration fromNow) {
        return Mono.defer(() -> {
            checkOpen();
            positive("lifetime", fromNow);
            return t.call(HttpMethod.PUT, path + "/lifetime", RequestBodies.DurationBody.of(fromNow))
                    .then();
        });
    }

    @Override
    public Mono<Void> pause() {
        return Mono.defer(() -> {
            checkOpen();
            return t.call(HttpMethod.POST, path + "/pause", null).then();
        });
    }

    @Override
    public Mono<Void> resume() {
        return Mono.defer(() -> {
            checkOpen();
            return t.call(HttpMethod.POST, path + "/resume", null).then();
        });
    }

    @Override
    public Mono<Void> setIdleTimeout(Duration idleTimeout) {
        return Mono.defer(() -> {
            checkOpen();
            positive("idleTimeout", idleTimeout);
            return t.call(HttpMethod.PUT, path + "/idle-timeout", RequestBodies.DurationBody.of(idleTimeout))
                    .then();
        });
    }

    private static void positive(String field, Duration d) {
        if (d == null || d.isZero() || d.isNegative()) {
            throw new InvalidArgumentException(field, field + " must be positive, got " + d);
        }
    }

    @Override
    public Mono<SessionStatus> ping() {
        return Mono.defer(() -> {
            checkOpen();
            return t.call(HttpMethod.GET, path + "/status", null)
                    .map(n -> ResourceBodies.read(n, ResourceBodies.SessionStatusBody.class)
                            .status(PROVIDER));
        });
    }

    @Override
    public Mono<Void> close() {
        return Mono.<Void>fromRunnable(() -> {
                    if (closed.compareAndSet(false, true) && leases != null) {
                        leases.release(id);
                    }
                })
                .then(forwards.closeAll());
    }

    @Override
    public SandboxPorts ports() {
        return ports;
    }

    /** The server's stats stream of the session; see {@link RemoteStats}. */
    @Override
    public Flux<dev.sandbox.SessionStats> stats(Duration interval) {
        return Flux.defer(() -> {
            checkOpen();
            dev.sandbox.implementation.stats.StatsStream.checkInterval(interval);
            return RemoteStats.stats(t, path, interval);
        });
    }

    @Override
    public SandboxNetwork network() {
        return network;
    }

    @Override
    public Mono<Void> destroy() {
        return Mono.defer(() -> {
            if (destroyed.get()) {
                return Mono.empty(); // idempotent
            }
            // a closed handle still destroys: the server ends the session by its id
            return t.call(HttpMethod.DELETE, path, null)
                    .then(Mono.fromRunnable(() -> {
                        destroyed.set(true);
                        closed.set(true);
                        if (leases != null) {
                            leases.forget(id);
                        }
                    }))
                    .then(forwards.closeAll());
        });
    }

    @Override
    public String toString() {
        return "RemoteSession{" + id + " at " + t.baseUrl() + "}";
    }
}
