package dev.sandbox.benchmarks;

import com.sun.net.httpserver.HttpServer;
import dev.sandbox.EgressRule;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.SandboxSession;
import dev.sandbox.docker.DockerSandboxProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code docker-egress-latency}: milliseconds for one HTTP GET through a session's egress proxy to a server on the
 * host's loopback, from opening the connection to the end of the answer. SDK: a session with an allowlist naming the
 * server ({@code egress.bench}, resolved by the row to 127.0.0.1, and a CIDR rule for 127.0.0.1 on its port); the GET
 * ({@code GET http://egress.bench:PORT/ HTTP/1.1}) is sent to the proxy's port in the sandbox with {@code
 * session.ports().connect(3128, ...)}, so it crosses the agent's connection twice (into the sandbox to the proxy's
 * port, and out again as the proxy's connection): an upper bound on what a program in the sandbox pays, which crosses
 * it once. Baseline: the same GET from the host straight to the server, a new connection each, read to its end. Both
 * sides check the body. The ratio's aim is at most 3.
 *
 * <pre>{@code
 * Result r = new DockerEgressLatency().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerEgressLatency implements Benchmark {
    private static final byte[] BODY = "egress bench ok\n".getBytes(StandardCharsets.US_ASCII);

    /** A run of this row with its default settings. */
    public DockerEgressLatency() {}

    @Override
    public String name() {
        return "docker-egress-latency";
    }

    @Override
    public String unit() {
        return "ms";
    }

    @Override
    public Target target() {
        return Target.atMost(3.0);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(5, 15), new Reps(30, 200));
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.createContext("/", x -> {
            x.sendResponseHeaders(200, BODY.length);
            x.getResponseBody().write(BODY);
            x.close();
        });
        server.start();
        int port = server.getAddress().getPort();
        NetworkPolicy policy = NetworkPolicy.allowlist(
                        EgressRule.domain("egress.bench").ports(port),
                        EgressRule.cidr("127.0.0.1/32").ports(port))
                .withResolver(host -> List.of(InetAddress.getLoopbackAddress()));
        byte[] viaProxy = ("GET http://egress.bench:" + port + "/ HTTP/1.1\r\nHost: egress.bench:" + port + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        byte[] direct = ("GET / HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
        try (DockerBench docker = DockerBench.open(name(), config);
                DockerSandboxProvider provider = docker.provider()) {
            SandboxSession session =
                    provider.create(docker.sessionOptions().withNetwork(policy)).block(DockerBench.TIMEOUT);
            try {
                return Harness.alternate(
                        name(),
                        unit(),
                        target(),
                        reps,
                        config,
                        () -> {
                            long t0 = System.nanoTime();
                            // the request side stays open: the answer's end closes the connection
                            byte[] answer = session.ports()
                                    .connect(
                                            NetworkPolicy.DEFAULT_PROXY_PORT,
                                            Flux.concat(Mono.just(ByteBuffer.wrap(viaProxy)), Mono.never()))
                                    .reduce(new ByteArrayOutputStream(), DockerEgressLatency::append)
                                    .map(ByteArrayOutputStream::toByteArray)
                                    .block(DockerBench.TIMEOUT);
                            long took = System.nanoTime() - t0;
                            check("SDK", answer);
                            return took / 1e6;
                        },
                        () -> {
                            long t0 = System.nanoTime();
                            byte[] answer = directGet(port, direct);
                            long took = System.nanoTime() - t0;
                            check("baseline", answer);
                            return took / 1e6;
                        },
                        Harness.NOTHING);
            } finally {
                session.destroy().block(DockerBench.TIMEOUT);
            }
        } finally {
            server.stop(0);
        }
    }

    private static ByteArrayOutputStream append(ByteArrayOutputStream out, ByteBuffer b) {
        byte[] chunk = new byte[b.remaining()];
        b.get(chunk);
        out.writeBytes(chunk);
        return out;
    }

    private static byte[] directGet(int port, byte[] request) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
            s.setTcpNoDelay(true);
            s.getOutputStream().write(request);
            InputStream in = s.getInputStream();
            return in.readAllBytes();
        }
    }

    private static void check(String side, byte[] answer) {
        String text = answer == null ? "" : new String(answer, StandardCharsets.ISO_8859_1);
        if (!text.startsWith("HTTP/1.1 200") || !text.endsWith(new String(BODY, StandardCharsets.US_ASCII))) {
            throw new IllegalStateException(side + ": the GET gave '" + text + "'");
        }
    }
}
