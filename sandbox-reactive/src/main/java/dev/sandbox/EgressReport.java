package dev.sandbox;

import java.util.List;
import java.util.Objects;

/**
 * What a session's egress proxy decided so far: the counts since it started and the latest decisions, oldest first
 * (at most {@link SandboxNetwork#KEPT_DECISIONS}). Read it with {@link SandboxNetwork#report()}.
 *
 * <pre>{@code
 * EgressReport r = session.network().report().block();
 * System.out.println(r.allowedConnections() + " allowed, " + r.deniedConnections() + " denied");
 * r.decisions().stream().filter(d -> !d.allowed()).forEach(d -> System.out.println(d.host() + ": " + d.reason()));
 * }</pre>
 *
 * @param allowedConnections connections allowed since the proxy started
 * @param deniedConnections connections denied since the proxy started
 * @param decisions the latest decisions, oldest first
 */
public record EgressReport(long allowedConnections, long deniedConnections, List<EgressDecision> decisions) {

    /**
     * Copies the decisions.
     *
     * @param allowedConnections connections allowed
     * @param deniedConnections connections denied
     * @param decisions the latest decisions
     */
    public EgressReport {
        decisions = List.copyOf(Objects.requireNonNull(decisions, "decisions"));
    }

    /** The report of a session without a proxy: nothing decided. */
    static final EgressReport EMPTY = new EgressReport(0, 0, List.of());
}
