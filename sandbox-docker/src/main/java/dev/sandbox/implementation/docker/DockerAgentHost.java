package dev.sandbox.implementation.docker;

import dev.sandbox.SessionTerminatedException;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.implementation.agent.AgentTransport;
import dev.sandbox.implementation.agentsession.AgentHost;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;

/**
 * A session container as its {@link dev.sandbox.implementation.agentsession.SessionAgent} sees it: each connection
 * over the session's direct channel where it has one ({@link AgentChannels}, {@link DirectAgentTransport}), else one
 * daemon exec of the relay ({@link DockerAgentTransport}); and one inspect of the container for its working directory
 * or its end.
 */
final class DockerAgentHost implements AgentHost {
    private static final Logger LOG = LoggerFactory.getLogger(DockerAgentHost.class);

    /** How long a direct connection waits for its first bytes before it looks whether the container is paused. */
    private static final Duration PAUSED_CHECK = Duration.ofSeconds(1);

    private final DockerControl control;
    private final DockerDataPlane data;
    private final AgentChannels channels;
    private final String sessionId;
    private final String containerId;
    private final String runtime;
    /** How the last connection went: {@link DockerSandboxProvider#PROCESS_LAUNCHER_DIRECT} or the relay's. */
    private volatile String path = DockerSandboxProvider.PROCESS_LAUNCHER_RELAY;

    DockerAgentHost(
            DockerControl control,
            DockerDataPlane data,
            AgentChannels channels,
            String sessionId,
            String containerId,
            String runtime) {
        this.control = control;
        this.data = data;
        this.channels = channels;
        this.sessionId = sessionId;
        this.containerId = containerId;
        this.runtime = runtime == null || runtime.isEmpty() ? "runc" : runtime;
    }

    /**
     * How the session's agent was last reached.
     *
     * @return {@link DockerSandboxProvider#PROCESS_LAUNCHER_DIRECT} or {@link
     *     DockerSandboxProvider#PROCESS_LAUNCHER_RELAY}
     */
    String path() {
        return path;
    }

    @Override
    public AgentTransport transport() {
        AgentTransport relay = new DockerAgentTransport(control, data, sessionId, containerId);
        if (!channels.enabled()) {
            return relay;
        }
        return outbound -> Mono.fromCallable(
                        () -> new Route(channels.socket(sessionId, runtime), channels.offered(sessionId)))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(route -> route.socket() == null
                        ? Mono.just(route)
                        : data.connectAgent(route.socket()).map(route::with).onErrorResume(e -> {
                            LOG.debug(
                                    "the direct channel of session {} does not answer ({}); using the relay",
                                    sessionId,
                                    e.toString());
                            return Mono.just(route);
                        }))
                .flatMapMany(route -> {
                    if (route.connection() != null) {
                        path = DockerSandboxProvider.PROCESS_LAUNCHER_DIRECT;
                        // a paused container's socket accepts (the kernel queues the connection) but nothing answers:
                        // say so as the relay's exec does, instead of a HELLO that times out
                        return DirectAgentTransport.open(route.connection(), outbound, sessionId)
                                .timeout(pausedAfter(PAUSED_CHECK), first -> Mono.never())
                                .onErrorMap(
                                        TimeoutException.class,
                                        e -> DockerErrors.paused(
                                                sessionId, "its agent cannot answer until it is unpaused", e));
                    }
                    path = DockerSandboxProvider.PROCESS_LAUNCHER_RELAY;
                    if (!route.offered()) {
                        return relay.open(outbound);
                    }
                    // the relay answering while the channel did not says the runtime or daemon keeps it from us
                    AtomicBoolean answered = new AtomicBoolean();
                    return relay.open(outbound).doOnNext(first -> {
                        if (!answered.getAndSet(true)) {
                            channels.missed(runtime);
                        }
                    });
                });
    }

    /** Emits when the container is paused {@code after} the connection was made; never otherwise. */
    private Mono<Long> pausedAfter(Duration after) {
        return Mono.delay(after)
                .flatMap(t -> Mono.fromCallable(() -> {
                            var c = control.inspectContainer(containerId);
                            return c != null
                                    && c.getState() != null
                                    && Boolean.TRUE.equals(c.getState().getPaused());
                        })
                        .subscribeOn(Schedulers.boundedElastic()))
                .flatMap(paused -> paused ? Mono.just(1L) : Mono.never());
    }

    /**
     * How one connection goes: the channel's socket (or {@code null}), whether the session was given a channel, and
     * the connection made to the socket.
     */
    private record Route(Path socket, boolean offered, Connection connection) {
        Route(Path socket, boolean offered) {
            this(socket, offered, null);
        }

        Route with(Connection c) {
            return new Route(socket, offered, c);
        }
    }

    @Override
    public String workdir() {
        var c = control.inspectContainer(containerId);
        if (c == null) {
            throw new SessionTerminatedException(sessionId, "its container no longer exists");
        }
        String workdir = c.getConfig() == null ? null : c.getConfig().getWorkingDir();
        return workdir == null || workdir.isEmpty() ? "/" : workdir;
    }

    @Override
    public String endCause() {
        var c = control.inspectContainer(containerId);
        if (c == null) {
            return "its container no longer exists";
        }
        if (c.getState() == null || !Boolean.TRUE.equals(c.getState().getRunning())) {
            return ContainerDeath.describe(c);
        }
        return null;
    }
}
