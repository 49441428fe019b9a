package dev.sandbox.server.implementation;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.implementation.remote.Wire;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/** Small helpers for answers, request bodies, query parameters and event streams. */
public final class Http {
    private Http() {}

    /** How a stream is framed on the wire. */
    public enum Format {
        /** One JSON object per line ({@code application/x-ndjson}); the default. */
        NDJSON,
        /** Server-sent events ({@code text/event-stream}), chosen with {@code Accept: text/event-stream}. */
        SSE
    }

    /**
     * One event of a stream.
     *
     * @param type the event's type (its SSE event name)
     * @param json the event as one compact JSON object
     * @param id the SSE id, or {@code null}
     */
    public record Frame(String type, byte[] json, String id) {}

    /**
     * The stream format a request asks for.
     *
     * @param req the request
     * @return SSE when the client accepts {@code text/event-stream}, NDJSON otherwise
     */
    public static Format format(HttpServerRequest req) {
        String accept = req.requestHeaders().get(HttpHeaderNames.ACCEPT);
        return accept != null && accept.contains(Wire.EVENT_STREAM) ? Format.SSE : Format.NDJSON;
    }

    /**
     * Sends a JSON answer.
     *
     * @param res the response
     * @param status the status
     * @param body the body
     * @return completes when sent
     */
    public static Mono<Void> json(HttpServerResponse res, int status, JsonNode body) {
        byte[] bytes = Wire.bytes(body);
        return res.status(status)
                .header(HttpHeaderNames.CONTENT_TYPE, Wire.APPLICATION_JSON)
                .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(bytes.length))
                .sendByteArray(Mono.just(bytes))
                .then();
    }

    /**
     * Sends an empty 204 answer.
     *
     * @param res the response
     * @return completes when sent
     */
    public static Mono<Void> noContent(HttpServerResponse res) {
        return res.status(204).send();
    }

    /**
     * Sends an error answer with its mapped status and JSON body.
     *
     * @param res the response
     * @param t the error
     * @param fileRoute whether the request was a files route
     * @return completes when sent
     */
    public static Mono<Void> error(HttpServerResponse res, Throwable t, boolean fileRoute) {
        int status = ErrorMapping.status(t, fileRoute);
        if (status == 401) {
            res.header(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer");
        }
        return json(res, status, ErrorMapping.body(t));
    }

    /**
     * Reads a JSON request body, refusing one over the limit with 413 (before reading it when it says its length).
     *
     * @param req the request
     * @param limit the most bytes accepted
     * @return the parsed body
     */
    public static Mono<JsonNode> body(HttpServerRequest req, int limit) {
        return Mono.defer(() -> {
            String length = req.requestHeaders().get(HttpHeaderNames.CONTENT_LENGTH);
            if (length != null) {
                long n;
                try {
                    n = Long.parseLong(length.trim());
                } catch (NumberFormatException e) {
                    return Mono.error(new HttpError(400, "MalformedRequest", "Content-Length is not a number"));
                }
                if (n > limit) {
                    return Mono.error(tooLarge(n, limit));
                }
            }
            return req.receive()
                    .asByteArray()
                    .reduce(new ByteArrayOutputStream(), (out, chunk) -> {
                        if (out.size() + (long) chunk.length > limit) {
                            throw tooLarge(out.size() + (long) chunk.length, limit);
                        }
                        out.write(chunk, 0, chunk.length);
                        return out;
                    })
                    .defaultIfEmpty(new ByteArrayOutputStream())
                    .map(out -> Wire.parse(out.toByteArray()));
        });
    }

    private static HttpError tooLarge(long n, int limit) {
        return new HttpError(
                413,
                "PayloadTooLarge",
                "the request body is over the limit of " + limit + " bytes (at least " + n + ")");
    }

    /**
     * A raw request body as copied buffers, read a few socket reads ahead of demand and joined (see {@link
     * Coalescing}): a consumer that asks for one buffer at a time (a process's stdin, a file being written) would
     * otherwise wait for a read, on another thread, per buffer.
     *
     * @param req the request
     * @return the body
     */
    public static Flux<ByteBuffer> rawBody(HttpServerRequest req) {
        return Flux.from(new Coalescing(req.receive().asByteArray()));
    }

    /**
     * A query parameter.
     *
     * @param req the request
     * @param name its name
     * @return its first value, or {@code null}
     */
    public static String query(HttpServerRequest req, String name) {
        List<String> values = params(req).get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }

    /**
     * All query parameters.
     *
     * @param req the request
     * @return names to values
     */
    public static Map<String, List<String>> params(HttpServerRequest req) {
        return new QueryStringDecoder(req.uri()).parameters();
    }

    /**
     * A whole-number query parameter.
     *
     * @param req the request
     * @param name its name
     * @param dflt the value when absent
     * @return the value
     */
    public static long longQuery(HttpServerRequest req, String name, long dflt) {
        String v = query(req, name);
        if (v == null || v.isEmpty()) {
            return dflt;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new dev.sandbox.InvalidArgumentException(name, name + " must be a whole number, got '" + v + "'");
        }
    }

    /**
     * A true/false query parameter.
     *
     * @param req the request
     * @param name its name
     * @param dflt the value when absent
     * @return the value
     */
    public static boolean boolQuery(HttpServerRequest req, String name, boolean dflt) {
        String v = query(req, name);
        if (v == null || v.isEmpty()) {
            return dflt;
        }
        if (v.equals("true") || v.equals("1")) {
            return true;
        }
        if (v.equals("false") || v.equals("0")) {
            return false;
        }
        throw new dev.sandbox.InvalidArgumentException(name, name + " must be true or false, got '" + v + "'");
    }

    /**
     * Frames one event for the wire.
     *
     * @param f the event
     * @param format the framing
     * @return the bytes
     */
    public static byte[] frame(Frame f, Format format) {
        if (format == Format.NDJSON) {
            byte[] out = new byte[f.json().length + 1];
            System.arraycopy(f.json(), 0, out, 0, f.json().length);
            out[out.length - 1] = '\n';
            return out;
        }
        StringBuilder head = new StringBuilder(64);
        if (f.id() != null) {
            head.append("id: ").append(f.id()).append('\n');
        }
        head.append("event: ").append(f.type()).append("\ndata: ");
        byte[] h = head.toString().getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[h.length + f.json().length + 2];
        System.arraycopy(h, 0, out, 0, h.length);
        System.arraycopy(f.json(), 0, out, h.length, f.json().length);
        out[out.length - 2] = '\n';
        out[out.length - 1] = '\n';
        return out;
    }

    /**
     * The heartbeat of a stream format: a line readers skip, sent while a stream is otherwise quiet.
     *
     * @param format the framing
     * @return the bytes
     */
    public static byte[] heartbeat(Format format) {
        return format == Format.NDJSON
                ? frame(new Frame("heartbeat", Wire.HEARTBEAT, null), format)
                : ": heartbeat\n\n".getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Starts a 200 event-stream answer with the headers of its format.
     *
     * @param res the response
     * @param format the framing
     * @return the response
     */
    public static HttpServerResponse streamHeaders(HttpServerResponse res, Format format) {
        res.status(200)
                .header(
                        HttpHeaderNames.CONTENT_TYPE,
                        format == Format.SSE ? Wire.EVENT_STREAM + "; charset=utf-8" : Wire.NDJSON)
                .header(HttpHeaderNames.CACHE_CONTROL, "no-store");
        return res;
    }

    /**
     * Sends events as a stream: each event framed as it comes, an error that happens after the start as a last
     * {@code error} event, and a heartbeat every {@code heartbeat} while it lasts. Nothing is collected: each
     * event is written when the connection asks for more, so a slow client slows the source.
     *
     * @param res the response
     * @param format the framing
     * @param events the events
     * @param heartbeat how often to send a heartbeat
     * @return completes when the stream ends
     */
    public static Mono<Void> stream(HttpServerResponse res, Format format, Flux<Frame> events, Duration heartbeat) {
        Flux<ByteBuf> body = events.map(f -> frame(f, format))
                .onErrorResume(t ->
                        Mono.just(frame(new Frame("error", Wire.errorEvent(ErrorMapping.body(t)), null), format)))
                .map(Unpooled::wrappedBuffer);
        return streamHeaders(res, format)
                .send(withHeartbeats(body, format, heartbeat))
                .then();
    }

    /**
     * Merges heartbeats into a body until it ends.
     *
     * @param body the body
     * @param format the framing
     * @param every how often
     * @return the merged body
     */
    public static Flux<ByteBuf> withHeartbeats(Flux<ByteBuf> body, Format format, Duration every) {
        return Flux.defer(() -> {
            Sinks.Empty<Void> done = Sinks.empty();
            byte[] beat = heartbeat(format);
            Flux<ByteBuf> beats = Flux.interval(every, every)
                    .onBackpressureDrop()
                    .map(i -> Unpooled.wrappedBuffer(beat))
                    .takeUntilOther(done.asMono());
            return Flux.merge(body.doFinally(s -> done.tryEmitEmpty()), beats);
        });
    }
}
