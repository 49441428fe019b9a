package dev.sandbox.server.implementation;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * One HTTP request to a server in a sandbox, over one connection into it ({@link
 * dev.sandbox.SandboxPorts#connect}): the request is written with Netty's HTTP/1.1 encoder ({@code Connection:
 * close}, the client's headers less the hop-by-hop ones and the server's token), the answer read with Netty's
 * decoder, bounded (initial line 4 KiB, headers 64 KiB, chunks 64 KiB), and streamed to the client as the client
 * reads it. The sandbox's answer is hostile: an answer that does not parse is a 502, and nothing of it is held whole.
 */
final class PortHttp {
    private static final int MAX_INITIAL_LINE = 4096;
    private static final int MAX_HEADERS = 64 * 1024;
    private static final int MAX_CHUNK = 64 * 1024;

    /** Headers that belong to one connection, not to the message (RFC 9110 7.6.1), and the server's own. */
    private static final Set<String> DROPPED = Set.of(
            "connection",
            "keep-alive",
            "proxy-connection",
            "proxy-authenticate",
            "proxy-authorization",
            "te",
            "trailer",
            "transfer-encoding",
            "upgrade",
            "authorization",
            "cookie");

    private PortHttp() {}

    /**
     * Proxies the request.
     *
     * @param req the client's request
     * @param res the client's response
     * @param connect opens the connection into the sandbox: {@code (bytes to send) -> bytes answered}
     * @param pathAndQuery what to ask the sandbox's server for
     * @param port the port, for the Host header
     * @param keptCookies the client's cookies to pass on ({@code name=value; ...}), without the server's token
     * @return completes when the answer was sent
     */
    static Mono<Void> proxy(
            HttpServerRequest req,
            HttpServerResponse res,
            BiFunction<Integer, Publisher<ByteBuffer>, Flux<ByteBuffer>> connect,
            String pathAndQuery,
            int port,
            String keptCookies) {
        HttpRequest head = new DefaultHttpRequest(HttpVersion.HTTP_1_1, req.method(), pathAndQuery);
        for (Map.Entry<String, String> h : req.requestHeaders()) {
            if (!DROPPED.contains(h.getKey().toLowerCase(Locale.ROOT))) {
                head.headers().add(h.getKey(), h.getValue());
            }
        }
        head.headers().set(HttpHeaderNames.HOST, "127.0.0.1:" + port);
        head.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        if (!keptCookies.isEmpty()) {
            head.headers().set(HttpHeaderNames.COOKIE, keptCookies);
        }
        boolean hasBody = req.requestHeaders().contains(HttpHeaderNames.CONTENT_LENGTH)
                || req.requestHeaders().contains(HttpHeaderNames.TRANSFER_ENCODING);
        if (hasBody && !head.headers().contains(HttpHeaderNames.CONTENT_LENGTH)) {
            head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
        }
        if (req.method().equals(HttpMethod.HEAD)) {
            hasBody = false;
        }
        Encoder enc = new Encoder();
        Flux<ByteBuffer> request = Flux.concat(
                Mono.fromSupplier(() -> enc.encode(head)),
                hasBody ? req.receive().map(b -> enc.encode(new DefaultHttpContent(b.retain()))) : Flux.empty(),
                Mono.fromSupplier(() -> enc.encode(LastHttpContent.EMPTY_LAST_CONTENT)));
        Decoder dec = new Decoder(req.method().equals(HttpMethod.HEAD));
        Flux<HttpObject> answer = connect.apply(port, request)
                .concatMapIterable(dec::decode)
                .concatWith(Flux.defer(() -> Flux.fromIterable(dec.finish())))
                .doFinally(s -> dec.close());
        return answer.switchOnFirst((first, all) -> {
                    if (!(first.get() instanceof HttpResponse r)) {
                        return first.hasError()
                                ? Mono.error(first.getThrowable())
                                : Mono.error(
                                        new HttpError(502, "BadGateway", "the sandbox's server sent no HTTP answer"));
                    }
                    res.status(r.status());
                    HttpHeaders out = res.responseHeaders();
                    for (Map.Entry<String, String> h : r.headers()) {
                        if (!DROPPED.contains(h.getKey().toLowerCase(Locale.ROOT))) {
                            out.add(h.getKey(), h.getValue());
                        }
                    }
                    Flux<ByteBuf> body = all.skip(1).handle((o, sink) -> {
                        if (o instanceof HttpContent c && c.content().isReadable()) {
                            sink.next(c.content());
                        }
                    });
                    return res.send(body).then();
                })
                .then();
    }

    /** The request's bytes, from Netty's encoder. */
    private static final class Encoder {
        private final EmbeddedChannel ch = new EmbeddedChannel(new HttpRequestEncoder());

        synchronized ByteBuffer encode(Object message) {
            ch.writeOutbound(message);
            ByteBuf all = Unpooled.buffer();
            for (ByteBuf b; (b = ch.readOutbound()) != null; ) {
                all.writeBytes(b);
                b.release();
            }
            ByteBuffer out = ByteBuffer.wrap(ByteBufUtil.getBytes(all));
            all.release();
            return out;
        }
    }

    /** The answer's parts, from Netty's decoder; their content copied out of its buffers. */
    private static final class Decoder {
        private final EmbeddedChannel ch;

        Decoder(boolean head) {
            // lines may end in a bare LF, as browsers and curl accept (CGI scripts write them): one answer to one
            // request on a connection that closes after it, so there is nothing to smuggle
            io.netty.handler.codec.http.HttpDecoderConfig config = new io.netty.handler.codec.http.HttpDecoderConfig()
                    .setMaxInitialLineLength(MAX_INITIAL_LINE)
                    .setMaxHeaderSize(MAX_HEADERS)
                    .setMaxChunkSize(MAX_CHUNK)
                    .setStrictLineParsing(false);
            ch = new EmbeddedChannel(new HttpResponseDecoder(config) {
                @Override
                protected boolean isContentAlwaysEmpty(io.netty.handler.codec.http.HttpMessage msg) {
                    // a HEAD answer has headers only, whatever its Content-Length says
                    return head || super.isContentAlwaysEmpty(msg);
                }
            });
        }

        synchronized List<HttpObject> decode(ByteBuffer b) {
            ch.writeInbound(Unpooled.wrappedBuffer(b));
            return drain();
        }

        synchronized List<HttpObject> finish() {
            ch.finish(); // the end of the connection ends an answer without a length
            return drain();
        }

        synchronized void close() {
            for (Object o; (o = ch.readInbound()) != null; ) {
                ReferenceCountUtil.release(o);
            }
            ch.finishAndReleaseAll();
        }

        private List<HttpObject> drain() {
            List<HttpObject> out = new ArrayList<>();
            for (Object o; (o = ch.readInbound()) != null; ) {
                HttpObject h = (HttpObject) o;
                if (h.decoderResult().isFailure()) {
                    ReferenceCountUtil.release(o);
                    throw new HttpError(
                            502,
                            "BadGateway",
                            "the sandbox's server sent an answer that is not HTTP/1.1: "
                                    + h.decoderResult().cause().getMessage());
                }
                if (h instanceof HttpContent c) {
                    ByteBuf copy = Unpooled.wrappedBuffer(ByteBufUtil.getBytes(c.content()));
                    boolean last = h instanceof LastHttpContent;
                    c.release();
                    out.add(
                            last
                                    ? new io.netty.handler.codec.http.DefaultLastHttpContent(copy)
                                    : new DefaultHttpContent(copy));
                } else {
                    out.add(h);
                }
            }
            return out;
        }
    }
}
