package dev.sandbox.implementation.egress;

import dev.sandbox.EgressRule;
import dev.sandbox.implementation.ports.Listener;
import dev.sandbox.implementation.ports.TunnelRelay;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One {@code CONNECT} to a destination whose rule adds headers: the host ends the program's TLS with a certificate of
 * the session's authority ({@link EgressCa}), reads the request's head (bounded), sends it on with the rule's headers
 * over its own TLS to the destination (verified: host name and trust), and carries the rest both ways. The program's
 * side of the connection reaches the JDK's TLS through a loopback socket pair, relayed to the sandbox by a {@link
 * TunnelRelay}, so that the TLS is the JDK's socket TLS on virtual threads. One request per connection ({@code
 * Connection: close} to the destination); a program's next request opens another connection, rewritten the same way.
 * Internal: not part of the public API.
 */
final class CredentialTunnel implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(CredentialTunnel.class);

    /** How long each TLS handshake and the request's head may take. */
    static final int TIMEOUT_MS = 30_000;

    private static final byte[] ESTABLISHED =
            "HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);

    private final String what;
    private final Socket destination;
    /** What a normal end closes: the destination's sockets and the program's TLS end. */
    private final List<Closeable> parts = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** What only {@link #abort()} cuts as well: the program's side, which otherwise ends by itself once drained. */
    private volatile @org.jspecify.annotations.Nullable TunnelRelay relay;

    private CredentialTunnel(String what, Socket destination) {
        this.what = what;
        this.destination = destination;
        parts.add(destination);
    }

    /**
     * Opens TLS to the destination first (a failure is answered to the program as a 502 by the caller), then serves
     * the program's connection on the calling (virtual) thread until it ends.
     *
     * @param in the program's connection
     * @param splitter its bytes after the {@code CONNECT} head
     * @param request the {@code CONNECT}
     * @param rule the rule that allowed it, with its headers
     * @param destination the connected socket to the destination
     * @param upstream the TLS context to the destination (the JDK's trust and the policy's certificates)
     * @param ca the session's authority
     * @param relays the proxy's relays, to which the program's side is added while it runs
     * @param open registers the tunnel with the proxy (aborted with it) and returns false when the proxy closed
     * @param failed told of a failure before the program got its {@code 200}, with the reason to answer
     * @return the tunnel, ended
     */
    static CredentialTunnel serve(
            Listener.Incoming in,
            HeadSplitter splitter,
            ProxyRequest request,
            EgressRule rule,
            Socket destination,
            SSLContext upstream,
            EgressCa ca,
            Set<TunnelRelay> relays,
            java.util.function.Predicate<CredentialTunnel> open,
            Consumer<String> failed) {
        String what = "credential tunnel to " + request.host() + ":" + request.port();
        CredentialTunnel t = new CredentialTunnel(what, destination);
        if (!open.test(t)) {
            t.abort();
            return t;
        }
        try {
            t.run(in, splitter, request, rule, upstream, ca, relays, failed);
        } finally {
            t.close();
        }
        return t;
    }

    private void run(
            Listener.Incoming in,
            HeadSplitter splitter,
            ProxyRequest request,
            EgressRule rule,
            SSLContext upstream,
            EgressCa ca,
            Set<TunnelRelay> relays,
            Consumer<String> failed) {
        SSLSocket out;
        try {
            out = (SSLSocket)
                    upstream.getSocketFactory().createSocket(destination, request.host(), request.port(), true);
            parts.add(out);
            SSLParameters p = out.getSSLParameters();
            p.setEndpointIdentificationAlgorithm("HTTPS");
            p.setServerNames(List.of(new SNIHostName(request.host())));
            p.setApplicationProtocols(new String[] {"http/1.1"});
            out.setSSLParameters(p);
            out.setSoTimeout(TIMEOUT_MS);
            out.startHandshake();
        } catch (IOException | IllegalArgumentException e) {
            failed.accept("TLS to " + request.host() + " port " + request.port() + " failed: " + e.getMessage());
            return;
        }
        Socket[] pair;
        try {
            pair = socketPair();
        } catch (IOException e) {
            failed.accept("the proxy could not open its TLS end: " + e.getMessage());
            return;
        }
        parts.add(pair[1]);
        TunnelRelay[] self = new TunnelRelay[1];
        TunnelRelay relay = new TunnelRelay(pair[0], what + " (program side)", () -> relays.remove(self[0]));
        self[0] = relay;
        this.relay = relay;
        relays.add(relay);
        relay.start(
                (port, toProgram) -> {
                    in.send(Flux.concat(Mono.just(ByteBuffer.wrap(ESTABLISHED)), toProgram));
                    return splitter.rest();
                },
                request.port());
        try (SSLSocket program = (SSLSocket) ca.serverContext(request.host())
                .getSocketFactory()
                .createSocket(pair[1], null, pair[1].getPort(), true)) {
            parts.add(program);
            program.setUseClientMode(false);
            SSLParameters p = program.getSSLParameters();
            p.setApplicationProtocols(new String[] {"http/1.1"});
            program.setSSLParameters(p);
            program.setSoTimeout(TIMEOUT_MS);
            program.startHandshake();
            InputStream fromProgram = program.getInputStream();
            byte[][] headAndRest = readHead(fromProgram);
            byte[] head;
            try {
                head = ProxyRequest.origin(headAndRest[0], rule.headers());
            } catch (ProxyRequest.BadRequestException e) {
                OutputStream o = program.getOutputStream();
                o.write(("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\nX-Sandbox-Egress: "
                                + e.getMessage() + "\r\n\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1));
                o.flush();
                return;
            }
            program.setSoTimeout(0);
            out.setSoTimeout(0);
            OutputStream toDestination = out.getOutputStream();
            toDestination.write(head);
            toDestination.write(headAndRest[1]);
            toDestination.flush();
            Thread up = Thread.ofVirtual().name("sandbox-egress-tls-up " + what).start(() -> {
                try {
                    fromProgram.transferTo(toDestination);
                } catch (IOException e) {
                    LOG.debug("{}: from the program: {}", what, e.toString());
                }
            });
            try {
                out.getInputStream().transferTo(program.getOutputStream()); // the answer, to its end
                program.getOutputStream().flush();
            } catch (IOException e) {
                LOG.debug("{}: from the destination: {}", what, e.toString());
            }
            program.shutdownOutput(); // close_notify: the program sees the answer's end
            up.interrupt();
        } catch (IOException | RuntimeException e) {
            LOG.debug("{}: {}", what, e.toString());
        }
    }

    /** Reads up to the end of a request head, at most {@link HeadSplitter#MAX_HEAD} bytes; returns head and what followed. */
    static byte[][] readHead(InputStream in) throws IOException {
        byte[] buf = new byte[HeadSplitter.MAX_HEAD + 4096];
        int n = 0;
        while (true) {
            int r = in.read(buf, n, buf.length - n);
            if (r < 0) {
                throw new IOException("the program closed its TLS before a request");
            }
            int from = Math.max(0, n - 3);
            n += r;
            int end = HeadSplitter.endOfHead(Arrays.copyOf(buf, n), from);
            if (end >= 0) {
                return new byte[][] {Arrays.copyOf(buf, end), Arrays.copyOfRange(buf, end, n)};
            }
            if (n > HeadSplitter.MAX_HEAD) {
                throw new IOException("a request head longer than " + HeadSplitter.MAX_HEAD + " bytes");
            }
        }
    }

    /** Two connected loopback sockets; the accepted one checked to be the one this connected. */
    private static Socket[] socketPair() throws IOException {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (ServerSocket server = new ServerSocket(0, 1, loopback)) {
            server.setSoTimeout(5000);
            Socket a = new Socket(loopback, server.getLocalPort());
            try {
                Socket b = server.accept();
                if (b.getPort() != a.getLocalPort()) { // someone else's connection: not ours to serve
                    b.close();
                    throw new IOException("an unexpected connection to the proxy's TLS end");
                }
                a.setTcpNoDelay(true);
                b.setTcpNoDelay(true);
                return new Socket[] {a, b};
            } catch (IOException e) {
                a.close();
                throw e;
            }
        }
    }

    /** Cuts everything at once: the proxy closed. */
    void abort() {
        TunnelRelay r = relay;
        if (r != null) {
            r.abort();
        }
        close();
    }

    /** Closes the destination's sockets and the program's TLS end; the program's side drains and ends by itself. */
    @Override
    public void close() {
        for (Closeable c : parts) {
            try {
                c.close();
            } catch (IOException | RuntimeException e) {
                LOG.debug("{}: closing: {}", what, e.toString());
            }
        }
    }
}
