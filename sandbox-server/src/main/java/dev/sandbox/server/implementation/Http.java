package dev.sandbox.server.implementation;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.implementation.wire.ErrorBodies;
import dev.sandbox.implementation.wire.StreamFrames;
import dev.sandbox.implementation.wire.WireJson;
import io.netty.buffer.ByteBuf;
import io.netty.channel.EventLoop;
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
    public record Frame(String type, byte[] json, String id) {
        /**
         * Bytes already framed for the response's format (several events written out), sent as they are.
         *
         * @param bytes the framed bytes
         * @return the frame
         */
        public static Frame raw(byte[] bytes) {
            return new Frame(null, bytes, null);
        }
    }

    /**
     * The stream format a request asks for.
     *
     * @param req the request
     * @return SSE when the client accepts {@code text/event-stream}, NDJSON otherwise
     */
    public static Format format(HttpServerRequest req) {
        String accept = req.requestHeaders().get(HttpHeaderNames.ACCEPT);
        return accept != null && accept.contains(StreamFrames.EVENT_STREAM) ? Format.SSE : Format.NDJSON;
    }

    /**
     * Sends a JSON answer.
     *
     * @param res the response
     * @param status the status
     * @param body the body: a wire record or a tree
     * @return completes when sent
     */
    public static Mono<Void> json(HttpServerResponse res, int status, Object body) {
        byte[] bytes = WireJson.bytes(body);
        return res.status(status)
                .header(HttpHeaderNames.CONTENT_TYPE, WireJson.APPLICATION_JSON)
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
        return bytes(req, limit).map(WireJson::parse);
    }

    /**
     * Reads a request body whole, refusing one over the limit with 413 (before reading it when it says its length).
     *
     * @param req the request
     * @param limit the most bytes accepted
     * @return the body, empty bytes when there is none
     */
    public static Mono<byte[]> bytes(HttpServerRequest req, int limit) {
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
                    .map(ByteArrayOutputStream::toByteArray);
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

    private static final byte[] SSE_HEARTBEAT = ": heartbeat\n\n".getBytes(StandardCharsets.US_ASCII);
    private static final Frame HEARTBEAT_FRAME = new Frame("heartbeat", StreamFrames.HEARTBEAT, null);

    private static byte[] sseHead(Frame f) {
        StringBuilder head = new StringBuilder(64);
        if (f.id() != null) {
            head.append("id: ").append(f.id()).append('\n');
        }
        head.append("event: ").append(f.type()).append("\ndata: ");
        return head.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * How many bytes a frame takes on the wire.
     *
     * @param f the event
     * @param format the framing
     * @return the size
     */
    static int frameSize(Frame f, Format format) {
        if (f.type() == null) {
            return f.json().length;
        }
        if (format == Format.NDJSON) {
            return f.json().length + 1;
        }
        if (f == HEARTBEAT_FRAME) {
            return SSE_HEARTBEAT.length;
        }
        return sseHead(f).length + f.json().length + 2;
    }

    /**
     * Writes a frame into a buffer.
     *
     * @param f the event
     * @param format the framing
     * @param out the buffer, with room for {@link #frameSize}
     * @param pos where to write
     * @return the position after the frame
     */
    static int writeFrame(Frame f, Format format, byte[] out, int pos) {
        if (f.type() == null) {
            System.arraycopy(f.json(), 0, out, pos, f.json().length);
            return pos + f.json().length;
        }
        if (format == Format.NDJSON) {
            System.arraycopy(f.json(), 0, out, pos, f.json().length);
            out[pos + f.json().length] = '\n';
            return pos + f.json().length + 1;
        }
        if (f == HEARTBEAT_FRAME) {
            System.arraycopy(SSE_HEARTBEAT, 0, out, pos, SSE_HEARTBEAT.length);
            return pos + SSE_HEARTBEAT.length;
        }
        byte[] head = sseHead(f);
        System.arraycopy(head, 0, out, pos, head.length);
        pos += head.length;
        System.arraycopy(f.json(), 0, out, pos, f.json().length);
        pos += f.json().length;
        out[pos++] = '\n';
        out[pos++] = '\n';
        return pos;
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
                        format == Format.SSE ? StreamFrames.EVENT_STREAM + "; charset=utf-8" : StreamFrames.NDJSON)
                .header(HttpHeaderNames.CACHE_CONTROL, "no-store");
        return res;
    }

    /**
     * Sends events as a stream: each event framed as it comes, an error that happens after the start as a last
     * {@code error} event, and a heartbeat every {@code heartbeat} while it lasts. Nothing is collected: events are
     * asked for as the connection takes them (a bounded number ahead), so a slow client slows the source.
     *
     * @param res the response
     * @param format the framing
     * @param events the events
     * @param heartbeat how often to send a heartbeat
     * @return completes when the stream ends
     */
    public static Mono<Void> stream(HttpServerResponse res, Format format, Flux<Frame> events, Duration heartbeat) {
        Flux<Frame> frames = events.onErrorResume(
                t -> Mono.just(new Frame("error", ErrorBodies.errorEvent(ErrorMapping.body(t)), null)));
        return streamHeaders(res, format)
                .send(packed(res, format, frames, heartbeat, 64))
                .then();
    }

    /**
     * Packs frames (with heartbeats) into the buffers written to a response, on its connection's event loop.
     *
     * @param res the response
     * @param format the framing
     * @param frames the events
     * @param heartbeat how often a quiet stream sends a heartbeat
     * @param prefetch how many frames to ask for ahead of the connection
     * @return the buffers
     */
    public static Flux<ByteBuf> packed(
            HttpServerResponse res, Format format, Flux<Frame> frames, Duration heartbeat, int prefetch) {
        EventLoop[] loop = new EventLoop[1];
        res.withConnection(c -> loop[0] = c.channel().eventLoop());
        return Flux.from(new Packer(frames, format, loop[0], prefetch, heartbeat));
    }

    /**
     * The heartbeat event.
     *
     * @return the frame
     */
    static Frame heartbeatFrame() {
        return HEARTBEAT_FRAME;
    }
}
