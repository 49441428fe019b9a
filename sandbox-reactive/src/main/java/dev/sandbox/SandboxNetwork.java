package dev.sandbox;

import reactor.core.publisher.Mono;

/**
 * A session's network: its egress policy, changeable while it runs, and the decisions its egress proxy made. See
 * {@link NetworkPolicy} for what a policy allows and how.
 *
 * <pre>{@code
 * SandboxNetwork net = session.network();
 * net.policy()
 *     .flatMap(p -> net.update(p.withRule(EgressRule.domain("api.example.com").ports(443))))
 *     .block();
 * EgressReport report = net.report().block();
 * }</pre>
 *
 * <p>The proxy is the host side of the provider instance that created the session: a provider that only attached to
 * the session has the policy it was created with nowhere, and its {@link #update} fails with {@link
 * SandboxStateException}; when the creating JVM ends, the proxy ends with it and the sandbox has no egress at all
 * (it fails closed).
 */
public interface SandboxNetwork {
    /** Decisions a {@link #report()} holds at most: the latest. */
    int KEPT_DECISIONS = 256;

    /**
     * The policy in force.
     *
     * @return the policy
     */
    Mono<NetworkPolicy> policy();

    /**
     * Replaces the policy; new connections are decided by it at once, open ones go on. A session created with {@link
     * NetworkPolicy#none()} has no proxy: it cannot be given an allowlist later (create it with an empty allowlist
     * for that), and the error says so.
     *
     * @param policy the new policy
     * @return completes once it is in force; {@link SandboxStateException} when the session has no proxy to apply it
     *     to, {@link InvalidArgumentException} naming {@code proxyPort} for a change of the proxy's port
     */
    Mono<Void> update(NetworkPolicy policy);

    /**
     * What the proxy decided so far: its counts and its latest decisions.
     *
     * @return the report; an empty one for a session without a proxy
     */
    Mono<EgressReport> report();

    /**
     * The network of a session with no egress and no proxy: its policy is {@link NetworkPolicy#none()}, an update to
     * anything else fails.
     *
     * @param what the session or provider, for the message
     * @return the network
     */
    static SandboxNetwork none(String what) {
        return new SandboxNetwork() {
            @Override
            public Mono<NetworkPolicy> policy() {
                return Mono.just(NetworkPolicy.none());
            }

            @Override
            public Mono<Void> update(NetworkPolicy policy) {
                if (policy.mode() == NetworkPolicy.Mode.NONE) {
                    return Mono.empty();
                }
                return Mono.error(new SandboxStateException(what
                        + " has no egress proxy (it was created with NetworkPolicy.none(), or by another provider"
                        + " instance): create it with NetworkPolicy.allowlist() to change its rules later"));
            }

            @Override
            public Mono<EgressReport> report() {
                return Mono.just(EgressReport.EMPTY);
            }
        };
    }
}
