package dev.sandbox.blocking;

import dev.sandbox.EgressDecision;
import dev.sandbox.NetworkPolicy;
import java.util.List;
import java.util.Objects;

/**
 * The session's network, blocking: its egress policy and its proxy's decisions; the blocking form of {@link
 * dev.sandbox.SandboxSession#network()}, with the same names. Get it from {@link SandboxClient#network()}.
 *
 * <pre>{@code
 * client.network().update(client.network().policy().withRule(EgressRule.domain("pypi.org").ports(443)));
 * client.network().decisions().forEach(System.out::println);
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
     */
    public NetworkPolicy policy() {
        return core.session.network().policy();
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
     * The latest decisions of the session's egress proxy, oldest first.
     *
     * @return a snapshot
     */
    public List<EgressDecision> decisions() {
        return core.session.network().decisions();
    }

    /**
     * Connections allowed since the proxy started.
     *
     * @return the count
     */
    public long allowedConnections() {
        return core.session.network().allowedConnections();
    }

    /**
     * Connections denied since the proxy started.
     *
     * @return the count
     */
    public long deniedConnections() {
        return core.session.network().deniedConnections();
    }
}
