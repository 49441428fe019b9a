package dev.sandbox;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

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
 * @param name the session's name ({@link SessionOptions#withName(String)}), empty for an unnamed session
 */
public record SessionInfo(
        String id, String provider, Map<String, String> labels, Instant createdAt, Optional<String> name) {
    /**
     * Creates the summary.
     *
     * @param id the session id
     * @param provider the provider's name
     * @param labels the session's labels
     * @param createdAt when the session was created
     * @param name the session's name, empty for none
     */
    public SessionInfo {
        labels = Map.copyOf(labels);
        name = Objects.requireNonNull(name, "name");
    }

    /**
     * Creates the summary of an unnamed session.
     *
     * @param id the session id
     * @param provider the provider's name
     * @param labels the session's labels
     * @param createdAt when the session was created
     */
    public SessionInfo(String id, String provider, Map<String, String> labels, Instant createdAt) {
        this(id, provider, labels, createdAt, Optional.empty());
    }
}
