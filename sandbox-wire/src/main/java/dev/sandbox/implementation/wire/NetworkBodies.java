package dev.sandbox.implementation.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.BackendException;
import dev.sandbox.EgressDecision;
import dev.sandbox.EgressReport;
import dev.sandbox.EgressRule;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NameResolver;
import dev.sandbox.NetworkPolicy;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The JSON of a session's network: its policy (in a create's body, {@code GET} and {@code PUT
 * /v1/sessions/{id}/network}) and its proxy's report ({@code GET /v1/sessions/{id}/network/report}). A policy's names
 * are resolved where its proxy runs, the server: a client's own {@link NameResolver} cannot travel and is refused.
 *
 * <pre>{@code
 * {"mode":"allowlist","proxyPort":3128,"rules":[{"domain":"*.pypi.org","ports":[443]},{"cidr":"10.0.0.0/8"}]}
 * }</pre>
 */
public final class NetworkBodies {
    private NetworkBodies() {}

    /** Makes the JSON binding of the records ahead of the first request, as {@link RequestBodies#prepare()}. */
    public static void prepare() {
        for (Class<?> type : NetworkBodies.class.getDeclaredClasses()) {
            if (type.isRecord()) {
                WireJson.prepare(type);
            }
        }
    }

    /**
     * One rule: a {@code domain} or a {@code cidr}, its ports (absent for any), and the headers it adds (values
     * included, like a create's secrets: the channel is the caller's to protect; never logged).
     *
     * @param domain the domain pattern, or {@code null}
     * @param cidr the block, or {@code null}
     * @param ports the ports, or {@code null} for any
     * @param headers the headers it adds, or {@code null} for none
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record RuleBody(String domain, String cidr, List<Integer> ports, Map<String, String> headers) {
        static RuleBody of(EgressRule r) {
            List<Integer> ports = r.portSet().isEmpty() ? null : List.copyOf(r.portSet());
            Map<String, String> headers = r.headers().isEmpty() ? null : r.headers();
            return r.kind() == EgressRule.Kind.DOMAIN
                    ? new RuleBody(r.pattern(), null, ports, headers)
                    : new RuleBody(null, r.pattern(), ports, headers);
        }

        /** Names the headers, never their values. */
        @Override
        public String toString() {
            return "RuleBody[domain=" + domain + ", cidr=" + cidr + ", ports=" + ports + ", headers="
                    + (headers == null ? null : headers.keySet()) + "]";
        }

        EgressRule rule() {
            if ((domain == null) == (cidr == null)) {
                throw new InvalidArgumentException("rules", "a rule names exactly one of domain and cidr, got " + this);
            }
            EgressRule r = domain != null ? EgressRule.domain(domain) : EgressRule.cidr(cidr);
            if (ports != null) {
                r = r.ports(ports.stream()
                        .mapToInt(p -> {
                            if (p == null) {
                                throw new InvalidArgumentException("ports", "ports holds a null");
                            }
                            return p;
                        })
                        .toArray());
            }
            if (headers != null) {
                if (headers.size() > EgressRule.MAX_HEADERS) {
                    throw new InvalidArgumentException(
                            "headers", "a rule adds at most " + EgressRule.MAX_HEADERS + " headers");
                }
                for (Map.Entry<String, String> h : headers.entrySet()) {
                    if (h.getKey() == null || h.getValue() == null) {
                        throw new InvalidArgumentException("headers", "headers holds a null");
                    }
                    r = r.withHeader(h.getKey(), h.getValue());
                }
            }
            return r;
        }
    }

    /**
     * A policy.
     *
     * @param mode {@code none} or {@code allowlist}
     * @param rules the rules, in order
     * @param proxyPort the proxy's port in the sandbox, or {@code null} for the default
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record PolicyBody(String mode, List<RuleBody> rules, Integer proxyPort) {
        /**
         * Encodes a policy.
         *
         * @param p the policy
         * @return the body
         * @throws InvalidArgumentException naming {@code resolver} for a policy with its own resolver, {@code
         *     trustedCertificates} for one with its own certificates
         */
        public static PolicyBody of(NetworkPolicy p) {
            if (!p.resolver().equals(NameResolver.system())) {
                throw new InvalidArgumentException(
                        "resolver",
                        "a remote session's names are resolved by the server: a policy's own resolver cannot be"
                                + " sent, got " + p.resolver());
            }
            if (!p.trustedCertificates().isEmpty()) {
                throw new InvalidArgumentException(
                        "trustedCertificates",
                        "a remote session's proxy runs on the server and trusts what the server trusts: a policy's own"
                                + " certificates cannot be sent, got "
                                + p.trustedCertificates().size());
            }
            return new PolicyBody(
                    p.mode() == NetworkPolicy.Mode.NONE ? "none" : "allowlist",
                    p.rules().stream().map(RuleBody::of).toList(),
                    p.proxyPort());
        }

        /**
         * Reads a server's answer.
         *
         * @param answer the answer
         * @return the policy
         * @throws BackendException when it is not one
         */
        public static NetworkPolicy policyOf(JsonNode answer) {
            try {
                return ResourceBodies.read(answer, PolicyBody.class).policy();
            } catch (InvalidArgumentException e) {
                throw new BackendException(
                        "the sandbox server sent a policy that cannot be read: " + e.getMessage(), e);
            }
        }

        /**
         * The policy, validated.
         *
         * @return the policy
         * @throws InvalidArgumentException naming the field that is wrong
         */
        public NetworkPolicy policy() {
            List<RuleBody> given = rules == null ? List.of() : rules;
            if (given.size() > NetworkPolicy.MAX_RULES) {
                throw new InvalidArgumentException(
                        "rules", "rules must be at most " + NetworkPolicy.MAX_RULES + ", got " + given.size());
            }
            NetworkPolicy p;
            if ("none".equals(mode)) {
                if (!given.isEmpty()) {
                    throw new InvalidArgumentException("rules", "a policy of mode none has no rules");
                }
                p = NetworkPolicy.none();
            } else if ("allowlist".equals(mode)) {
                List<EgressRule> list = new ArrayList<>();
                for (RuleBody r : given) {
                    if (r == null) {
                        throw new InvalidArgumentException("rules", "rules holds a null");
                    }
                    list.add(r.rule());
                }
                p = NetworkPolicy.allowlist(list.toArray(EgressRule[]::new));
            } else {
                throw new InvalidArgumentException("mode", "mode must be none or allowlist, got '" + mode + "'");
            }
            return proxyPort == null ? p : p.withProxyPort(proxyPort);
        }
    }

    /**
     * One decision.
     *
     * @param time when, ISO-8601
     * @param host the host asked for
     * @param port the port asked for
     * @param allowed whether it was allowed
     * @param reason the rule or the reason
     */
    public record DecisionBody(String time, String host, int port, boolean allowed, String reason) {
        static DecisionBody of(EgressDecision d) {
            return new DecisionBody(d.time().toString(), d.host(), d.port(), d.allowed(), d.reason());
        }

        EgressDecision decision() {
            try {
                return new EgressDecision(Instant.parse(time), host, port, allowed, reason);
            } catch (NullPointerException | DateTimeParseException e) {
                throw new InvalidArgumentException("decisions", "a decision that cannot be read: " + this);
            }
        }
    }

    /**
     * A report.
     *
     * @param allowedConnections connections allowed
     * @param deniedConnections connections denied
     * @param decisions the latest decisions
     */
    public record ReportBody(long allowedConnections, long deniedConnections, List<DecisionBody> decisions) {
        /**
         * Encodes a report.
         *
         * @param r the report
         * @return the body
         */
        public static ReportBody of(EgressReport r) {
            return new ReportBody(
                    r.allowedConnections(),
                    r.deniedConnections(),
                    r.decisions().stream().map(DecisionBody::of).toList());
        }

        /**
         * Reads a server's answer.
         *
         * @param answer the answer
         * @return the report
         * @throws BackendException when it is not one
         */
        public static EgressReport reportOf(JsonNode answer) {
            try {
                return ResourceBodies.read(answer, ReportBody.class).report();
            } catch (InvalidArgumentException e) {
                throw new BackendException(
                        "the sandbox server sent a report that cannot be read: " + e.getMessage(), e);
            }
        }

        /**
         * The report, validated.
         *
         * @return the report
         */
        public EgressReport report() {
            List<DecisionBody> given = decisions == null ? List.of() : decisions;
            if (given.size() > dev.sandbox.SandboxNetwork.KEPT_DECISIONS) {
                throw new InvalidArgumentException("decisions", "more decisions than a report holds: " + given.size());
            }
            List<EgressDecision> list = new ArrayList<>();
            for (DecisionBody d : given) {
                if (d == null) {
                    throw new InvalidArgumentException("decisions", "decisions holds a null");
                }
                list.add(d.decision());
            }
            return new EgressReport(allowedConnections, deniedConnections, list);
        }
    }
}
