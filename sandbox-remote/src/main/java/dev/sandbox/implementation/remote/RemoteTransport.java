package dev.sandbox.implementation.remote;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.BackendException;
import dev.sandbox.ProviderClosedException;
import dev.sandbox.implementation.Version;
import dev.sandbox.implementation.wire.LineBatch;
import dev.sandbox.implementation.wire.LineSplitter;
import dev.sandbox.implementation.wire.StreamFrames;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshakeException;
import io.netty.handler.ssl.SslContext;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.channel.AbortedException;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.HttpClientResponse;
import reactor.netty.http.client.PrematureCloseException;
import reactor.netty.http.client.WebsocketClientSpec;
import reactor.netty.http.websocket.WebsocketInbound;
import reactor.netty.http.websocket.WebsocketOutbound;
import reactor.netty.resources.ConnectionProvider;
import reactor.util.retry.Retry;
import reactor.util.retry.RetryBackoffSpec;

/**
 * The remote provider's HTTP client: JSON calls, NDJSON streams, raw uploads and downloads, each with the bearer
 * token, and every error answer turned back into the SDK exception it stands for. Control calls have the response
 * timeout; streams and long calls ({@code run}, waiting for an exit) do not, since they last as long as the command.
 */
public final class RemoteTransport implements AutoCloseable {
    private static final byte[] EMPTY = new byte[0];
    /** Chunks read ahead of demand per stream; each is at most one socket read. */
    private static final int STREAM_PREFETCH = 4;

    private final String baseUrl;
    private final Supplier<char[]> token;
    private final ConnectionProvider pool;
    private final HttpClient control;
    private final HttpClient streaming;
    private final int reconnectAttempts;
    private final Duration reconnectBackoff;
    private final BusyRetry busy;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final RemoteChannel channel;

    /**
     * Creates the transport.
     *
     * @param baseUrl the server's base URL, such as {@code http://127.0.0.1:7070}
     * @param token supplies the bearer token; called for each request and must not block
     * @param connectTimeout how long a connection may take
     * @param responseTimeout how long a control call may go without reading from the server
     * @param maxConnections the pool's size (each open stream holds one connection)
     * @param reconnectAttempts how often a dropped stream is reconnected in a row
     * @param reconnectBackoff the first pause before a reconnect, doubled each time up to 2 seconds
     * @param busyAttempts the most times a request answered {@code 503 ServerBusy} is sent (see {@link BusyRetry})
     * @param busyWithin the longest time such a request is retried for
     * @param tls the TLS context of an {@code https} URL ({@link RemoteTls#clientContext}), {@code null} for {@code
     *     http}
     * @param commandChannel whether {@code run} and {@code exec} go over one WebSocket ({@link RemoteChannel}) rather
     *     than a request each
     */
    public RemoteTransport(
            String baseUrl,
            Supplier<char[]> token,
            Duration connectTimeout,
            Duration responseTimeout,
            int maxConnections,
            int reconnectAttempts,
            Duration reconnectBackoff,
            int busyAttempts,
            Duration busyWithin,
            SslContext tls,
            boolean commandChannel) {
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.token = token;
        this.reconnectAttempts = reconnectAttempts;
        this.reconnectBackoff = reconnectBackoff;
        this.busy = new BusyRetry(this.baseUrl, busyAttempts, busyWithin);
        this.pool = ConnectionProvider.builder("sandbox-remote")
                .maxConnections(maxConnections)
                .pendingAcquireMaxCount(4 * maxConnections)
                .pendingAcquireTimeout(connectTimeout.plus(responseTimeout))
                .maxIdleTime(Duration.ofSeconds(30))
                .build();
        HttpClient base = HttpClient.create(pool)
                .baseUrl(this.baseUrl)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int)
                        Math.min(Integer.MAX_VALUE, connectTimeout.toMillis()))
                .headersWhen(h -> Mono.fromSupplier(() -> h.set(HttpHeaderNames.AUTHORIZATION, authorization())));
        if (tls != null) {
            // the context made when the provider was built: reactor-netty's default would read the JVM's trust store
            // on the event loop of the first connection
            base = base.secure(spec -> spec.sslContext(tls));
        }
        this.streaming = base;
        Version.get(); // reads a resource: load it here, not on an event loop
        this.control = base.responseTimeout(responseTimeout);
        this.channel = commandChannel ? new RemoteChannel(this) : null;
    }

    /**
     * The policy that sends a request again after a {@code 503 ServerBusy} answer.
     *
     * @return the policy
     */
    public BusyRetry busyRetry() {
        return busy;
    }

    /**
     * The command channel, when it is on and the server has it.
     *
     * @return the channel, or {@code null} to send commands as REST requests
     */
    public RemoteChannel channel() {
        RemoteChannel c = channel;
        return c != null && c.usable() ? c : null;
    }

    /** The bearer header of a request; refuses every request once the transport is closed. */
    private String authorization() {
        if (closed.get()) {
            throw new ProviderClosedException(RemoteSession.PROVIDER);
        }
        return bearer();
    }

    private String bearer() {
        char[] t = token.get();
        if (t == null || t.length == 0) {
            throw new BackendException("the remote provider's token supplier gave no token", null);
        }
        return "Bearer " + CharBuffer.wrap(t);
    }

    /**
     * The server's base URL.
     *
     * @return the URL
     */
    public String baseUrl() {
        return baseUrl;
    }

    /**
     * Encodes a path segment or query value.
     *
     * @param s the raw text
     * @return the encoded text
     */
    public static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /**
     * A fresh random id for execs and stdin uploads (not a secret: the token guards every route).
     *
     * @return 32 hex digits
     */
    public static String newId() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return String.format("%016x%016x", r.nextLong(), r.nextLong());
    }

    private static Mono<ByteBuf> jsonBody(byte[] body) {
        return body == null ? Mono.empty() : Mono.fromSupplier(() -> Unpooled.wrappedBuffer(body));
    }

    /** The headers of a JSON request; a body goes with its length (one write, not chunked). */
    private static Consumer<io.netty.handler.codec.http.HttpHeaders> jsonHeaders(byte[] body) {
        return h -> {
            if (body != null) {
                h.set(HttpHeaderNames.CONTENT_TYPE, WireJson.APPLICATION_JSON);
            }
            h.set(HttpHeaderNames.CONTENT_LENGTH, body == null ? 0 : body.length);
            h.set(HttpHeaderNames.ACCEPT, WireJson.APPLICATION_JSON);
        };
    }

    /**
     * A control call: sends an optional JSON body and reads an optional JSON answer, within the response timeout.
     *
     * @param method the method
     * @param path the path and query, starting with {@code /v1/}
     * @param body the body (a wire record or a tree) or {@code null}
     * @return the answer, or empty for an answer without a body
     */
    public Mono<JsonNode> call(HttpMethod method, String path, Object body) {
        return exchange(control, method, path, body);
    }

    /**
     * A call whose answer may take as long as a command runs; no response timeout.
     *
     * @param method the method
     * @param path the path and query
     * @param body the body (a wire record or a tree) or {@code null}
     * @return the answer, or empty for an answer without a body
     */
    public Mono<JsonNode> longCall(HttpMethod method, String path, Object body) {
        return exchange(streaming, method, path, body, true);
    }

    /**
     * A command's {@code run}: like {@link #longCall}, but the answer is delivered on the event loop that read it
     * (a non-blocking thread, as the local provider's {@code run} answers on one), saving a thread hop per run.
     *
     * @param method the method
     * @param path the path and query
     * @param body the body (a wire record or a tree) or {@code null}
     * @return the answer, or empty for an answer without a body
     */
    public Mono<JsonNode> runCall(HttpMethod method, String path, Object body) {
        return exchange(streaming, method, path, body, false);
    }

    /**
     * A control call whose answer is delivered on the event loop that read it, for internal calls whose answer does
     * no more than start the next one (an exec acknowledgement).
     *
     * @param method the method
     * @param path the path and query
     * @param body the body (a wire record or a tree) or {@code null}
     * @return the answer, or empty for an answer without a body
     */
    public Mono<JsonNode> quickCall(HttpMethod method, String path, Object body) {
        return exchange(control, method, path, body, false);
    }

    private Mono<JsonNode> exchange(HttpClient client, HttpMethod method, String path, Object body) {
        return exchange(client, method, path, body, true);
    }

    private Mono<JsonNode> exchange(
            HttpClient client, HttpMethod method, String path, Object body, boolean toBlockingThread) {
        return Mono.defer(() -> {
            byte[] bytes = body == null ? null : WireJson.bytes(body);
            Mono<JsonNode> answer = client.headers(jsonHeaders(bytes))
                    .request(method)
                    .uri(path)
                    .send(jsonBody(bytes))
                    .responseSingle((res, content) ->
                            content.asByteArray().defaultIfEmpty(EMPTY).flatMap(b -> answer(res, b)))
                    .retryWhen(busy)
                    .onErrorMap(this::transportError);
            // answers arrive on an event loop: hand them to a thread where the caller may block, as the local
            // provider's blocking operations do
            return toBlockingThread ? answer.publishOn(Schedulers.boundedElastic()) : answer;
        });
    }

    private static Mono<JsonNode> answer(HttpClientResponse res, byte[] bytes) {
        int code = res.status().code();
        if (code >= 400) {
            return Mono.error(error(res, code, bytes));
        }
        if (bytes.length == 0) {
            return Mono.empty();
        }
        JsonNode n = WireJson.lenient(bytes);
        if (n == null) {
            return Mono.error(RemoteErrors.protocol("the sandbox server sent a body that is not JSON"));
        }
        return Mono.just(n);
    }

    /** The error an answer stands for; the guard's {@code 503 ServerBusy} becomes a {@code ServerBusyException}. */
    private static RuntimeException error(HttpClientResponse res, int code, byte[] body) {
        return BusyRetry.answer(code, res.responseHeaders().get(HttpHeaderNames.RETRY_AFTER), body);
    }

    /**
     * Opens an NDJSON stream. An error answer fails the stream with its SDK exception; a body that ends in the middle
     * of a line fails it with a drop, which {@link #isDrop} recognises.
     *
     * @param method the method
     * @param path the path and query
     * @param body the body (a wire record or a tree) or {@code null}
     * @param onResponse called with the response before its body is read
     * @return the decoded lines, read as they are requested
     */
    public Flux<LineSplitter.Sized> stream(
            HttpMethod method, String path, Object body, Consumer<HttpClientResponse> onResponse) {
        return stream(method, path, body, onResponse, false);
    }

    /**
     * Opens an NDJSON stream, optionally asking the server for {@code lines} frames (see {@link LineBatch}). The
     * body's chunks are handed to a {@link Schedulers#parallel()} worker (a few ahead of demand) and decoded there,
     * so the connection's event loop only reads; items are delivered on that worker.
     *
     * @param method the method
     * @param path the path and query
     * @param body the body (a wire record or a tree) or {@code null}
     * @param onResponse called with the response before its body is read
     * @param lineBatches whether to ask for {@code lines} frames ({@code Sandbox-Batch: lines})
     * @return the decoded lines, read as they are requested
     */
    public Flux<LineSplitter.Sized> stream(
            HttpMethod method, String path, Object body, Consumer<HttpClientResponse> onResponse, boolean lineBatches) {
        byte[] bytes = body == null ? null : WireJson.bytes(body);
        return streaming
                .headers(h -> {
                    jsonHeaders(bytes).accept(h);
                    h.set(HttpHeaderNames.ACCEPT, StreamFrames.NDJSON);
                    if (lineBatches) {
                        h.set(StreamFrames.BATCH_HEADER, StreamFrames.BATCH_LINES);
                    }
                })
                .request(method)
                .uri(path)
                .send(jsonBody(bytes))
                .response((res, content) -> {
                    int code = res.status().code();
                    if (code >= 400) {
                        return content.aggregate()
                                .asByteArray()
                                .defaultIfEmpty(EMPTY)
                                .flatMapMany(b -> Flux.error(error(res, code, b)));
                    }
                    onResponse.accept(res);
                    LineSplitter splitter = new LineSplitter();
                    // the event loop only reads: chunks are handed to a worker (a few ahead of demand) and decoded
                    // there, a lines frame into its line events
                    return content.asByteArray()
                            .publishOn(Schedulers.parallel(), STREAM_PREFETCH)
                            .concatMapIterable(splitter::split, 1)
                            .concatWith(Flux.defer(() -> splitter.pending()
                                    ? Flux.error(new StreamDropped("the stream ended in the middle of a line"))
                                    : Flux.empty()));
                })
                .retryWhen(busy);
    }

    /**
     * Uploads raw bytes as a streamed (chunked) body, read from the publisher as the connection takes them. A {@code
     * 503 ServerBusy} answer is not retried (the content may not be readable twice): it fails the upload with a
     * retryable {@code ServerBusyException}.
     *
     * @param method the method
     * @param path the path and query
     * @param content the bytes
     * @param longCall whether the answer may take long (no response timeout)
     * @return the JSON answer, or empty
     */
    public Mono<JsonNode> upload(HttpMethod method, String path, Publisher<ByteBuffer> content, boolean longCall) {
        return (longCall ? streaming : control)
                .headers(h -> {
                    h.set(HttpHeaderNames.CONTENT_TYPE, WireJson.OCTET_STREAM);
                    h.set(HttpHeaderNames.ACCEPT, WireJson.APPLICATION_JSON);
                })
                .request(method)
                .uri(path)
                .send(Flux.from(content).map(b -> Unpooled.wrappedBuffer(copy(b))))
                .responseSingle(
                        (res, body) -> body.asByteArray().defaultIfEmpty(EMPTY).flatMap(bytes -> answer(res, bytes)))
                .onErrorMap(this::transportError)
                .publishOn(Schedulers.boundedElastic());
    }

    private static byte[] copy(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    /**
     * Downloads raw bytes, read as they are requested.
     *
     * @param path the path and query
     * @return the bytes in chunks
     */
    public Flux<ByteBuffer> download(String path) {
        return streaming
                .headers(h -> h.set(HttpHeaderNames.ACCEPT, WireJson.OCTET_STREAM))
                .get()
                .uri(path)
                .response((res, content) -> {
                    int code = res.status().code();
                    if (code >= 400) {
                        return content.aggregate()
                                .asByteArray()
                                .defaultIfEmpty(EMPTY)
                                .flatMapMany(b -> Flux.error(error(res, code, b)));
                    }
                    return content.asByteArray().map(ByteBuffer::wrap);
                })
                .retryWhen(busy)
                .onErrorMap(this::transportError);
    }

    /**
     * Opens a WebSocket (with the bearer token on the upgrade request) and runs a handler on it; the connection
     * closes when the handler's publisher ends or its subscriber cancels. A refused upgrade fails with {@link
     * WebSocketRefused}, carrying the HTTP status.
     *
     * @param path the path and query
     * @param maxFrameBytes the largest frame accepted from the server
     * @param handler reads and writes the socket
     * @param <T> what the handler emits
     * @return what the handler emits
     */
    public <T> Flux<T> websocket(
            String path,
            int maxFrameBytes,
            BiFunction<? super WebsocketInbound, ? super WebsocketOutbound, ? extends Publisher<T>> handler) {
        return streaming
                .websocket(WebsocketClientSpec.builder()
                        .maxFramePayloadLength(maxFrameBytes)
                        .handlePing(true)
                        .build())
                .uri(path)
                .handle(handler)
                .onErrorMap(
                        WebSocketClientHandshakeException.class,
                        e -> new WebSocketRefused(
                                e.response() == null ? 0 : e.response().status().code(), e))
                .onErrorMap(this::transportError);
    }

    /** The server answered a WebSocket upgrade with an HTTP error. */
    public static final class WebSocketRefused extends BackendException {
        private static final long serialVersionUID = 1L;
        private final int status;

        WebSocketRefused(int status, Throwable cause) {
            super(
                    "the sandbox server refused the WebSocket with HTTP " + status,
                    cause,
                    RemoteErrors.retryableStatus(status));
            this.status = status;
        }

        /**
         * The HTTP status of the refusal.
         *
         * @return the status, 0 when unknown
         */
        public int status() {
            return status;
        }
    }

    /**
     * A retry policy for dropped streams: a few reconnects with a growing pause, counting again after progress.
     *
     * @return the policy
     */
    public RetryBackoffSpec reconnects() {
        return Retry.backoff(reconnectAttempts, reconnectBackoff)
                .maxBackoff(Duration.ofSeconds(2))
                .transientErrors(true)
                .filter(RemoteTransport::isDrop)
                .onRetryExhaustedThrow(
                        (spec, signal) -> RemoteErrors.dropped(baseUrl, signal.totalRetriesInARow(), signal.failure()));
    }

    /**
     * Whether an error means the connection dropped (worth a reconnect) rather than an answer from the server.
     *
     * @param t the error
     * @return {@code true} for a drop
     */
    public static boolean isDrop(Throwable t) {
        return t instanceof StreamDropped
                || t instanceof PrematureCloseException
                || t instanceof AbortedException
                || t instanceof TimeoutException
                || t instanceof IOException;
    }

    /**
     * Maps a transport failure (not an answer of the server) to a {@link BackendException} naming the server (see
     * {@link RemoteErrors#transport}).
     *
     * @param t the error
     * @return the error to signal
     */
    public Throwable transportError(Throwable t) {
        return RemoteErrors.transport(baseUrl, t, closed.get());
    }

    /** A stream that ended before its last event: the connection dropped. */
    public static final class StreamDropped extends IOException {
        private static final long serialVersionUID = 1L;

        /**
         * Creates the error.
         *
         * @param message what was seen
         */
        public StreamDropped(String message) {
            super(message);
        }
    }

    /**
     * Fires a call and forgets it (a release or a cancel), bounded by the response timeout; failures are ignored.
     *
     * @param method the method
     * @param path the path
     */
    public void fireAndForget(HttpMethod method, String path) {
        call(method, path, null).onErrorResume(e -> Mono.empty()).subscribe();
    }

    /** Closes the connection pool without waiting; requests fail with {@code ProviderClosedException} from now on. */
    @Override
    public void close() {
        closeAsync().subscribe();
    }

    /**
     * Refuses new requests from now on and closes the connection pool, and with it every open connection.
     *
     * @return completes once the pool is closed
     */
    public Mono<Void> closeAsync() {
        closed.set(true);
        if (channel != null) {
            channel.close();
        }
        return pool.disposeLater();
    }
}
