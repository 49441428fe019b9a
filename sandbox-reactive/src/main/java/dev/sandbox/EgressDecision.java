package dev.sandbox;

import java.time.Instant;
import java.util.Objects;

/**
 * One decision of a session's egress proxy: a connection a program in the sandbox asked for, allowed or denied, and
 * the rule or reason behind it. Read them in {@link SandboxNetwork#report()}.
 *
 * <pre>{@code
 * session.network().report().block().decisions().stream()
 *     .filter(d -> !d.allowed())
 *     .forEach(d -> log.warn("sandbox asked for {}:{}: {}", d.host(), d.port(), d.reason()));
 * }</pre>
 *
 * @param time when it was decided
 * @param host the host name or address asked for
 * @param port the port asked for
 * @param allowed whether the connection was allowed
 * @param reason the rule that allowed it ({@link EgressRule#toString()}), or why it was denied
 */
public record EgressDecision(Instant time, String host, int port, boolean allowed, String reason) {

    /**
     * Checks the fields.
     *
     * @param time when it was decided
     * @param host the host asked for
     * @param port the port asked for
     * @param allowed whether it was allowed
     * @param reason the rule or the reason
     */
    public EgressDecision {
        Objects.requireNonNull(time, "time");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(reason, "reason");
    }
}
