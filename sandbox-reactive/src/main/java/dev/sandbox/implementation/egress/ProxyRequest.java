package dev.sandbox.implementation.egress;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A request a program in the sandbox sent to the egress proxy, parsed from its head: {@code CONNECT host:port} (a
 * tunnel, HTTPS mostly) or a plain-HTTP request with an absolute {@code http://} URL. Everything here came from the
 * sandbox: a head that is not one of these is a {@link BadRequestException} with a short reason, never more.
 *
 * @param connect whether it is a {@code CONNECT}
 * @param host the host asked for: a name in lower case, or an address literal (IPv6 without brackets)
 * @param port the port asked for
 * @param forwarded for a plain-HTTP request, the head to send to the server: origin-form target, the proxy's own
 *     headers dropped, {@code Connection: close}; empty for a {@code CONNECT}
 */
record ProxyRequest(boolean connect, String host, int port, byte[] forwarded) {
    /** Header lines one head may have. */
    static final int MAX_HEADERS = 100;

    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
    private static final Pattern HOST_NAME = Pattern.compile("[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?");
    private static final Pattern IPV4 = Pattern.compile("[0-9]{1,3}(\\.[0-9]{1,3}){3}");
    private static final Pattern IPV6 = Pattern.compile("[0-9a-f:.]{2,45}");
    private static final Set<String> DROPPED =
            Set.of("proxy-connection", "proxy-authorization", "connection", "keep-alive", "te", "upgrade");

    /** A head the proxy cannot serve. */
    static final class BadRequestException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadRequestException(String message) {
            super(message);
        }
    }

    /**
     * Parses a head.
     *
     * @param head the bytes up to and with the empty line
     * @return the request
     * @throws BadRequestException when it is not a request the proxy serves
     */
    static ProxyRequest parse(byte[] head) {
        // ISO-8859-1: one char per byte, nothing to decode wrongly; anything outside the grammar below is refused
        String text = new String(head, StandardCharsets.ISO_8859_1);
        String[] lines = text.split("\r?\n", -1);
        String[] parts = lines[0].split(" ", -1);
        if (parts.length != 3 || !TOKEN.matcher(parts[0]).matches()) {
            throw new BadRequestException("not an HTTP request line");
        }
        String method = parts[0];
        String target = parts[1];
        String version = parts[2];
        if (!version.equals("HTTP/1.1") && !version.equals("HTTP/1.0")) {
            throw new BadRequestException("only HTTP/1.0 and HTTP/1.1 are served");
        }
        List<String[]> headers = headerLines(lines, MAX_HEADERS);
        if (method.equals("CONNECT")) {
            Authority a = authority(target, -1);
            return new ProxyRequest(true, a.host, a.port, new byte[0]);
        }
        if (!target.regionMatches(true, 0, "http://", 0, 7)) {
            throw new BadRequestException(
                    "a proxied request needs an absolute http:// URL (HTTPS goes through CONNECT)");
        }
        String rest = target.substring(7);
        int slash = indexOfAny(rest, "/?#");
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        String path = slash < 0 ? "/" : rest.substring(slash);
        if (path.startsWith("?")) {
            path = "/" + path;
        }
        int hash = path.indexOf('#');
        if (hash >= 0) {
            path = path.substring(0, hash);
        }
        if (path.chars().anyMatch(c -> c <= 0x20 || c >= 0x7f)) {
            throw new BadRequestException("a character a URL may not hold");
        }
        Authority a = authority(authority, 80);
        StringBuilder out = new StringBuilder(head.length + 32);
        out.append(method).append(' ').append(path).append(' ').append(version).append("\r\n");
        boolean host = false;
        for (String[] h : headers) {
            String name = h[0].toLowerCase(Locale.ROOT);
            if (DROPPED.contains(name)) {
                continue;
            }
            host |= name.equals("host");
            out.append(h[0]).append(": ").append(h[1]).append("\r\n");
        }
        if (!host) {
            out.append("Host: ").append(authority).append("\r\n");
        }
        out.append("Connection: close\r\n\r\n");
        return new ProxyRequest(false, a.host, a.port, out.toString().getBytes(StandardCharsets.ISO_8859_1));
    }

    /** The header lines of a head, checked: token names, no control characters in values, at most {@value #MAX_HEADERS}. */
    private static List<String[]> headerLines(String[] lines, int max) {
        List<String[]> headers = new ArrayList<>();
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i];
            if (line.isEmpty()) {
                continue; // the final empty line(s)
            }
            int colon = line.indexOf(':');
            if (colon <= 0 || !TOKEN.matcher(line.substring(0, colon)).matches()) {
                throw new BadRequestException("a malformed header line");
            }
            if (headers.size() == max) {
                throw new BadRequestException("more than " + max + " header lines");
            }
            String value = line.substring(colon + 1).strip();
            if (value.chars().anyMatch(c -> c < 0x20 && c != '\t' || c == 0x7f)) {
                throw new BadRequestException("a control character in a header");
            }
            headers.add(new String[] {line.substring(0, colon), value});
        }
        return headers;
    }

    /**
     * The head of a plain-HTTP request as the proxy forwards it, with headers a rule adds: those of the same names the
     * program sent are dropped.
     *
     * @param forwarded a head {@link #parse} made
     * @param added the headers to add
     * @return the head to send
     */
    static byte[] withHeaders(byte[] forwarded, Map<String, String> added) {
        if (added.isEmpty()) {
            return forwarded;
        }
        String[] lines = new String(forwarded, StandardCharsets.ISO_8859_1).split("\r\n", -1);
        StringBuilder out = new StringBuilder(lines[0]).append("\r\n");
        appendHeaders(out, headerLines(lines, MAX_HEADERS + 2), added); // the proxy's own Host and Connection
        return out.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /**
     * Reads the head of a request a program sent inside a TLS connection the proxy terminated ({@code GET /path
     * HTTP/1.1}), and gives the head to send on: the proxy's own headers and those the rule adds dropped, the rule's
     * added, {@code Connection: close} (one request per connection: the next one opens another, which is rewritten
     * too).
     *
     * @param head the bytes up to and with the empty line
     * @param added the headers to add
     * @return the head to send
     * @throws BadRequestException when it is not an origin-form HTTP/1.x request
     */
    static byte[] origin(byte[] head, Map<String, String> added) {
        String[] lines = new String(head, StandardCharsets.ISO_8859_1).split("\r?\n", -1);
        String[] parts = lines[0].split(" ", -1);
        if (parts.length != 3
                || !TOKEN.matcher(parts[0]).matches()
                || !parts[1].startsWith("/")
                || parts[1].chars().anyMatch(c -> c <= 0x20 || c >= 0x7f)
                || !(parts[2].equals("HTTP/1.1") || parts[2].equals("HTTP/1.0"))) {
            throw new BadRequestException("not an HTTP/1.x request in origin form");
        }
        StringBuilder out = new StringBuilder(head.length + 64).append(lines[0]).append("\r\n");
        appendHeaders(out, headerLines(lines, MAX_HEADERS), added);
        return out.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    private static void appendHeaders(StringBuilder out, List<String[]> headers, Map<String, String> added) {
        for (String[] h : headers) {
            String name = h[0].toLowerCase(Locale.ROOT);
            if (DROPPED.contains(name) || added.keySet().stream().anyMatch(k -> k.equalsIgnoreCase(name))) {
                continue;
            }
            out.append(h[0]).append(": ").append(h[1]).append("\r\n");
        }
        added.forEach((k, v) -> out.append(k).append(": ").append(v).append("\r\n"));
        out.append("Connection: close\r\n\r\n");
    }

    private record Authority(String host, int port) {}

    private static Authority authority(String s, int defaultPort) {
        if (s.contains("@")) {
            throw new BadRequestException("credentials in a URL are not passed on");
        }
        String host;
        String port;
        if (s.startsWith("[")) {
            int close = s.indexOf(']');
            if (close < 0) {
                throw new BadRequestException("an unclosed [ in the host");
            }
            host = s.substring(1, close).toLowerCase(Locale.ROOT);
            if (!IPV6.matcher(host).matches() || !host.contains(":")) {
                throw new BadRequestException("not an IPv6 address in [ ]");
            }
            String after = s.substring(close + 1);
            if (!after.isEmpty() && !after.startsWith(":")) {
                throw new BadRequestException("a malformed host and port");
            }
            port = after.isEmpty() ? null : after.substring(1);
        } else {
            int colon = s.lastIndexOf(':');
            host = (colon < 0 ? s : s.substring(0, colon)).toLowerCase(Locale.ROOT);
            port = colon < 0 ? null : s.substring(colon + 1);
            if (host.endsWith(".")) {
                host = host.substring(0, host.length() - 1);
            }
            if (!HOST_NAME.matcher(host).matches()) {
                throw new BadRequestException("not a host name or address");
            }
            if (host.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'))) {
                if (!IPV4.matcher(host).matches()) {
                    throw new BadRequestException("not a host name or address");
                }
                for (String octet : host.split("\\.")) {
                    if (Integer.parseInt(octet) > 255) {
                        throw new BadRequestException("not an address");
                    }
                }
            }
        }
        int p;
        if (port == null) {
            if (defaultPort < 0) {
                throw new BadRequestException("CONNECT needs host:port");
            }
            p = defaultPort;
        } else {
            if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
                throw new BadRequestException("not a port");
            }
            p = Integer.parseInt(port);
            if (p < 1 || p > 65535) {
                throw new BadRequestException("a port out of range");
            }
        }
        return new Authority(host, p);
    }

    private static int indexOfAny(String s, String chars) {
        for (int i = 0; i < s.length(); i++) {
            if (chars.indexOf(s.charAt(i)) >= 0) {
                return i;
            }
        }
        return -1;
    }

    /** Whether the host was asked for as an address, not a name. */
    boolean literal() {
        return host.contains(":") || IPV4.matcher(host).matches();
    }
}
