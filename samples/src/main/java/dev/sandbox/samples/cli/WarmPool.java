package dev.sandbox.samples.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.pool.PoolStats;
import dev.sandbox.pool.SandboxPool;
import dev.sandbox.server.ServerEndpoint;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * {@code --pool N} of {@code sandbox serve} and {@code sandbox mcp}: N sessions of the provider created ahead, from
 * which the server's plain session creates are served at once (see {@code SandboxServer.Builder.pool} and {@code
 * SandboxMcpServer.Builder.pool} for which creates those are).
 */
final class WarmPool {
    private static final Logger LOG = LoggerFactory.getLogger(WarmPool.class);

    /** The most warm sessions {@code --pool} keeps. */
    static final long MAX_WARM = 256;

    /** How long closing the pool waits for its warm sessions to be destroyed. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(30);

    private static final ObjectMapper JSON = new ObjectMapper();

    private WarmPool() {}

    /**
     * Checks {@code --pool}'s value.
     *
     * @param warm the value
     * @return the message of the usage error, or {@code null} when it is good
     */
    static String check(long warm) {
        return warm > MAX_WARM ? "--pool must be from 0 to " + MAX_WARM + ", got " + warm : null;
    }

    /**
     * Builds the pool and starts filling it.
     *
     * @param provider whose sessions
     * @param template the options the server creates sessions with
     * @param warm how many to keep warm, at least 1
     * @param held the most sessions the servers using the pool hold at once
     * @return the pool
     */
    static SandboxPool start(SandboxProvider provider, SessionOptions template, int warm, int held) {
        return SandboxPool.builder(provider)
                .template(template)
                .warm(warm)
                // the servers' own caps bound what they hold; the pool's adds the warm ones and those being replaced
                .maxSessions(held + 2 * warm)
                .build();
    }

    /** Closes the pool (its warm sessions destroyed), waiting at most 30 s; logs, does not throw. */
    static void close(SandboxPool pool) {
        try {
            pool.closeAsync().block(CLOSE_TIMEOUT);
        } catch (RuntimeException e) {
            LOG.warn("closing the warm pool did not finish within {}: {}", CLOSE_TIMEOUT, e.toString());
        }
    }

    /**
     * {@code GET /pool} on {@code sandbox serve}: the pool's counts as JSON, behind the server's tokens.
     *
     * @param pool the pool
     * @return the endpoint
     */
    static ServerEndpoint statsEndpoint(SandboxPool pool) {
        return request -> {
            if (!request.method().equals("GET") || !request.path().equals("/pool")) {
                return Mono.just(ServerEndpoint.Response.text(404, "text/plain", "GET /pool only\n"));
            }
            return Mono.just(ServerEndpoint.Response.text(200, "application/json", json(pool.stats())));
        };
    }

    /** The counts as a JSON object, by their names in {@link PoolStats}. */
    static String json(PoolStats s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("warm", s.warm());
        m.put("inUse", s.inUse());
        m.put("waiting", s.waiting());
        m.put("creating", s.creating());
        m.put("destroying", s.destroying());
        m.put("acquired", s.acquired());
        m.put("coldAcquires", s.coldAcquires());
        m.put("createFailures", s.createFailures());
        m.put("rejected", s.rejected());
        try {
            return JSON.writeValueAsString(m) + "\n";
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
