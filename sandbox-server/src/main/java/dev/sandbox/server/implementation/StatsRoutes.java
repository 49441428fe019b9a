package dev.sandbox.server.implementation;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SessionStats;
import dev.sandbox.implementation.wire.StatsFrames;
import java.time.Duration;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.http.server.HttpServerRoutes;

/**
 * The route of a session's resource stats: {@code GET /v1/sessions/{id}/stats?intervalMs=N}, a stream of {@code
 * stats} frames (see {@link StatsFrames}), the first at once, one per interval, until the client closes or the session
 * ends (an {@code error} frame). The interval is checked before the stream starts, so a bad one is a 400 naming {@code
 * interval}; a provider that cannot measure answers with an {@code error} frame saying so.
 */
final class StatsRoutes extends Routes {
    /**
     * The route of stats.
     *
     * @param state what the routes share
     */
    StatsRoutes(State state) {
        super(state);
    }

    @Override
    void register(HttpServerRoutes routes) {
        routes.get("/v1/sessions/{id}/stats", guard(false, this::stats));
    }

    private Mono<Void> stats(HttpServerRequest req, HttpServerResponse res) {
        long ms = Http.longQuery(req, "intervalMs", 1000);
        Duration interval = Duration.ofMillis(ms);
        try {
            SessionStats.checkInterval(interval);
        } catch (InvalidArgumentException e) {
            throw new InvalidArgumentException(
                    "interval",
                    "interval must be between " + SessionStats.MIN_INTERVAL.toMillis() + " and "
                            + SessionStats.MAX_INTERVAL.toMillis() + " ms, got " + ms + " ms");
        }
        Http.Format format = Http.format(req);
        return withSession(
                        req,
                        s -> Mono.just(s.stats(interval)
                                .map(sample -> new Http.Frame("stats", StatsFrames.frame(sample), null))))
                .flatMap(frames -> Http.stream(res, format, frames, config.heartbeat()));
    }
}
