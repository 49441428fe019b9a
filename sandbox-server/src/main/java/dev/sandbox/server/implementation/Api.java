package dev.sandbox.server.implementation;

import dev.sandbox.implementation.Version;
import dev.sandbox.implementation.wire.NetworkBodies;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import io.netty.buffer.Unpooled;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The {@code /v1/} routes, assembled: the server's own ({@code ping}, the extra endpoints, and a JSON 404 for
 * anything else) and each resource's ({@link SessionRoutes}, {@link ExecRoutes}, {@link ProcessRoutes}, {@link
 * FileRoutes}, {@link WatchRoutes}, {@link PtyRoutes}, {@link PortRoutes}, {@link NetworkRoutes}, {@link StatsRoutes}), which share the guard and the reading of a request through
 * {@link Routes}. Adding a route is one line in its resource's {@code register}.
 */
public final class Api {
    private static final Logger LOG = LoggerFactory.getLogger(Api.class);

    private final Routes.State state;
    private final List<Routes> resources;
    private Map<String, dev.sandbox.server.ServerEndpoint> endpoints = Map.of();

    /**
     * Creates the routes' state.
     *
     * @param config the settings
     * @param sessions the sessions
     * @param connections the connections' guard, told which connections presented a valid token
     */
    public Api(ServerConfig config, Sessions sessions, ConnectionGuard connections) {
        // bindings made now, on the starting thread: made on first use, they take a lock an event loop would park on
        RequestBodies.prepare();
        NetworkBodies.prepare();
        this.state = new Routes.State(config, sessions, connections);
        this.resources = List.of(
                new SessionRoutes(state),
                new ExecRoutes(state),
                new ProcessRoutes(state),
                new FileRoutes(state),
                new WatchRoutes(state),
                new StatsRoutes(state),
                new PtyRoutes(state),
                new PortRoutes(state),
                new NetworkRoutes(state),
                new ChannelRoutes(state));
    }

    /**
     * The tenants, one per token.
     *
     * @return the tenants
     */
    public List<Tenant> tenants() {
        return state.auth.tenants();
    }

    /**
     * Sets the extra endpoints, by the path each is mounted under; call before {@link #register}.
     *
     * @param endpoints the endpoints
     */
    public void mount(Map<String, dev.sandbox.server.ServerEndpoint> endpoints) {
        this.endpoints = Map.copyOf(endpoints);
    }

    /** Tells every extra endpoint that the server is stopping (after {@link #drain()}); an endpoint's failure is logged. */
    public void stopEndpoints() {
        endpoints.forEach((path, endpoint) -> {
            try {
                endpoint.stop();
            } catch (RuntimeException e) {
                LOG.warn("the endpoint at {} failed to stop", path, e);
            }
        });
    }

    /** From now on every request is answered 503: the server is shutting down. */
    public void drain() {
        state.drain();
    }

    /**
     * The streaming execs.
     *
     * @return the registry
     */
    public ExecRegistry execs() {
        return state.execs;
    }

    /**
     * The sessions.
     *
     * @return the registry
     */
    public Sessions sessions() {
        return state.sessions;
    }

    /**
     * Registers every route.
     *
     * @param routes reactor-netty's routes
     */
    public void register(HttpServerRoutes routes) {
        routes.get("/v1/ping", state.guard(false, this::ping));
        for (Routes resource : resources) {
            resource.register(routes);
        }
        endpoints.forEach((path, endpoint) -> routes.route(
                req -> {
                    String p = req.fullPath();
                    return p.equals(path) || p.startsWith(path + "/");
                },
                state.guard(false, (req, res) -> serveEndpoint(endpoint, req, res))));
        routes.route(req -> true, state.guard(false, this::notFound));
    }

    private Mono<Void> ping(HttpServerRequest req, HttpServerResponse res) {
        return Http.json(
                res,
                200,
                new ResourceBodies.ServerStatusBody(
                        state.draining() ? "stopping" : "ok",
                        Version.get(),
                        (System.nanoTime() - state.startedNanos) / 1_000_000,
                        Instant.ofEpochMilli(state.lastActivityMillis.get()),
                        state.limit.running(),
                        state.ptys.running(),
                        state.ptys.attached(),
                        state.sessions.ownedCount(),
                        state.sessions.provider().name(),
                        state.channelsOpen.get(),
                        state.channelCommands.sum()));
    }

    /** Hands a request to an extra endpoint and writes its answer, each body chunk flushed as it comes. */
    private Mono<Void> serveEndpoint(
            dev.sandbox.server.ServerEndpoint endpoint, HttpServerRequest req, HttpServerResponse res) {
        return Routes.tenant(t -> {
            Map<String, List<String>> headers = new LinkedHashMap<>();
            req.requestHeaders()
                    .forEach(h -> headers.computeIfAbsent(
                                    h.getKey().toLowerCase(java.util.Locale.ROOT), k -> new java.util.ArrayList<>())
                            .add(h.getValue()));
            headers.replaceAll((k, v) -> List.copyOf(v));
            var request = new dev.sandbox.server.ServerEndpoint.Request(
                    req.method().name(),
                    req.fullPath(),
                    headers,
                    t.name(),
                    Http.bytes(req, state.config.maxJsonBytes()));
            return Mono.defer(() -> endpoint.handle(request)).flatMap(answer -> {
                res.status(answer.status());
                answer.headers().forEach(res::header);
                return res.send(answer.body().map(Unpooled::wrappedBuffer), b -> true)
                        .then();
            });
        });
    }

    private Mono<Void> notFound(HttpServerRequest req, HttpServerResponse res) {
        return Mono.error(new HttpError(404, "RouteNotFound", "no route for " + req.method() + " " + req.fullPath()));
    }
}
