package dev.sandbox.samples.webflux;

import dev.sandbox.InvalidArgumentException;
import java.net.InetSocketAddress;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Keeps other web sites out, DNS rebinding included: a page on {@code evil.example} that re-points its name at
 * 127.0.0.1 reaches this server as its own origin, so listening on loopback alone does not stop it from running
 * commands. Before anything else handles a request (the page, {@code /api/exec}), this filter answers 403 with an
 * {@link ApiError} in JSON when
 *
 * <ul>
 *   <li>the {@code Host} header is not {@code localhost}, {@code 127.0.0.1} or {@code [::1]} with the port the
 *       request came in on, nor an entry of {@code sandbox.demo.allowed-hosts}, or there is not exactly one; or
 *   <li>an {@code Origin} header is present and is not {@code http://} or {@code https://} followed by one of those
 *       same names, or there is more than one. Clients such as curl send no {@code Origin} and are let through.
 * </ul>
 *
 * <pre>{@code
 * HTTP/1.1 403 Forbidden
 * Content-Type: application/json
 *
 * {"error":"host_not_allowed","field":"Host","message":"Host 'evil.example:8080' is not a name of this server: ..."}
 * }</pre>
 *
 * <p>Cross-origin requests (CORS) are not enabled, so no other origin is ever allowed. Names compare without regard
 * to case; a {@code Host} without a port means port 80 ({@code 443} over TLS).
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
public class RebindingGuard implements WebFilter {
    private static final Logger LOG = LoggerFactory.getLogger(RebindingGuard.class);

    /** The property that adds names. */
    static final String PROPERTY = "sandbox.demo.allowed-hosts";

    private static final List<String> OWN_NAMES = List.of("localhost", "127.0.0.1", "[::1]");
    private static final String LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
    private static final Pattern ENTRY = Pattern.compile(
            "(" + LABEL + "(?:\\." + LABEL + ")*|\\[[0-9a-f:.]*:[0-9a-f:.]*\\])(?::([1-9][0-9]{0,4}))?");
    /** How much of a refused header the answer and the log repeat. */
    private static final int MAX_ECHO = 100;

    private final JsonMapper json;
    /** Names allowed on the port the request came in on. */
    private final Set<String> names = new LinkedHashSet<>(OWN_NAMES);
    /** {@code name:port} entries, allowed exactly. */
    private final Set<String> authorities = new LinkedHashSet<>();

    /**
     * Creates the filter.
     *
     * @param properties the names to allow besides the server's own
     * @param json writes the error answers
     * @throws InvalidArgumentException when an entry of {@code sandbox.demo.allowed-hosts} is not a host name, an IP
     *     address or either with {@code :port}; the field is {@code sandbox.demo.allowed-hosts[i]}
     */
    public RebindingGuard(DemoProperties properties, JsonMapper json) {
        this.json = json;
        List<String> entries = properties.allowedHosts();
        for (int i = 0; i < entries.size(); i++) {
            String entry = entries.get(i) == null ? "" : entries.get(i).trim();
            if (entry.isEmpty()) {
                continue;
            }
            var match = ENTRY.matcher(entry.toLowerCase(Locale.ROOT));
            if (!match.matches() || (match.group(2) != null && Integer.parseInt(match.group(2)) > 65_535)) {
                throw new InvalidArgumentException(PROPERTY + "[" + i + "]", badEntry(i, entry));
            }
            (match.group(2) == null ? names : authorities).add(match.group());
        }
    }

    private static String badEntry(int index, String entry) {
        String why;
        if (entry.contains("*")) {
            why = "wildcards are not allowed: they would let any web page in through DNS rebinding";
        } else if (entry.contains("://")) {
            why = "give the name without a scheme, such as devbox.lan or localhost:9000";
        } else if (entry.indexOf(':') != entry.lastIndexOf(':') && !entry.startsWith("[")) {
            why = "put an IPv6 address in brackets, such as [::1]";
        } else {
            why = "expected a host name or IP address, optionally with :port (1-65535), such as devbox.lan or"
                    + " localhost:9000";
        }
        return PROPERTY + "[" + index + "] must name a host, got '" + echo(entry) + "': " + why;
    }

    /**
     * Refuses the request when its {@code Host} or {@code Origin} is not this server's, else passes it on.
     *
     * @param exchange the request and its response
     * @param chain the rest of the handling
     * @return completion of the handling, or of writing the 403
     */
    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpRequest request = exchange.getRequest();
        InetSocketAddress local = request.getLocalAddress();
        int port = local == null ? -1 : local.getPort();
        int defaultPort = request.getSslInfo() == null ? 80 : 443;

        List<String> hosts = request.getHeaders().getOrEmpty(HttpHeaders.HOST);
        if (hosts.size() != 1 || !allowed(hosts.get(0), defaultPort, port)) {
            String message = hosts.isEmpty()
                    ? "the request has no Host header; this server answers only to its own names"
                    : hosts.size() > 1
                            ? "the request has " + hosts.size() + " Host headers; it must have exactly one"
                            : "Host '" + echo(hosts.get(0)) + "' is not a name of this server: it answers to "
                                    + String.join(", ", names) + " on port " + port
                                    + (authorities.isEmpty() ? "" : ", to " + String.join(", ", authorities))
                                    + " and to nothing else; list further names in " + PROPERTY;
            return refuse(exchange, new ApiError("host_not_allowed", "Host", message));
        }
        List<String> origins = request.getHeaders().getOrEmpty(HttpHeaders.ORIGIN);
        if (origins.size() > 1 || (origins.size() == 1 && !allowedOrigin(origins.get(0), port))) {
            String message = origins.size() > 1
                    ? "the request has " + origins.size() + " Origin headers; it may have at most one"
                    : "Origin '" + echo(origins.get(0)) + "' is not this server's: pages of other sites may not"
                            + " use it (cross-origin requests are not enabled)";
            return refuse(exchange, new ApiError("origin_not_allowed", "Origin", message));
        }
        return chain.filter(exchange);
    }

    /** Whether {@code host} or {@code host:port} is allowed; without a port it means {@code defaultPort}. */
    private boolean allowed(String authority, int defaultPort, int port) {
        String value = authority.toLowerCase(Locale.ROOT);
        int colon = value.lastIndexOf(':');
        boolean hasPort = value.startsWith("[") ? colon > value.lastIndexOf(']') : colon >= 0;
        String withPort = hasPort ? value : value + ":" + defaultPort;
        if (authorities.contains(withPort)) {
            return true;
        }
        for (String name : names) {
            if (withPort.equals(name + ":" + port)) {
                return true;
            }
        }
        return false;
    }

    /** Whether the origin is {@code http://} or {@code https://} and an allowed host, with nothing after it. */
    private boolean allowedOrigin(String origin, int port) {
        String value = origin.toLowerCase(Locale.ROOT);
        if (value.startsWith("http://")) {
            return allowed(value.substring("http://".length()), 80, port);
        }
        if (value.startsWith("https://")) {
            return allowed(value.substring("https://".length()), 443, port);
        }
        return false;
    }

    private Mono<Void> refuse(ServerWebExchange exchange, ApiError error) {
        ServerHttpRequest request = exchange.getRequest();
        LOG.warn(
                "refused {} {} from {}: {}",
                request.getMethod(),
                echo(request.getPath().value()),
                request.getRemoteAddress(),
                error.message());
        byte[] body = json.writeValueAsBytes(error);
        ServerHttpResponse response = exchange.getResponse();
        response.setStatusCode(HttpStatus.FORBIDDEN);
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(
                Mono.fromSupplier(() -> response.bufferFactory().wrap(body)));
    }

    /** A header value fit to repeat: control characters replaced, at most {@value #MAX_ECHO} characters. */
    private static String echo(String value) {
        StringBuilder out = new StringBuilder();
        value.codePoints().limit(MAX_ECHO).forEach(c -> out.appendCodePoint(Character.isISOControl(c) ? '?' : c));
        int length = value.codePointCount(0, value.length());
        if (length > MAX_ECHO) {
            out.append("... (").append(length).append(" characters)");
        }
        return out.toString();
    }
}
