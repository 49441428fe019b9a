package dev.sandbox.server;

import dev.sandbox.InvalidArgumentException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * An extra HTTP endpoint that a {@link SandboxServer} serves on its own port beside {@code /v1/}, mounted under a path
 * of its own with {@link SandboxServer.Builder#endpoint(String, ServerEndpoint)}. The server checks the bearer token
 * first (a request without a valid one is answered 401 and never reaches the endpoint), refuses requests while it
 * stops (503), bounds the request body (its {@code maxJsonBytes}, 413 beyond), and writes the answer's body chunk by
 * chunk as the endpoint produces it, each one flushed, so an endpoint can stream (server-sent events). If the client
 * goes away, the body's subscription is cancelled.
 *
 * <p>Nothing here names the server's HTTP library: requests and answers are plain values and Reactor publishers. The
 * MCP server ({@code dev.sandbox.mcp}) mounts its streamable HTTP transport this way.
 *
 * <pre>{@code
 * ServerEndpoint hello = request -> Mono.just(
 *         ServerEndpoint.Response.text(200, "text/plain", "hello " + request.tenant()));
 * SandboxServer server = SandboxServer.builder(provider)
 *         .token(token)
 *         .endpoint("/hello", hello)
 *         .start();
 * }</pre>
 */
@FunctionalInterface
public interface ServerEndpoint {
    /**
     * Answers one request. Called on the server's event loop: the returned {@code Mono} must not block, and so must
     * not the body's publisher.
     *
     * @param request the request, whose token was valid
     * @return the answer
     */
    Mono<Response> handle(Request request);

    /**
     * Called once when the server begins to stop, after it started refusing new requests and before it waits for the
     * running ones: an endpoint ends its long-lived streams here so that they do not hold the stop up to its timeout.
     * Does nothing by default.
     */
    default void stop() {}

    /**
     * One request to an endpoint.
     *
     * <pre>{@code
     * String session = request.header("Mcp-Session-Id");
     * Mono<String> text = request.body().map(bytes -> new String(bytes, StandardCharsets.UTF_8));
     * }</pre>
     *
     * @param method the HTTP method, upper case, such as {@code POST}
     * @param path the decoded path, such as {@code /mcp}
     * @param headers the headers, by lower-case name
     * @param tenant the name of the token the request carried ({@code default} for the first one); requests with
     *     different tokens should not see each other's things
     * @param body the request body, read when subscribed (once), empty bytes when there is none; fails with an error
     *     answered 413 when it is over the server's limit
     */
    record Request(String method, String path, Map<String, List<String>> headers, String tenant, Mono<byte[]> body) {
        /**
         * Checks and copies the parts.
         *
         * @param method the HTTP method
         * @param path the path
         * @param headers the headers, by lower-case name
         * @param tenant the token's name
         * @param body the body
         */
        public Request {
            Objects.requireNonNull(method, "method");
            Objects.requireNonNull(path, "path");
            headers = Map.copyOf(headers);
            Objects.requireNonNull(tenant, "tenant");
            Objects.requireNonNull(body, "body");
        }

        /**
         * The first value of a header.
         *
         * @param name the header's name, in any case
         * @return its first value, or {@code null} when absent
         */
        public @Nullable String header(String name) {
            List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
            return values == null || values.isEmpty() ? null : values.get(0);
        }
    }

    /**
     * An endpoint's answer.
     *
     * <pre>{@code
     * Response json = Response.text(200, "application/json", "{\"ok\":true}");
     * Response events = new Response(200, Map.of("content-type", "text/event-stream"),
     *         Flux.just("data: one\n\n".getBytes(StandardCharsets.UTF_8)));
     * }</pre>
     *
     * @param status the HTTP status, from 100 to 599
     * @param headers the headers to send (the server adds none but those of its HTTP codec)
     * @param body the body's chunks, each written and flushed as it comes
     */
    record Response(int status, Map<String, String> headers, Flux<byte[]> body) {
        /**
         * Checks and copies the parts.
         *
         * @param status the status
         * @param headers the headers
         * @param body the body
         * @throws InvalidArgumentException when the status is not from 100 to 599
         */
        public Response {
            if (status < 100 || status > 599) {
                throw new InvalidArgumentException("status", "status must be from 100 to 599, got " + status);
            }
            headers = Map.copyOf(headers);
            Objects.requireNonNull(body, "body");
        }

        /**
         * An answer without a body.
         *
         * @param status the status
         * @return the answer
         */
        public static Response empty(int status) {
            return new Response(status, Map.of("content-length", "0"), Flux.empty());
        }

        /**
         * A whole text answer (UTF-8).
         *
         * @param status the status
         * @param contentType its content type, such as {@code application/json}
         * @param text the body
         * @return the answer
         */
        public static Response text(int status, String contentType, String text) {
            byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            return new Response(
                    status,
                    Map.of("content-type", contentType, "content-length", Integer.toString(bytes.length)),
                    Flux.just(bytes));
        }
    }
}
