package dev.sandbox.implementation.docker;

import dev.sandbox.SandboxException;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.implementation.process.RawEvent;
import io.netty.buffer.Unpooled;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.DuplexChannel;
import io.netty.channel.unix.DomainSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.reactivestreams.Publisher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.Connection;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpClient;

/**
 * The data plane: starts execs on a raw connection to the daemon (its Unix socket, or plain TCP) with reactor-netty,
 * and streams their output with demand-driven reads: the connection is read only while the subscriber has demand,
 * so a slow subscriber fills the socket, then the daemon's pipe, and the process inside the container waits in
 * {@code write}.
 *
 * <p>The request asks for a connection upgrade ({@code Upgrade: tcp}), as {@code docker exec -i} does: after the
 * daemon's {@code 101} the connection carries stdin one way and the multiplexed output the other, and closing our
 * write side closes the command's stdin. No thread is held per exec: every connection lives on a small event-loop
 * group.
 */
public final class DockerDataPlane implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DockerDataPlane.class);
    private static final byte[] START_BODY = "{\"Detach\":false,\"Tty\":false}".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] START_TTY_BODY = "{\"Detach\":false,\"Tty\":true}".getBytes(StandardCharsets.US_ASCII);

    /** The most one read of an archive connection takes from its socket. */
    static final int MAX_READ = 1024 * 1024;

    private final URI dockerHost;
    private final LoopResources loops;
    /** Connections to agents' channel sockets (the address is given per connection). */
    private final TcpClient agents;

    private final TcpClient client;
    private final HttpClient http;

    /**
     * Prepares connections to a daemon; nothing is connected yet.
     *
     * @param dockerHost {@code unix:///path} or {@code tcp://host:port}
     * @param eventLoopThreads how many event-loop threads serve every exec of this data plane
     * @throws UnsupportedFeatureException for TLS or another scheme
     */
    public DockerDataPlane(URI dockerHost, int eventLoopThreads) {
        this.dockerHost = dockerHost;
        if (DockerControl.tlsRequested()) {
            throw new UnsupportedFeatureException(
                    "docker", "TLS connections to the daemon (DOCKER_TLS_VERIFY) for exec streams");
        }
        this.loops = LoopResources.create("sandbox-docker", 1, eventLoopThreads, true);
        TcpClient c = TcpClient.create(ConnectionProvider.newConnection())
                .runOn(loops)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000);
        HttpClient h = bulkDecoding(HttpClient.create(ConnectionProvider.newConnection())
                .runOn(loops)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
                // archive downloads: read what the socket holds in one go (up to 1 MiB), not 64 KiB at a time
                .option(ChannelOption.RECVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(512, 64 * 1024, MAX_READ))
                .headers(headers -> headers.set("User-Agent", "dev.sandbox")));
        String scheme = String.valueOf(dockerHost.getScheme());
        switch (scheme) {
            case "unix" -> {
                String path = dockerHost.getPath();
                c = c.remoteAddress(() -> new DomainSocketAddress(path));
                h = h.remoteAddress(() -> new DomainSocketAddress(path));
            }
            case "tcp", "http" -> {
                int port = dockerHost.getPort() > 0 ? dockerHost.getPort() : 2375;
                c = c.host(dockerHost.getHost()).port(port);
                h = h.host(dockerHost.getHost()).port(port);
            }
            default -> throw new UnsupportedFeatureException("docker", "daemon addresses of scheme '" + scheme + "'");
        }
        this.client = c;
        this.http = h;
        this.agents = TcpClient.create(ConnectionProvider.newConnection())
                .runOn(loops)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
                // a transfer reads what the socket holds in one go (up to 1 MiB), not 64 KiB at a time
                .option(ChannelOption.RECVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(512, 64 * 1024, MAX_READ));
    }

    /**
     * Connects to a session agent's channel socket on this host, on the same event loops.
     *
     * @param socket the socket's path, out of the sandbox's reach
     * @return the connection, or an error when nothing accepts there
     */
    Mono<Connection> connectAgent(java.nio.file.Path socket) {
        String path = socket.toString();
        return agents.remoteAddress(() -> new DomainSocketAddress(path))
                .connect()
                .map(c -> c);
    }

    /**
     * Lets the response decoder hand on a body in the pieces the socket delivered (up to {@link #MAX_READ}) rather
     * than cut into 8 KiB contents, each a signal of its own through the download's operators and thread hop. The
     * setting is deprecated because Netty 5 drops it (and with it the cutting).
     */
    @SuppressWarnings("deprecation")
    private static HttpClient bulkDecoding(HttpClient client) {
        return client.httpResponseDecoder(spec -> spec.maxChunkSize(MAX_READ));
    }

    /**
     * Starts a created exec and streams its output chunks; completes when the daemon ends the stream (the process
     * and everything holding its output closed), without an exit event: the exit code comes from an inspect.
     *
     * @param execId the exec, created with stdout and stderr attached (and stdin when {@code stdin} is given)
     * @param stdin bytes for the command's stdin, or {@code null}
     * @param decoder the decoder for this connection
     * @param onStreaming called once the daemon has accepted the start
     * @return the chunks
     */
    public Flux<RawEvent> exec(
            String execId, Publisher<ByteBuffer> stdin, ExecStreamDecoder decoder, Sinks.Empty<Void> onStreaming) {
        return exec(execId, stdin, decoder, onStreaming, false);
    }

    /**
     * Starts a created exec, with or without a terminal, and streams its output chunks.
     *
     * @param execId the exec, created with stdout and stderr attached (and stdin when {@code stdin} is given)
     * @param stdin bytes for the command's stdin, or {@code null}
     * @param decoder the decoder for this connection, made for the same {@code tty}
     * @param onStreaming called once the daemon has accepted the start
     * @param tty whether the exec was created with a terminal
     * @return the chunks
     */
    public Flux<RawEvent> exec(
            String execId,
            Publisher<ByteBuffer> stdin,
            ExecStreamDecoder decoder,
            Sinks.Empty<Void> onStreaming,
            boolean tty) {
        byte[] body = tty ? START_TTY_BODY : START_BODY;
        return Flux.usingWhen(
                connect(),
                conn -> {
                    Disposable pump = stdin == null
                            ? null
                            : onStreaming
                                    .asMono()
                                    .then(pumpStdin(conn, stdin))
                                    .subscribe(
                                            null, e -> LOG.debug("stdin of exec {} ended: {}", execId, e.toString()));
                    String request = "POST /exec/" + execId + "/start HTTP/1.1\r\n"
                            + "Host: docker\r\n"
                            + "User-Agent: dev.sandbox\r\n"
                            + "Content-Type: application/json\r\n"
                            + "Connection: Upgrade\r\n"
                            + "Upgrade: tcp\r\n"
                            + "Content-Length: " + body.length + "\r\n\r\n";
                    byte[] head = request.getBytes(StandardCharsets.US_ASCII);
                    Mono<Void> send = conn.outbound()
                            .sendObject(Unpooled.wrappedBuffer(head, body))
                            .then();
                    Flux<RawEvent> output = conn.inbound()
                            .receive()
                            .map(decoder::decode)
                            .concatMapIterable(list -> list, 4)
                            .concatWith(Flux.defer(() -> Flux.fromIterable(decoder.finish())));
                    return send.thenMany(output).doFinally(s -> {
                        if (pump != null) {
                            pump.dispose();
                        }
                    });
                },
                conn -> Mono.fromRunnable(conn::dispose));
    }

    /**
     * An HTTP client on the same transport and event loops, for requests whose bodies stream both ways (the archive
     * API). One connection per request, not pooled.
     */
    HttpClient http() {
        return http;
    }

    /**
     * Where the daemon is, for errors.
     *
     * @return its address
     */
    URI dockerHost() {
        return dockerHost;
    }

    private Mono<Connection> connect() {
        return client.connect()
                .<Connection>map(c -> c)
                .onErrorMap(
                        e -> !(e instanceof SandboxException),
                        e -> DockerErrors.connection(dockerHost, "an exec stream", e));
    }

    /** Writes stdin one buffer at a time, each after the previous one left for the socket, then half-closes. */
    private static Mono<Void> pumpStdin(Connection conn, Publisher<ByteBuffer> stdin) {
        return Flux.from(stdin)
                .concatMap(
                        buffer -> conn.outbound()
                                .sendObject(Unpooled.wrappedBuffer(buffer))
                                .then(),
                        1)
                .onErrorResume(e -> {
                    // a failing stdin source ends stdin, as the local provider does
                    LOG.debug("stdin source failed; closing stdin: {}", e.toString());
                    return Mono.empty();
                })
                .then(Mono.defer(() -> shutdownOutput(conn)));
    }

    static Mono<Void> shutdownOutput(Connection conn) {
        if (!(conn.channel() instanceof DuplexChannel duplex) || !conn.channel().isActive()) {
            return Mono.empty();
        }
        return Mono.create(sink -> {
            ChannelFuture f = duplex.shutdownOutput();
            f.addListener(done -> sink.success());
        });
    }

    @Override
    public void close() {
        closeAsync().block(Duration.ofSeconds(5));
    }

    /**
     * Shuts the event loops down without blocking: every open connection closes, and the loops stop within two
     * seconds.
     *
     * @return completes once the loops have stopped
     */
    public Mono<Void> closeAsync() {
        return loops.disposeLater(Duration.ZERO, Duration.ofSeconds(2));
    }
}
