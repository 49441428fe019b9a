package dev.sandbox.blocking;

import dev.sandbox.EgressReport;
import dev.sandbox.NetworkPolicy;
import java.util.Objects;

/**
 * The session's network, blocking: its egress policy and its proxy's decisions; the blocking form of {@link
 * dev.sandbox.SandboxSession#network()}, with the same names. Get it from {@link SandboxClient#network()}.
 *
 * <pre>{@code
 * client.network().update(client.network().policy().withRule(EgressRule.domain("pypi.org").ports(443)));
 * client.network().report().decisions().forEach(System.out::println);
 * }</pre>
 */
public final class NetworkClient {
    private final ClientCore core;

    NetworkClient(ClientCore core) {
        this.core = core;
    }

    /**
     * The policy in force.
     *
     * @return the policy
     * @throws SandboxInterruptedException when the thread was interrupted
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public NetworkPolicy policy() {
        Blocking.checkCanBlock("NetworkClient.policy");
        core.ensureOpen();
        return Blocking.awaitValue(
                core.session.network().policy(), core.defaultTimeout, "NetworkClient.policy", "network policy");
    }

    /**
     * Replaces the policy; new connections are decided by it at once.
     *
     * @param policy the new policy
     * @throws dev.sandbox.SandboxStateException when the session has no egress proxy (created without an allowlist)
     * @throws dev.sandbox.InvalidArgumentException naming {@code proxyPort} for a change of the proxy's port
     * @throws SandboxInterruptedException when the thread was interrupted
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public void update(NetworkPolicy policy) {
        Blocking.checkCanBlock("NetworkClient.update");
        Objects.requireNonNull(policy, "policy");
        core.ensureOpen();
        Blocking.await(
                core.session.network().update(policy), core.defaultTimeout, "NetworkClient.update", "policy update");
    }

    /**
     * What the session's egress proxy decided so far: its counts and latest decisions.
     *
     * @return the report
     * @throws SandboxInterruptedException when the thread was interrupted
     * @throws IllegalStateException when called on a Reactor non-blocking thread
     */
    public EgressReport report() {
        Blocking.checkCanBlock("NetworkClient.report");
        core.ensureOpen();
        return Blocking.awaitValue(
                core.session.network().report(), core.defaultTimeout, "NetworkClient.report", "egress report");
    }
}
