package dev.sandbox;

import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a session's programs may reach on the network. Immutable; set with {@link SessionOptions#withNetwork} and
 * changed while the session runs with {@link SandboxNetwork#update}.
 *
 * <ul>
 *   <li>{@link #none()}, the default: no egress at all (the sandbox has loopback only).
 *   <li>{@link #allowlist(EgressRule...)}: deny by default, allow what a rule names. The sandbox stays without a
 *       network; the provider's agent serves an HTTP proxy on the sandbox's loopback ({@code 127.0.0.1:3128} unless
 *       {@link #withProxyPort} says otherwise), every command gets {@code HTTP_PROXY}, {@code HTTPS_PROXY} (and their
 *       lower-case forms) pointing at it and {@code NO_PROXY=localhost,127.0.0.1,::1}, and each connection a program
 *       asks the proxy for ({@code CONNECT host:port}, or a plain-HTTP request with an absolute URL) is checked and
 *       dialled by the host. A program that ignores the proxy has no route anywhere.
 * </ul>
 *
 * <p><b>How a connection is decided</b>, on the host, outside the sandbox's reach: a name must match a
 * {@linkplain EgressRule#domain domain rule} for its port; it is then resolved on the host (with {@link #resolver()}),
 * and every address it resolves to must be a public one or lie in a {@linkplain EgressRule#cidr CIDR rule} for that
 * port, so that a name cannot lead into the host's own network (loopback, cloud metadata at 169.254.169.254, private
 * ranges: {@link EgressRule#isInternal}). Only the checked addresses are dialled. An address asked for by number must
 * lie in a CIDR rule. A denied connection is answered {@code 403 Forbidden} with the reason in the body and in a
 * {@code X-Sandbox-Egress} header. Every decision is counted and the latest are kept ({@link
 * SandboxNetwork#report()}).
 *
 * <pre>{@code
 * NetworkPolicy policy = NetworkPolicy.allowlist(
 *     EgressRule.domain("pypi.org").ports(443),
 *     EgressRule.domain("*.pythonhosted.org").ports(443));
 * SandboxSession s = provider.create(SessionOptions.defaults().withNetwork(policy)).block();
 * s.run(ExecOptions.shell("pip download requests")).block();
 * }</pre>
 */
public final class NetworkPolicy {
    /** The port the proxy listens on in the sandbox unless set otherwise. */
    public static final int DEFAULT_PROXY_PORT = 3128;

    /** Rules one policy holds at most. */
    public static final int MAX_RULES = 1024;

    private static final NetworkPolicy NONE =
            new NetworkPolicy(Mode.NONE, List.of(), DEFAULT_PROXY_PORT, NameResolver.system(), List.of());

    /** The kind of policy. */
    public enum Mode {
        /** No egress. */
        NONE,
        /** Egress through the proxy to what the rules allow. */
        ALLOWLIST
    }

    private final Mode mode;
    private final List<EgressRule> rules;
    private final int proxyPort;
    private final NameResolver resolver;
    private final List<X509Certificate> trusted;

    private NetworkPolicy(
            Mode mode, List<EgressRule> rules, int proxyPort, NameResolver resolver, List<X509Certificate> trusted) {
        this.mode = mode;
        this.rules = rules;
        this.proxyPort = proxyPort;
        this.resolver = resolver;
        this.trusted = trusted;
    }

    /**
     * No egress: the default.
     *
     * @return the policy
     */
    public static NetworkPolicy none() {
        return NONE;
    }

    /**
     * Egress through the proxy to what these rules allow, nothing else; with no rule, the proxy runs and denies
     * everything (a session that may be given rules later, with {@link SandboxNetwork#update}).
     *
     * @param rules the rules
     * @return the policy
     * @throws InvalidArgumentException naming {@code rules} past {@value #MAX_RULES}
     */
    public static NetworkPolicy allowlist(EgressRule... rules) {
        return new NetworkPolicy(
                Mode.ALLOWLIST, checked(List.of(rules)), DEFAULT_PROXY_PORT, NameResolver.system(), List.of());
    }

    private static List<EgressRule> checked(List<EgressRule> rules) {
        if (rules.size() > MAX_RULES) {
            throw new InvalidArgumentException("rules", "rules must be at most " + MAX_RULES + ", got " + rules.size());
        }
        return List.copyOf(rules);
    }

    /**
     * A copy with one more rule; a {@link Mode#NONE} policy becomes an allowlist.
     *
     * @param rule the rule
     * @return the policy
     */
    public NetworkPolicy withRule(EgressRule rule) {
        Objects.requireNonNull(rule, "rule");
        List<EgressRule> more = new ArrayList<>(rules);
        more.add(rule);
        return new NetworkPolicy(Mode.ALLOWLIST, checked(more), proxyPort, resolver, trusted);
    }

    /**
     * A copy whose proxy listens on this port of the sandbox's loopback.
     *
     * @param port 1 to 65535
     * @return the policy
     * @throws InvalidArgumentException naming {@code proxyPort} out of range
     */
    public NetworkPolicy withProxyPort(int port) {
        if (port < 1 || port > 65535) {
            throw new InvalidArgumentException("proxyPort", "proxyPort must be within 1..65535, got " + port);
        }
        return new NetworkPolicy(mode, rules, port, resolver, trusted);
    }

    /**
     * A copy that resolves names with this resolver.
     *
     * @param resolver the resolver
     * @return the policy
     */
    public NetworkPolicy withResolver(NameResolver resolver) {
        return new NetworkPolicy(mode, rules, proxyPort, Objects.requireNonNull(resolver, "resolver"), trusted);
    }

    /**
     * A copy whose proxy also trusts these certificates (besides the JDK's trust store) when it opens TLS to a
     * destination itself, for a rule that adds headers: a private certificate authority, or a server's own
     * certificate.
     *
     * @param certificates the certificates
     * @return the policy
     */
    public NetworkPolicy withTrustedCertificates(X509Certificate... certificates) {
        return new NetworkPolicy(mode, rules, proxyPort, resolver, List.of(certificates));
    }

    /**
     * The certificates the proxy trusts besides the JDK's, for destinations it opens TLS to itself.
     *
     * @return an unmodifiable list
     */
    public List<X509Certificate> trustedCertificates() {
        return trusted;
    }

    /**
     * The kind of policy.
     *
     * @return none or allowlist
     */
    public Mode mode() {
        return mode;
    }

    /**
     * The rules, in the order given (the first that matches is the one a decision names).
     *
     * @return an unmodifiable list
     */
    public List<EgressRule> rules() {
        return rules;
    }

    /**
     * The port of the proxy in the sandbox.
     *
     * @return the port
     */
    public int proxyPort() {
        return proxyPort;
    }

    /**
     * How names are resolved on the host.
     *
     * @return the resolver
     */
    public NameResolver resolver() {
        return resolver;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NetworkPolicy p
                && p.mode == mode
                && p.rules.equals(rules)
                && p.proxyPort == proxyPort
                && p.resolver.equals(resolver)
                && p.trusted.equals(trusted);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, rules, proxyPort, resolver, trusted);
    }

    @Override
    public String toString() {
        return mode == Mode.NONE
                ? "NetworkPolicy[none]"
                : "NetworkPolicy[allowlist " + rules + ", proxy port " + proxyPort + "]";
    }
}
