package dev.sandbox.server.implementation;

import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.implementation.wire.RequestBodies;
import dev.sandbox.implementation.wire.ResourceBodies;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The sessions' routes: create, list, attach, destroy, status, lifetime, idle timeout, pause and resume, and lease
 * renewal.
 */
final class SessionRoutes extends Routes {
    /**
     * The routes of sessions.
     *
     * @param state what the routes share
     */
    SessionRoutes(State state) {
        super(state);
    }

    @Override
    void register(HttpServerRoutes routes) {
        routes.post("/v1/sessions", guard(false, this::createSession));
        routes.get("/v1/sessions", guard(false, this::listSessions));
        routes.post("/v1/leases", guard(false, this::renewLeases));
        routes.get("/v1/sessions/{id}", guard(false, this::getSession));
        routes.get("/v1/named-sessions/{name}", guard(false, this::getNamedSession));
        routes.delete("/v1/sessions/{id}", guard(false, this::destroySession));
        routes.get("/v1/sessions/{id}/status", guard(false, this::status));
        routes.put("/v1/sessions/{id}/lifetime", guard(false, this::setLifetime));
        routes.put("/v1/sessions/{id}/idle-timeout", guard(false, this::setIdleTimeout));
        routes.post("/v1/sessions/{id}/pause", guard(false, this::pause));
        routes.post("/v1/sessions/{id}/resume", guard(false, this::resume));
    }

    private Mono<Void> createSession(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .map(n -> RequestBodies.read(n, RequestBodies.SessionBody.class).options())
                .flatMap(this::create)
                .flatMap(s -> Http.json(res, 201, leasedJson(s)));
    }

    private Mono<SandboxSession> create(SessionOptions options) {
        return workdirs.check(options).flatMap(checked -> tenant(t -> sessions.create(checked, t)));
    }

    private Mono<Void> listSessions(HttpServerRequest req, HttpServerResponse res) {
        Map<String, String> labels = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> e : Http.params(req).entrySet()) {
            if (e.getKey().startsWith("label.") && !e.getValue().isEmpty()) {
                labels.put(e.getKey().substring("label.".length()), e.getValue().get(0));
            }
        }
        return tenant(t -> sessions.list(labels, t).collectList()).flatMap(list -> {
            return Http.json(res, 200, ResourceBodies.SessionList.of(list));
        });
    }

    /** A session's handle with its lease, if it has one. */
    private ResourceBodies.SessionInfoBody leasedJson(SandboxSession s) {
        return ResourceBodies.SessionInfoBody.leased(
                s.id(),
                sessions.provider().name(),
                Tenant.visible(s.labels()),
                sessions.leaseMs(s.id()),
                TenantNames.of(s.labels()));
    }

    private Mono<Void> renewLeases(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .map(n ->
                        RequestBodies.read(n, ResourceBodies.LeaseRenewal.class).ids())
                .flatMap(ids -> tenant(t -> sessions.renew(ids, t)))
                .flatMap(renewed -> Http.json(
                        res,
                        200,
                        new ResourceBodies.LeaseAnswer(renewed, sessions.lease().toMillis())));
    }

    private Mono<Void> getSession(HttpServerRequest req, HttpServerResponse res) {
        String id = param(req, "id");
        return tenant(t -> sessions.attach(id, t)).flatMap(s -> Http.json(res, 200, leasedJson(s)));
    }

    private Mono<Void> getNamedSession(HttpServerRequest req, HttpServerResponse res) {
        String name = param(req, "name");
        return tenant(t -> sessions.attachByName(name, t)).flatMap(s -> Http.json(res, 200, leasedJson(s)));
    }

    private Mono<Void> destroySession(HttpServerRequest req, HttpServerResponse res) {
        String id = param(req, "id");
        return tenant(t -> sessions.destroy(id, t)).then(Http.noContent(res));
    }

    private Mono<Void> status(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, SandboxSession::ping)
                .flatMap(s -> Http.json(res, 200, ResourceBodies.SessionStatusBody.of(s)));
    }

    private Mono<Void> setLifetime(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .map(n ->
                        RequestBodies.read(n, RequestBodies.DurationBody.class).duration("lifetime"))
                .flatMap(d -> withSession(req, s -> s.setLifetime(d).thenReturn(d)))
                .then(Http.noContent(res));
    }

    private Mono<Void> setIdleTimeout(HttpServerRequest req, HttpServerResponse res) {
        return body(req)
                .map(n ->
                        RequestBodies.read(n, RequestBodies.DurationBody.class).duration("idleTimeout"))
                .flatMap(d -> withSession(req, s -> s.setIdleTimeout(d).thenReturn(d)))
                .then(Http.noContent(res));
    }

    private Mono<Void> pause(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> s.pause().thenReturn(Boolean.TRUE)).then(Http.noContent(res));
    }

    private Mono<Void> resume(HttpServerRequest req, HttpServerResponse res) {
        return withSession(req, s -> s.resume().thenReturn(Boolean.TRUE)).then(Http.noContent(res));
    }
}
