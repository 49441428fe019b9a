package dev.sandbox;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One rule of a {@link NetworkPolicy} allowlist: a domain name (exact, or {@code *.suffix} for every name below a
 * suffix) or a block of addresses (CIDR), each for any port or for the ports named. Immutable.
 *
 * <pre>{@code
 * EgressRule pypi = EgressRule.domain("*.pythonhosted.org").ports(443);
 * EgressRule mirror = EgressRule.cidr("10.20.0.0/16").ports(80, 443);
 * }</pre>
 *
 * <p>A domain rule matches the name a program asks the proxy for, compared without case and without a trailing dot;
 * {@code *.example.com} matches {@code a.example.com} and {@code a.b.example.com}, not {@code example.com} itself. A
 * domain rule never matches an address written as a number: use a CIDR rule for those. A CIDR rule matches an address
 * a program asks for by number, and also lets a name allowed by a domain rule resolve to an address that is otherwise
 * refused (loopback, link-local, private, unique-local: see {@link NetworkPolicy}).
 */
public final class EgressRule {
    private static final Pattern LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");
    private static final Pattern NUMERIC = Pattern.compile("[0-9.]+|[0-9a-fA-F:.]*:[0-9a-fA-F:.]*");

    /** What a rule names. */
    public enum Kind {
        /** A domain name, exact or {@code *.suffix}. */
        DOMAIN,
        /** A block of IPv4 or IPv6 addresses. */
        CIDR
    }

    private final Kind kind;
    private final String pattern;
    private final byte @Nullable [] network; // CIDR only
    private final int prefix; // CIDR only
    private final Set<Integer> ports;
    private final Map<String, String> headers; // name -> value, never printed

    private EgressRule(
            Kind kind,
            String pattern,
            byte @Nullable [] network,
            int prefix,
            Set<Integer> ports,
            Map<String, String> headers) {
        this.kind = kind;
        this.pattern = pattern;
        this.network = network;
        this.prefix = prefix;
        this.ports = ports;
        this.headers = headers;
    }

    /**
     * A rule for a domain name: {@code api.example.com}, or {@code *.example.com} for every name below it.
     *
     * @param pattern the name or {@code *.suffix}
     * @return the rule, for any port until {@link #ports} narrows it
     * @throws InvalidArgumentException naming {@code domain} when the pattern is not a host name (or is an address)
     */
    public static EgressRule domain(String pattern) {
        Objects.requireNonNull(pattern, "domain");
        String p = pattern.toLowerCase(Locale.ROOT);
        if (p.endsWith(".")) {
            p = p.substring(0, p.length() - 1);
        }
        String name = p.startsWith("*.") ? p.substring(2) : p;
        if (name.isEmpty() || name.length() > 253 || NUMERIC.matcher(name).matches()) {
            throw new InvalidArgumentException(
                    "domain",
                    "domain must be a host name or *.suffix (an address needs EgressRule.cidr), got '" + pattern + "'");
        }
        for (String label : name.split("\\.", -1)) {
            if (!LABEL.matcher(label).matches()) {
                throw new InvalidArgumentException(
                        "domain",
                        "domain must be a host name or *.suffix (labels of letters, digits and '-', 1 to 63 long), got '"
                                + pattern + "'");
            }
        }
        return new EgressRule(Kind.DOMAIN, p, null, 0, Set.of(), Map.of());
    }

    /**
     * A rule for a block of addresses, {@code 10.0.0.0/8}, {@code 127.0.0.1/32}, {@code fd00::/8}; an address without
     * a prefix is that address alone.
     *
     * @param cidr the block
     * @return the rule, for any port until {@link #ports} narrows it
     * @throws InvalidArgumentException naming {@code cidr} when it is not an address with an optional prefix length
     */
    public static EgressRule cidr(String cidr) {
        Objects.requireNonNull(cidr, "cidr");
        int slash = cidr.indexOf('/');
        String address = slash < 0 ? cidr : cidr.substring(0, slash);
        if (address.isEmpty() || !NUMERIC.matcher(address).matches()) {
            throw badCidr(cidr);
        }
        if (!address.contains(":") && !dottedQuad(address)) {
            throw badCidr(cidr); // checked here: the JDK would look up what it does not parse as an address
        }
        byte[] bytes;
        try {
            bytes = InetAddress.getByName(address).getAddress(); // digits, dots and colons only: a literal, no lookup
        } catch (UnknownHostException | IllegalArgumentException e) {
            throw badCidr(cidr);
        }
        int bits = bytes.length * 8;
        int prefix = bits;
        if (slash >= 0) {
            try {
                prefix = Integer.parseInt(cidr.substring(slash + 1));
            } catch (NumberFormatException e) {
                throw badCidr(cidr);
            }
            if (prefix < 0 || prefix > bits) {
                throw badCidr(cidr);
            }
        }
        byte[] net = masked(bytes, prefix);
        String shown;
        try {
            shown = InetAddress.getByAddress(net).getHostAddress() + "/" + prefix;
        } catch (UnknownHostException e) {
            throw badCidr(cidr);
        }
        return new EgressRule(Kind.CIDR, shown, net, prefix, Set.of(), Map.of());
    }

    private static boolean dottedQuad(String s) {
        String[] parts = s.split("\\.", -1);
        if (parts.length != 4) {
            return false;
        }
        for (String p : parts) {
            if (p.isEmpty() || p.length() > 3 || Integer.parseInt(p) > 255) {
                return false;
            }
        }
        return true;
    }

    /**
     * A rule written as text, as configuration files and command lines give it: a domain ({@code pypi.org}, {@code
     * *.example.com}) or a block of addresses ({@code 10.0.0.0/8}, {@code fd00::/8}, an address alone), then
     * optionally the ports it is for, separated by spaces.
     *
     * <pre>{@code
     * EgressRule.parse("*.pythonhosted.org 443");   // domain *.pythonhosted.org ports [443]
     * EgressRule.parse("10.1.0.0/16 5432 5433");    // cidr 10.1.0.0/16 ports [5432, 5433]
     * }</pre>
     *
     * @param text the rule
     * @return the rule
     * @throws InvalidArgumentException naming {@code domain}, {@code cidr} or {@code ports} for what is wrong
     */
    public static EgressRule parse(String text) {
        Objects.requireNonNull(text, "text");
        String[] words = text.trim().split("\\s+");
        String pattern = words[0];
        boolean block = pattern.contains("/") || pattern.contains(":") || pattern.matches("[0-9.]+");
        EgressRule rule = block ? cidr(pattern) : domain(pattern);
        if (words.length == 1) {
            return rule;
        }
        int[] ports = new int[words.length - 1];
        for (int i = 1; i < words.length; i++) {
            if (!words[i].matches("[0-9]{1,5}")) {
                throw new InvalidArgumentException("ports", "not a port: '" + words[i] + "'");
            }
            ports[i - 1] = Integer.parseInt(words[i]);
        }
        return rule.ports(ports);
    }

    private static InvalidArgumentException badCidr(String cidr) {
        return new InvalidArgumentException(
                "cidr", "cidr must be an IPv4 or IPv6 address with an optional /prefix, got '" + cidr + "'");
    }

    private static byte[] masked(byte[] address, int prefix) {
        byte[] out = address.clone();
        for (int i = 0; i < out.length; i++) {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            out[i] &= (byte) (0xff << (8 - keep));
        }
        return out;
    }

    /**
     * A copy of this rule for these ports only.
     *
     * @param ports one or more ports, 1 to 65535
     * @return the narrowed rule
     * @throws InvalidArgumentException naming {@code ports} for none or one out of range
     */
    public EgressRule ports(int... ports) {
        if (ports.length == 0) {
            throw new InvalidArgumentException("ports", "ports must name at least one port, got none");
        }
        Set<Integer> set = new TreeSet<>();
        for (int p : ports) {
            if (p < 1 || p > 65535) {
                throw new InvalidArgumentException("ports", "ports must be within 1..65535, got " + p);
            }
            set.add(p);
        }
        return new EgressRule(kind, pattern, network, prefix, Set.copyOf(set), headers);
    }

    /**
     * A copy of this domain rule that adds a header to every HTTP request sent through it: a credential the host adds
     * on the way out, so that the sandbox never holds it. A header of that name the program sent is replaced. Plain
     * HTTP requests are rewritten as they pass; for HTTPS ({@code CONNECT}) the host terminates the program's TLS with
     * a certificate of the session's own certificate authority (which the sandbox is told to trust: see {@link
     * NetworkPolicy}), adds the header, and opens its own TLS to the destination, verified against the JDK's trust
     * store and {@link NetworkPolicy#withTrustedCertificates}. The value is never printed: {@link #toString()} names
     * the header only.
     *
     * <pre>{@code
     * EgressRule api = EgressRule.domain("api.example.com").ports(443).withHeader("Authorization", "Bearer " + key);
     * }</pre>
     *
     * @param name the header's name, an HTTP token
     * @param value its value, without line breaks, at most {@value #MAX_HEADER_VALUE} characters
     * @return the rule with the header
     * @throws InvalidArgumentException naming {@code headers} for a CIDR rule (a certificate names a host), a bad name
     *     or value, or more than {@value #MAX_HEADERS} headers
     */
    public EgressRule withHeader(String name, String value) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
        if (kind != Kind.DOMAIN) {
            throw new InvalidArgumentException(
                    "headers", "headers need a domain rule (a certificate names a host), got " + this);
        }
        if (!TOKEN.matcher(name).matches()) {
            throw new InvalidArgumentException("headers", "a header name must be an HTTP token, got '" + name + "'");
        }
        if (value.length() > MAX_HEADER_VALUE || value.chars().anyMatch(c -> (c < 0x20 && c != '\t') || c == 0x7f)) {
            throw new InvalidArgumentException(
                    "headers",
                    "the value of header " + name + " must be at most " + MAX_HEADER_VALUE
                            + " characters without control characters");
        }
        Map<String, String> more = new LinkedHashMap<>();
        headers.forEach((k, v) -> {
            if (!k.equalsIgnoreCase(name)) {
                more.put(k, v);
            }
        });
        more.put(name, value);
        if (more.size() > MAX_HEADERS) {
            throw new InvalidArgumentException("headers", "a rule adds at most " + MAX_HEADERS + " headers");
        }
        return new EgressRule(kind, pattern, network, prefix, ports, Collections.unmodifiableMap(more));
    }

    /** Headers one rule adds at most. */
    public static final int MAX_HEADERS = 16;

    /** The longest header value. */
    public static final int MAX_HEADER_VALUE = 8192;

    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

    /**
     * The headers this rule adds, values included: the credentials. Handle as secrets.
     *
     * @return an unmodifiable map, empty for none
     */
    public Map<String, String> headers() {
        return headers;
    }

    /**
     * What the rule names.
     *
     * @return domain or CIDR
     */
    public Kind kind() {
        return kind;
    }

    /**
     * The rule's name or block, normalised: lower case, no trailing dot, a CIDR's address masked to its prefix.
     *
     * @return the pattern
     */
    public String pattern() {
        return pattern;
    }

    /**
     * The ports the rule is for.
     *
     * @return the ports, empty for any
     */
    public Set<Integer> portSet() {
        return new TreeSet<>(ports);
    }

    /**
     * Whether this is a domain rule matching a host name on a port.
     *
     * @param host the name asked for (any case, an optional trailing dot)
     * @param port the port asked for
     * @return whether it matches
     */
    public boolean matches(String host, int port) {
        if (kind != Kind.DOMAIN || !portMatches(port)) {
            return false;
        }
        String h = host.toLowerCase(Locale.ROOT);
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        if (pattern.startsWith("*.")) {
            return h.endsWith(pattern.substring(1)) && h.length() > pattern.length() - 1;
        }
        return h.equals(pattern);
    }

    /**
     * Whether this is a CIDR rule containing an address, on a port.
     *
     * @param address the address
     * @param port the port
     * @return whether it matches
     */
    public boolean matches(InetAddress address, int port) {
        if (kind != Kind.CIDR || !portMatches(port)) {
            return false;
        }
        byte[] a = address.getAddress();
        byte[] network = this.network;
        if (network == null || a.length != network.length) {
            return false; // an IPv4 block never holds an IPv6 address (mapped ones are IPv4 here already)
        }
        return Arrays.equals(masked(a, prefix), network);
    }

    private boolean portMatches(int port) {
        return ports.isEmpty() || ports.contains(port);
    }

    /**
     * Whether an address is one a name may not resolve to without a CIDR rule: loopback, unspecified, link-local
     * (cloud metadata services live there), private (RFC 1918), shared (100.64/10), unique-local IPv6, multicast and
     * reserved blocks.
     *
     * @param address the address
     * @return whether it is such an address
     */
    public static boolean isInternal(InetAddress address) {
        if (address.isLoopbackAddress()
                || address.isAnyLocalAddress()
                || address.isLinkLocalAddress()
                || address.isSiteLocalAddress()
                || address.isMulticastAddress()) {
            return true;
        }
        byte[] a = address.getAddress();
        if (address instanceof Inet4Address) {
            int b0 = a[0] & 0xff;
            int b1 = a[1] & 0xff;
            return b0 == 0 // this network
                    || (b0 == 100 && (b1 & 0xc0) == 64) // shared address space
                    || (b0 == 192 && b1 == 0 && (a[2] & 0xff) == 0) // IETF protocol assignments
                    || (b0 == 198 && (b1 & 0xfe) == 18) // benchmarking
                    || b0 >= 240; // reserved and broadcast
        }
        return (a[0] & 0xfe) == 0xfc; // unique local fc00::/7
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EgressRule r
                && r.kind == kind
                && r.pattern.equals(pattern)
                && r.ports.equals(ports)
                && r.headers.equals(headers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, pattern, ports, headers);
    }

    /**
     * The rule as decisions name it: {@code domain *.example.com ports [443]}, {@code cidr 10.0.0.0/8}, {@code domain
     * api.example.com ports [443] headers [Authorization]} (names only, never values).
     */
    @Override
    public String toString() {
        return kind.name().toLowerCase(Locale.ROOT) + " " + pattern + (ports.isEmpty() ? "" : " ports " + portSet())
                + (headers.isEmpty() ? "" : " headers " + headers.keySet());
    }
}
