package dev.sandbox;

import java.time.Instant;
import java.util.Map;

/**
 * A summary of a session found by {@link SandboxProvider#list(Map)}; attach to it with
 * {@link SandboxProvider#attach(String)}.
 *
 * <pre>{@code
 * provider.list(Map.of("team", "search"))
 *     .flatMap(info -> provider.attach(info.id()))
 *     .flatMap(SandboxSession::destroy)
 *     .blockLast(Duration.ofSeconds(30));
 * }</pre>
 *
 * @param id the session id
 * @param provider the provider's name
 * @param labels the session's labels
 * @param createdAt when the session was created
 */
public record SessionInfo(String id, String provider, Map<String, String> labels, Instant createdAt) {
    /**
     * Creates the summary.
     *
     * @param id the session id
     * @param provider the provider's name
     * @param labels the session's labels
     * @param createdAt when the session was created
     */
    public SessionInfo {
        labels = Map.copyOf(labels);
    }
}
