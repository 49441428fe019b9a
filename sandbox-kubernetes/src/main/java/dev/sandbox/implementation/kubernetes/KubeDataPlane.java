package dev.sandbox.implementation.kubernetes;

import dev.sandbox.BackendException;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.internal.SSLUtils;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelOption;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshakeException;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContext;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.client.WebsocketClientSpec;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * The data plane to pods: {@code exec} over a WebSocket to the API server ({@code v4.channel.k8s.io}: every message
 * starts with its channel, 0 stdin, 1 stdout, 2 stderr, 3 the final status), on a small event-loop group with
 * demand-driven reads. A slow reader stops reading the socket; the API server, the kubelet and the process then wait
 * in turn. The upgrade request carries the client's credentials from the fabric8 {@link Config} (bearer token, client
 * certificate, or basic credentials), so RBAC and audit apply as to any other call.
 *
 * <p>Everything that arrives is bounded: one message at most {@link #MAX_MESSAGE} bytes, stderr and the status kept
 * to {@link #MAX_SIDE_CHANNEL} bytes.
 */
public final class KubeDataPlane implements AutoCloseable {
    /** The largest WebSocket message accepted from the API server. */
    static final int MAX_MESSAGE = 1024 * 1024 + 1;

    /** How much of stderr and of the status message is kept. */
    static final int MAX_SIDE_CHANNEL = 4096;

    /** The sub-protocol: stable since Kubernetes 1.4 and still served; v5 (stdin close) needs 1.29+. */
    static final String PROTOCOL = "v4.channel.k8s.io";

    private final Config config;
    private final LoopResources loops;
    private final HttpClient http;

    /**
     * Prepares connections to the API server of a client configuration; nothing is connected yet.
     *
     * @param config the client configuration (master URL, credentials, trust)
     * @param eventLoopThreads how many event-loop threads serve every connection
     */
    public KubeDataPlane(Config config, int eventLoopThreads) {
        this.config = config;
        this.loops = LoopResources.create("sandbox-kubernetes", 1, eventLoopThreads, true);
        URI master = URI.create(config.getMasterUrl());
        HttpClient h = HttpClient.create(ConnectionProvider.newConnection())
                .runOn(loops)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
                // at the head, below TLS: the bytes the socket carries (a measuring hook, see WireBytes)
                .doOnChannelInit((observer, channel, address) ->
                        channel.pipeline().addFirst("dev.sandbox.wire-bytes", WireBytes.HANDLER))
                .baseUrl(stripSlash(config.getMasterUrl()))
                .headers(headers -> headers.set(HttpHeaderNames.USER_AGENT, "dev.sandbox"))
                .headersWhen(headers -> credentials()
                        .map(value -> headers.set(HttpHeaderNames.AUTHORIZATION, value))
                        .defaultIfEmpty(headers));
        if ("https".equalsIgnoreCase(master.getScheme())) {
            SslContext tls = tls(config);
            boolean verifyHost = !config.isTrustCerts();
            h = h.secure(spec -> spec.sslContext(tls).handlerConfigurator(handler -> {
                if (!verifyHost) {
                    SSLEngine engine = handler.engine();
                    SSLParameters p = engine.getSSLParameters();
                    p.setEndpointIdentificationAlgorithm(null);
                    engine.setSSLParameters(p);
                }
            }));
        }
        this.http = h;
    }

    private static String stripSlash(String url) {
        return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    }

    private static SslContext tls(Config config) {
        try {
            SSLContext jdk = SSLUtils.sslContext(config);
            return new JdkSslContext(
                    jdk,
                    true,
                    null,
                    (ciphers, defaults, supported) -> defaults.toArray(String[]::new),
                    null,
                    ClientAuth.NONE,
                    null,
                    false);
        } catch (Exception e) {
            throw new BackendException(
                    "cannot set up TLS to the Kubernetes API server " + config.getMasterUrl() + ": " + e.getMessage(),
                    e,
                    false);
        }
    }

    /** The Authorization header's value, read when a connection is made (a token provider may run a command). */
    private Mono<String> credentials() {
        return Mono.fromCallable(() -> {
                    String token = config.getOauthTokenProvider() != null
                            ? config.getOauthTokenProvider().getToken()
                            : firstNonBlank(config.getOauthToken(), config.getAutoOAuthToken());
                    if (token != null) {
                        return "Bearer " + token;
                    }
                    if (config.getUsername() != null && config.getPassword() != null) {
                        return "Basic "
                                + Base64.getEncoder()
                                        .encodeToString((config.getUsername() + ":" + config.getPassword())
                                                .getBytes(StandardCharsets.UTF_8));
                    }
                    return null; // a client certificate, or no credentials
                })
                .subscribeOn(Schedulers.boundedElastic());
    }

    private static String firstNonBlank(String a, String b) {
        return a != null && !a.isBlank() ? a : b != null && !b.isBlank() ? b : null;
    }

    /**
     * Runs a command in a pod's container, its stdin and stdout joined to a byte stream.
     *
     * @param namespace the pod's namespace
     * @param pod the pod
     * @param container the container
     * @param command the argv
     * @param stdin written in order as the socket can take it; the connection closes once the returned flux ends
     * @param stderr receives what the command writes on stderr, at most {@link #MAX_SIDE_CHANNEL} characters in all
     * @return what the command writes on stdout, as demanded; errors with {@link ExecRefused} when the API server
     *     refuses the upgrade, with {@link ExecFailed} when the status channel reports a failure
     */
    public Flux<ByteBuffer> exec(
            String namespace,
            String pod,
            String container,
            List<String> command,
            Flux<ByteBuffer> stdin,
            Consumer<String> stderr) {
        StringBuilder path = new StringBuilder("/api/v1/namespaces/")
                .append(namespace)
                .append("/pods/")
                .append(pod)
                .append("/exec?container=")
                .append(enc(container))
                .append("&stdin=true&stdout=true&stderr=true");
        for (String arg : command) {
            path.append("&command=").append(enc(arg));
        }
        return http.websocket(WebsocketClientSpec.builder()
                        .protocols(PROTOCOL)
                        .maxFramePayloadLength(MAX_MESSAGE)
                        .handlePing(false)
                        .build())
                .uri(path.toString())
                .handle((in, out) -> {
                    ExecChannels channels = new ExecChannels(stderr);
                    // stdin: channel 0 before every buffer, one frame each
                    Mono<Void> sent =
                            out.sendObject(stdin.map(ExecChannels::stdinFrame)).then();
                    Flux<ByteBuffer> received = in.receiveFrames()
                            // synchronous: the frame's bytes are read during onNext, before the frame is released
                            .<ByteBuffer>handle((frame, sink) -> {
                                ByteBuffer stdout = channels.accept(frame);
                                if (stdout != null) {
                                    sink.next(stdout);
                                }
                            })
                            .concatWith(Mono.defer(channels::end));
                    // a failed write (the peer went away) shows up on the read side: ignore it here
                    sent.subscribe(null, e -> {});
                    return received;
                })
                .onErrorMap(
                        WebSocketClientHandshakeException.class,
                        e -> new ExecRefused(
                                e.response() == null ? 0 : e.response().status().code(), pod, e));
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        loops.dispose();
    }

    /** The demultiplexing of one exec's messages: stdout passes, stderr and the status are kept (bounded). */
    static final class ExecChannels {
        private final Consumer<String> stderr;
        private final StringBuilder status = new StringBuilder();
        private int stderrLeft = MAX_SIDE_CHANNEL;
        private int lastChannel = -1;

        ExecChannels(Consumer<String> stderr) {
            this.stderr = stderr;
        }

        static WebSocketFrame stdinFrame(ByteBuffer buffer) {
            ByteBuf content =
                    Unpooled.wrappedBuffer(Unpooled.wrappedBuffer(new byte[] {0}), Unpooled.wrappedBuffer(buffer));
            return new BinaryWebSocketFrame(content);
        }

        /**
         * One frame: its stdout bytes (valid during the caller's {@code onNext} only), or {@code null}.
         *
         * @param frame the frame, released by the connection after this returns
         * @return stdout bytes, or {@code null} for another channel or an empty message
         */
        ByteBuffer accept(WebSocketFrame frame) {
            ByteBuf content = frame.content();
            int channel;
            if (frame instanceof ContinuationWebSocketFrame) {
                channel = lastChannel;
            } else if (frame instanceof BinaryWebSocketFrame) {
                if (!content.isReadable()) {
                    return null;
                }
                channel = content.readUnsignedByte();
            } else {
                return null; // text, ping, pong, close: nothing of the command's
            }
            lastChannel = frame.isFinalFragment() ? -1 : channel;
            if (!content.isReadable()) {
                return null;
            }
            switch (channel) {
                case 1 -> {
                    return content.nioBuffer();
                }
                case 2 -> {
                    if (stderrLeft > 0) {
                        int n = Math.min(stderrLeft, content.readableBytes());
                        stderrLeft -= n;
                        stderr.accept(content.toString(content.readerIndex(), n, StandardCharsets.UTF_8));
                    }
                    return null;
                }
                case 3 -> {
                    int n = Math.min(MAX_SIDE_CHANNEL - status.length(), content.readableBytes());
                    if (n > 0) {
                        status.append(content.toString(content.readerIndex(), n, StandardCharsets.UTF_8));
                    }
                    return null;
                }
                default -> {
                    return null; // resize (4) is ours to send; anything else is ignored
                }
            }
        }

        /** After the last message: a failure status fails the stream. */
        Mono<ByteBuffer> end() {
            ExecStatus s = ExecStatus.parse(status.toString());
            return s.success() ? Mono.empty() : Mono.error(new ExecFailed(s));
        }
    }

    /** The API server refused the exec upgrade (forbidden, not found, a bad request). */
    public static final class ExecRefused extends BackendException {
        private static final long serialVersionUID = 1L;
        private final int status;

        ExecRefused(int status, String pod, Throwable cause) {
            super(
                    "the Kubernetes API server refused to exec in pod " + pod + " with HTTP " + status,
                    cause,
                    status == 0 || status == 429 || status >= 500);
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

    /** The exec's status channel reported a failure (the command could not start, or exited non-zero). */
    public static final class ExecFailed extends BackendException {
        private static final long serialVersionUID = 1L;
        private final transient ExecStatus status;

        ExecFailed(ExecStatus status) {
            super("exec failed: " + status.message(), null, false);
            this.status = status;
        }

        /**
         * What the status said.
         *
         * @return the status
         */
        public ExecStatus status() {
            return status;
        }
    }
}
