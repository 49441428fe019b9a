package dev.sandbox.server.implementation;

import dev.sandbox.implementation.wire.NetworkBodies;
import dev.sandbox.implementation.wire.RequestBodies;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * A session's network: its egress policy, read and replaced, and its proxy's report. The proxy runs here, with the
 * server's provider; names are resolved by this host.
 */
final class NetworkRoutes extends Routes {
    /**
     * The routes of a session's network.
     *
     * @param state what the routes share
     */
    NetworkRoutes(State state) {
        super(state);
    }

    @Override
    void register(HttpServerRoutes routes) {
        routes.get("/v1/sessions/{id}/network", guard(false, this::policy));
        routes.put("/v1/sessions/{id}/network", guard(false, this::update));
        routes.get("/v1/sessions/{id}/network/report", guard(false, this::report));
    }

    private Mono<Void> policy(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> s.network().policy())
                .flatMap(p -> Http.json(res, 200, NetworkBodies.PolicyBody.of(p)));
    }

    private Mono<Void> update(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .map(n -> RequestBodies.read(n, NetworkBodies.PolicyBody.class).policy())
                .flatMap(p -> withSession(req, s -> s.network().update(p).thenReturn(p)))
                .then(Http.noContent(res));
    }

    private Mono<Void> report(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> s.network().report())
                .flatMap(r -> Http.json(res, 200, NetworkBodies.ReportBody.of(r)));
    }
}
