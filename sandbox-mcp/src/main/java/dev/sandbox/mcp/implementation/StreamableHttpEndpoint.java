package dev.sandbox.mcp.implementation;

import dev.sandbox.server.ServerEndpoint;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.HttpHeaders;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import io.modelcontextprotocol.spec.McpStreamableServerTransport;
import io.modelcontextprotocol.spec.McpStreamableServerTransportProvider;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.concurrent.Queues;

/**
 * The MCP streamable HTTP transport (protocol 2025-03-26 and later) as a {@link ServerEndpoint} mounted on a {@code
 * SandboxServer}: {@code POST} carries one JSON-RPC message (an {@code initialize} request answers JSON with a new
 * {@code Mcp-Session-Id}; any other request answers a server-sent-event stream holding its notifications, such as
 * progress, then its response; notifications and responses answer 202), {@code GET} opens the session's stream of
 * server-initiated messages, and {@code DELETE} ends the session.
 *
 * <p>The server has already checked the bearer token and bounded the body. Each MCP session belongs to the token that
 * initialized it: another token's request naming it is answered 404 as for a missing one, and its tools see that
 * token's sandbox sessions only ({@link SandboxToolSpecs#OWNER_KEY}). Sessions are bounded in number; one whose client
 * has been quiet for the idle timeout with no open stream is dropped when room is needed. Outgoing events wait in a
 * bounded queue per stream; streams of server messages send an SSE comment as heartbeat while quiet.
 */
public final class StreamableHttpEndpoint implements McpStreamableServerTransportProvider, ServerEndpoint {
    private static final Logger LOG = LoggerFactory.getLogger(StreamableHttpEndpoint.class);
    private static final byte[] HEARTBEAT = ": heartbeat\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final Map<String, String> SSE_HEADERS =
            Map.of("content-type", "text/event-stream; charset=utf-8", "cache-control", "no-store");
    /** Events that may wait for a slow client on one stream. */
    private static final int STREAM_QUEUE = 2048;

    private final McpJsonMapper json;
    private final int maxSessions;
    private final Duration idleTimeout;
    private final Duration heartbeat;
    private final Map<String, Held> sessions = new ConcurrentHashMap<>();
    private volatile McpStreamableServerSession.Factory factory;
    private volatile boolean closing;

    /** A session, its owner and when its client last came. */
    private static final class Held {
        final McpStreamableServerSession session;
        final String owner;
        volatile long lastSeenNanos = System.nanoTime();
        final java.util.concurrent.atomic.AtomicInteger openStreams = new java.util.concurrent.atomic.AtomicInteger();

        Held(McpStreamableServerSession session, String owner) {
            this.session = session;
            this.owner = owner;
        }
    }

    /**
     * Creates the transport.
     *
     * @param json the JSON mapper
     * @param maxSessions the most MCP sessions at once
     * @param idleTimeout how long a session may stay quiet before it may be dropped for a new one
     * @param heartbeat how often a quiet stream of server messages sends a heartbeat
     */
    public StreamableHttpEndpoint(McpJsonMapper json, int maxSessions, Duration idleTimeout, Duration heartbeat) {
        this.json = json;
        this.maxSessions = maxSessions;
        this.idleTimeout = idleTimeout;
        this.heartbeat = heartbeat;
    }

    // ------------------------------------------------------------------ McpStreamableServerTransportProvider

    @Override
    public void setSessionFactory(McpStreamableServerSession.Factory sessionFactory) {
        this.factory = sessionFactory;
    }

    @Override
    public Mono<Void> notifyClients(String method, Object params) {
        return Flux.fromIterable(sessions.values())
                .flatMap(h -> h.session.sendNotification(method, params).onErrorResume(e -> Mono.empty()))
                .then();
    }

    @Override
    public Mono<Void> notifyClient(String sessionId, String method, Object params) {
        return Mono.defer(() -> {
            Held h = sessions.get(sessionId);
            return h == null ? Mono.empty() : h.session.sendNotification(method, params);
        });
    }

    @Override
    public Mono<Void> closeGracefully() {
        return Mono.defer(() -> {
            closing = true;
            return Flux.fromIterable(sessions.values())
                    .flatMap(h -> h.session.closeGracefully().onErrorResume(e -> Mono.empty()))
                    .then(Mono.fromRunnable(sessions::clear));
        });
    }

    // ------------------------------------------------------------------ ServerEndpoint

    @Override
    public void stop() {
        closeGracefully().subscribe();
    }

    @Override
    public Mono<Response> handle(Request request) {
        if (closing || factory == null) {
            return Mono.just(jsonError(503, "the MCP server is stopping"));
        }
        McpTransportContext context = McpTransportContext.create(Map.of(SandboxToolSpecs.OWNER_KEY, request.tenant()));
        return switch (request.method()) {
            case "POST" -> post(request, context);
            case "GET" -> get(request, context);
            case "DELETE" -> delete(request);
            default ->
                Mono.just(new Response(405, Map.of("allow", "GET, POST, DELETE", "content-length", "0"), Flux.empty()));
        };
    }

    private Mono<Response> post(Request request, McpTransportContext context) {
        String accept = request.header("accept");
        if (accept == null || !accept.contains("application/json") || !accept.contains("text/event-stream")) {
            return Mono.just(jsonError(406, "a POST must accept both application/json and text/event-stream (Accept)"));
        }
        return request.body().flatMap(bytes -> {
            McpSchema.JSONRPCMessage message;
            try {
                message = McpSchema.deserializeJsonRpcMessage(json, new String(bytes, StandardCharsets.UTF_8));
            } catch (IOException | RuntimeException e) {
                return Mono.just(jsonError(400, "the body is not one JSON-RPC message: " + e.getMessage()));
            }
            if (message instanceof McpSchema.JSONRPCRequest req && McpSchema.METHOD_INITIALIZE.equals(req.method())) {
                return initialize(req, request.tenant(), context);
            }
            Object found = session(request);
            if (found instanceof Response refusal) {
                return Mono.just(refusal);
            }
            Held held = (Held) found;
            if (message instanceof McpSchema.JSONRPCResponse response) {
                return held.session
                        .accept(response)
                        .contextWrite(ctx -> ctx.put(McpTransportContext.KEY, context))
                        .thenReturn(Response.empty(202))
                        .onErrorResume(e -> Mono.just(jsonError(400, e.getMessage())));
            }
            if (message instanceof McpSchema.JSONRPCNotification notification) {
                return held.session
                        .accept(notification)
                        .contextWrite(ctx -> ctx.put(McpTransportContext.KEY, context))
                        .thenReturn(Response.empty(202));
            }
            McpSchema.JSONRPCRequest req = (McpSchema.JSONRPCRequest) message;
            Stream stream = new Stream();
            Disposable call = held.session
                    .responseStream(req, stream)
                    .contextWrite(ctx -> ctx.put(McpTransportContext.KEY, context))
                    .subscribe(null, e -> {
                        LOG.debug("MCP request {} failed: {}", req.method(), e.toString());
                        stream.close();
                    });
            Flux<byte[]> body = stream.events().doOnCancel(call::dispose);
            return Mono.just(new Response(200, SSE_HEADERS, body));
        });
    }

    private Mono<Response> initialize(McpSchema.JSONRPCRequest req, String owner, McpTransportContext context) {
        if (sessions.size() >= maxSessions) {
            evictIdle();
            if (sessions.size() >= maxSessions) {
                return Mono.just(jsonError(
                        503, "this server already has " + maxSessions + " MCP sessions; end one (DELETE) first"));
            }
        }
        McpSchema.InitializeRequest init;
        try {
            init = json.convertValue(req.params(), new TypeRef<McpSchema.InitializeRequest>() {});
        } catch (RuntimeException e) {
            return Mono.just(jsonError(400, "malformed initialize parameters: " + e.getMessage()));
        }
        McpStreamableServerSession.McpStreamableServerSessionInit started = factory.startSession(init);
        String id = started.session().getId();
        sessions.put(id, new Held(started.session(), owner));
        return started.initResult()
                .contextWrite(ctx -> ctx.put(McpTransportContext.KEY, context))
                .map(result -> {
                    byte[] body = write(McpSchema.JSONRPCResponse.result(req.id(), result));
                    return new Response(
                            200,
                            Map.of(
                                    "content-type",
                                    "application/json",
                                    "content-length",
                                    Integer.toString(body.length),
                                    HttpHeaders.MCP_SESSION_ID.toLowerCase(java.util.Locale.ROOT),
                                    id),
                            Flux.just(body));
                })
                .onErrorResume(e -> {
                    sessions.remove(id);
                    return Mono.just(jsonError(500, "initialize failed: " + e.getMessage()));
                });
    }

    private Mono<Response> get(Request request, McpTransportContext context) {
        String accept = request.header("accept");
        if (accept == null || !accept.contains("text/event-stream")) {
            return Mono.just(jsonError(406, "a GET must accept text/event-stream (Accept)"));
        }
        Object found = session(request);
        if (found instanceof Response refusal) {
            return Mono.just(refusal);
        }
        Held held = (Held) found;
        Stream stream = new Stream();
        McpStreamableServerSession.McpStreamableServerSessionStream listening = held.session.listeningStream(stream);
        held.openStreams.incrementAndGet();
        Flux<byte[]> heartbeats = Flux.interval(heartbeat, heartbeat).map(i -> HEARTBEAT);
        Flux<byte[]> body = Flux.merge(stream.events(), heartbeats.takeUntilOther(stream.done()))
                .doFinally(s -> {
                    held.openStreams.decrementAndGet();
                    held.lastSeenNanos = System.nanoTime();
                    listening.close();
                });
        return Mono.just(new Response(200, SSE_HEADERS, body));
    }

    private Mono<Response> delete(Request request) {
        Object found = session(request);
        if (found instanceof Response refusal) {
            return Mono.just(refusal);
        }
        Held held = (Held) found;
        String id = held.session.getId();
        return held.session.delete().onErrorResume(e -> Mono.empty()).then(Mono.fromSupplier(() -> {
            sessions.remove(id, held);
            return Response.empty(200);
        }));
    }

    /** The request's MCP session (a {@link Held}), or the answer refusing it (a {@link Response}). */
    private Object session(Request request) {
        String id = request.header(HttpHeaders.MCP_SESSION_ID);
        if (id == null || id.isBlank()) {
            return jsonError(400, "the Mcp-Session-Id header is required (send initialize first)");
        }
        Held held = sessions.get(id);
        if (held == null || !held.owner.equals(request.tenant())) {
            return jsonError(
                    404, "no MCP session " + Escape.line(id) + " (it ended or never existed): initialize again");
        }
        held.lastSeenNanos = System.nanoTime();
        return held;
    }

    private void evictIdle() {
        long now = System.nanoTime();
        sessions.forEach((id, h) -> {
            if (h.openStreams.get() <= 0 && now - h.lastSeenNanos > idleTimeout.toNanos() && sessions.remove(id, h)) {
                LOG.debug("dropping idle MCP session {}", id);
                h.session.closeGracefully().onErrorResume(e -> Mono.empty()).subscribe();
            }
        });
    }

    private byte[] write(Object value) {
        try {
            return json.writeValueAsString(value).getBytes(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write an MCP message as JSON", e);
        }
    }

    private Response jsonError(int status, String message) {
        Map<String, Object> error = new java.util.LinkedHashMap<>();
        error.put("code", McpSchema.ErrorCodes.INVALID_REQUEST);
        error.put("message", message);
        Map<String, Object> body = new java.util.LinkedHashMap<>();
        body.put("jsonrpc", McpSchema.JSONRPC_VERSION);
        body.put("id", null);
        body.put("error", error);
        String text;
        try {
            text = json.writeValueAsString(body);
        } catch (IOException e) {
            text = "{}";
        }
        return Response.text(status, "application/json", text);
    }

    /**
     * One SSE stream of an HTTP response: the messages the MCP session sends on it, framed as {@code message} events,
     * in a bounded queue; {@link #close()} ends it.
     */
    private final class Stream implements McpStreamableServerTransport {
        private final Sinks.Many<byte[]> events = Sinks.many()
                .unicast()
                .onBackpressureBuffer(Queues.<byte[]>get(STREAM_QUEUE).get());
        private final Sinks.Empty<Void> done = Sinks.empty();

        Flux<byte[]> events() {
            return events.asFlux().doFinally(s -> done.tryEmitEmpty());
        }

        Mono<Void> done() {
            return done.asMono();
        }

        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
            return sendMessage(message, null);
        }

        @Override
        public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message, String messageId) {
            return Mono.defer(() -> {
                StringBuilder event = new StringBuilder();
                if (messageId != null && messageId.chars().noneMatch(c -> c == '\n' || c == '\r')) {
                    event.append("id: ").append(messageId).append('\n');
                }
                event.append("event: message\n");
                String text;
                try {
                    text = json.writeValueAsString(message);
                } catch (IOException e) {
                    return Mono.error(e);
                }
                for (String line : text.split("\r\n|\r|\n", -1)) {
                    event.append("data: ").append(line).append('\n');
                }
                event.append('\n');
                Sinks.EmitResult result;
                synchronized (this) {
                    result = events.tryEmitNext(event.toString().getBytes(StandardCharsets.UTF_8));
                }
                return result.isSuccess()
                        ? Mono.empty()
                        : Mono.error(new IllegalStateException("the client's stream is closed or full: " + result));
            });
        }

        @Override
        public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
            return json.convertValue(data, typeRef);
        }

        @Override
        public Mono<Void> closeGracefully() {
            return Mono.fromRunnable(this::close);
        }

        @Override
        public void close() {
            synchronized (this) {
                events.tryEmitComplete();
            }
            done.tryEmitEmpty();
        }
    }
}
