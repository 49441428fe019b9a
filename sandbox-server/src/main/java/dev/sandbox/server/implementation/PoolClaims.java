package dev.sandbox.server.implementation;

import dev.sandbox.NetworkPolicy;
import dev.sandbox.SessionOptions;
import dev.sandbox.pool.Claim;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Which of a client's session creates the server's warm pool can serve, and the claim that makes a warm session what
 * the client asked for. The pool's sessions are made from the server's default options ({@link
 * SessionOptions#defaults()}, what a create with an empty body asks for); a create that differs from them only in what
 * a {@link Claim} gives at once (environment variables, labels, a lifetime, an idle timeout) is served warm, anything
 * else is created cold as without a pool.
 */
final class PoolClaims {
    private PoolClaims() {}

    /**
     * The claim for a client's options, or {@code null} when they need a session of their own.
     *
     * @param asked the options to create with: the client's, with the server's own labels
     * @return the claim, or {@code null} for a cold create
     */
    static @Nullable Claim of(SessionOptions asked) {
        if (!asked.secrets().isEmpty()) {
            // a claim's environment is added to each command's options; secrets stay in the create, never logged
            return null;
        }
        if (asked.network().mode() != NetworkPolicy.Mode.NONE) {
            return null; // an egress proxy starts with the session
        }
        if (asked.workdir().isPresent()) {
            // the session's own directory (relative file paths resolve there; the local provider's must exist),
            // which a claim's working directory (only where commands start) is not
            return null;
        }
        if (!asked.lifetimeChosen() && asked.lifetime().isEmpty()) {
            return null; // no lifetime at all: a claim can set one but not lift the template's
        }
        Claim claim = Claim.defaults();
        for (Map.Entry<String, String> e : asked.env().entrySet()) {
            claim = claim.withEnv(e.getKey(), e.getValue());
        }
        for (Map.Entry<String, String> e : asked.labels().entrySet()) {
            claim = claim.withLabel(e.getKey(), e.getValue()); // list and attach find the session by them
        }
        if (asked.lifetimeChosen()) {
            claim = claim.withLifetime(asked.lifetime().orElseThrow());
        }
        if (asked.idleTimeout().isPresent()) {
            claim = claim.withIdleTimeout(asked.idleTimeout().get());
        }
        return claim;
    }
}
