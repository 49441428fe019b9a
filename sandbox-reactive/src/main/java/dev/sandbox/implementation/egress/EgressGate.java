package dev.sandbox.implementation.egress;

import dev.sandbox.EgressRule;
import dev.sandbox.NetworkPolicy;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The host's decision on one connection a sandbox asked for, under a policy: which rule allows it and which addresses
 * may be dialled, or why not. Blocking (it resolves names): call it on a virtual thread.
 */
final class EgressGate {
    /** How long a name may take to resolve. */
    static final Duration RESOLVE_TIMEOUT = Duration.ofSeconds(5);

    /** Addresses of one name that are checked and dialled at most. */
    static final int MAX_ADDRESSES = 16;

    /**
     * A decision.
     *
     * @param allowed whether the connection may be made
     * @param reason the rule that allows it, or why it is denied
     * @param addresses the addresses to dial, in order, when allowed
     * @param status the HTTP status to answer a denial with (403 by policy, 502 for a name that does not resolve)
     * @param rule the rule that allows it, {@code null} when denied
     */
    record Decision(
            boolean allowed,
            String reason,
            List<InetAddress> addresses,
            int status,
            @Nullable EgressRule rule) {
        static Decision deny(String reason) {
            return new Decision(false, reason, List.of(), 403, null);
        }

        static Decision deny(String reason, int status) {
            return new Decision(false, reason, List.of(), status, null);
        }

        static Decision allow(EgressRule rule, List<InetAddress> addresses) {
            return new Decision(true, rule.toString(), addresses, 200, rule);
        }
    }

    private EgressGate() {}

    /**
     * Decides.
     *
     * @param policy the policy in force
     * @param request what the sandbox asked for
     * @return the decision
     */
    static Decision decide(NetworkPolicy policy, ProxyRequest request) {
        String host = request.host();
        int port = request.port();
        if (policy.mode() == NetworkPolicy.Mode.NONE) {
            return Decision.deny("the session's network policy is none");
        }
        if (request.literal()) {
            InetAddress address;
            try {
                address = InetAddress.getByName(host); // a literal, checked by the parser: no lookup
            } catch (UnknownHostException | IllegalArgumentException e) {
                return Decision.deny("not an address: " + host);
            }
            EgressRule rule = cidrRule(policy, address, port);
            if (rule == null) {
                return Decision.deny("no cidr rule allows " + address.getHostAddress() + " port " + port
                        + " (an address asked for by number needs one)");
            }
            return Decision.allow(rule, List.of(address));
        }
        EgressRule named = null;
        for (EgressRule r : policy.rules()) {
            if (r.matches(host, port)) {
                named = r;
                break;
            }
        }
        if (named == null) {
            return Decision.deny("no rule allows " + host + " port " + port + " (denied by default)");
        }
        List<InetAddress> addresses;
        try {
            addresses = resolve(policy, host);
        } catch (UnknownHostException e) {
            return Decision.deny("cannot resolve " + host + ": " + e.getMessage(), 502);
        }
        for (InetAddress a : addresses) {
            if (EgressRule.isInternal(a) && cidrRule(policy, a, port) == null) {
                return Decision.deny(host + " resolves to " + a.getHostAddress()
                        + ", an internal address no cidr rule allows (" + named + " allows the name only)");
            }
        }
        return Decision.allow(named, addresses);
    }

    private static EgressRule cidrRule(NetworkPolicy policy, InetAddress address, int port) {
        for (EgressRule r : policy.rules()) {
            if (r.matches(address, port)) {
                return r;
            }
        }
        return null;
    }

    /** Resolves with the policy's resolver, within {@link #RESOLVE_TIMEOUT}; a few addresses at most. */
    private static List<InetAddress> resolve(NetworkPolicy policy, String host) throws UnknownHostException {
        CompletableFuture<List<InetAddress>> f = new CompletableFuture<>();
        Thread t = Thread.ofVirtual().name("sandbox-egress-resolve " + host).start(() -> {
            try {
                f.complete(policy.resolver().resolve(host));
            } catch (Exception | LinkageError e) {
                f.completeExceptionally(e);
            }
        });
        List<InetAddress> found;
        try {
            found = f.get(RESOLVE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            t.interrupt();
            throw new UnknownHostException("no answer within " + RESOLVE_TIMEOUT.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnknownHostException("interrupted");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            throw c instanceof UnknownHostException u ? u : new UnknownHostException("the resolver failed: " + c);
        }
        if (found == null || found.isEmpty()) {
            throw new UnknownHostException("no address");
        }
        List<InetAddress> out = new ArrayList<>();
        for (InetAddress a : found) {
            if (a != null && out.size() < MAX_ADDRESSES) {
                out.add(a);
            }
        }
        if (out.isEmpty()) {
            throw new UnknownHostException("no address");
        }
        return out;
    }
}
