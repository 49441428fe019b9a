package dev.sandbox.implementation.egress;

import dev.sandbox.EgressDecision;
import dev.sandbox.EgressReport;
import dev.sandbox.EgressRule;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.SandboxNetwork;
import dev.sandbox.implementation.ports.Listener;
import dev.sandbox.implementation.ports.TunnelRelay;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

/**
 * A session's egress proxy and its {@link SandboxNetwork}: a listener on the sandbox's loopback (through the
 * provider's {@link Listener}, so the sandbox needs no network) whose every connection carries one proxy request; the
 * host reads its head (bounded, within {@value #HEAD_TIMEOUT_SECONDS} s), decides it under the policy in force
 * ({@link EgressGate}), dials the checked addresses and relays the rest both ways ({@link TunnelRelay}), or answers
 * the refusal and closes. Internal: not part of the public API.
 */
public final class EgressProxy implements SandboxNetwork {
    private static final Logger LOG = LoggerFactory.getLogger(EgressProxy.class);

    /** How long a program has to send its request's head. */
    static final int HEAD_TIMEOUT_SECONDS = 30;

    /** How long a connect to an allowed address may take. */
    static final int CONNECT_TIMEOUT_MS = 5000;

    /** Proxy connections open at once; one more is closed as soon as it is accepted. */
    public static final int MAX_CONNECTIONS = 256;

    private final String what;
    private final Listener listener;
    private final Set<TunnelRelay> relays = ConcurrentHashMap.newKeySet();
    private final Set<CredentialTunnel> tunnels = ConcurrentHashMap.newKeySet();
    /** The session's certificate authority for credential rules; {@code null} without BouncyCastle. */
    private final @Nullable EgressCa ca;

    private final ArrayDeque<EgressDecision> decisions = new ArrayDeque<>(); // guarded by itself
    private final AtomicLong allowed = new AtomicLong();
    private final AtomicLong denied = new AtomicLong();
    private final AtomicBoolean open = new AtomicBoolean(true);
    private volatile NetworkPolicy policy;
    private volatile Disposable listening;
    private final BooleanSupplier sessionEnding;

    /**
     * A proxy, not yet listening.
     *
     * @param what the session, for logs and thread names
     * @param listener how the provider listens in the sandbox
     * @param policy the policy to start with, an allowlist
     */
    public EgressProxy(String what, Listener listener, NetworkPolicy policy) {
        this(what, listener, policy, () -> false);
    }

    /**
     * A proxy, not yet listening, of a session that says when it is ending (its listener's end is then expected:
     * nothing is logged and nothing listens again).
     *
     * @param what the session, for logs and thread names
     * @param listener how the provider listens in the sandbox
     * @param policy the policy to start with, an allowlist
     * @param sessionEnding whether the session is being destroyed or has ended
     */
    public EgressProxy(String what, Listener listener, NetworkPolicy policy, BooleanSupplier sessionEnding) {
        this.sessionEnding = Objects.requireNonNull(sessionEnding, "sessionEnding");
        this.what = what + " egress proxy";
        this.listener = Objects.requireNonNull(listener, "listener");
        this.policy = checkCredentials(Objects.requireNonNull(policy, "policy"));
        this.ca = EgressCa.available() ? EgressCa.create(what) : null;
    }

    /** Where the sandbox finds the authority's certificate, and a bundle of it with the image's own. */
    public static final String CA_DIR = "/tmp/.dev-sandbox-egress";

    /** The authority's certificate in the sandbox. */
    public static final String CA_FILE = CA_DIR + "/ca.pem";

    /** The image's trusted certificates and the authority's, for programs told to use one file. */
    public static final String CA_BUNDLE = CA_DIR + "/ca-bundle.pem";

    /** Where images keep their trusted certificates, in the order looked for. */
    public static final List<String> SYSTEM_BUNDLES = List.of(
            "/etc/ssl/certs/ca-certificates.crt",
            "/etc/pki/tls/certs/ca-bundle.crt",
            "/etc/ssl/cert.pem",
            "/etc/ssl/ca-bundle.pem");

    /**
     * The session's certificate authority, PEM-encoded, for the sandbox to trust; {@code null} when there is none
     * (BouncyCastle is not on the class path: credential rules are refused).
     *
     * @return the certificate or {@code null}
     */
    public @Nullable String caPem() {
        EgressCa c = ca;
        return c == null ? null : c.pem();
    }

    private static NetworkPolicy checkCredentials(NetworkPolicy p) {
        if (!EgressCa.available()
                && p.rules().stream().anyMatch(r -> !r.headers().isEmpty())) {
            throw new InvalidArgumentException(
                    "headers",
                    "rules that add headers need org.bouncycastle:bcpkix-jdk18on on the class path (the session's"
                            + " certificate authority is made with it)");
        }
        return p;
    }

    /**
     * Listens on the policy's proxy port in the sandbox.
     *
     * @return completes once the sandbox listens; fails when it cannot (the port taken, naming {@code proxyPort})
     */
    public Mono<Void> start() {
        int port = policy.proxyPort();
        return Mono.<Void>create(sink -> listen(sink, 0))
                .onErrorMap(
                        e -> e instanceof InvalidArgumentException,
                        e -> new InvalidArgumentException(
                                "proxyPort",
                                "the egress proxy cannot listen on proxyPort " + port + " in the sandbox: "
                                        + e.getMessage()));
    }

    /**
     * Listens; when a listener that was up fails or ends (the agent's connection broke) while the proxy is open,
     * listens again after a pause that grows from 1 s to {@value #MAX_RELISTEN_MS} ms while attempts fail, so that a
     * sandbox keeps its egress across a new connection to its agent. The proxy's close ends it.
     *
     * @param first the start's sink, told of the first listen's outcome; {@code null} when listening again
     * @param failures attempts that failed in a row before this one
     */
    private void listen(@Nullable MonoSink<Void> first, int failures) {
        AtomicBoolean up = new AtomicBoolean();
        Consumer<@Nullable Throwable> ended = e -> {
            if (!open.get()) {
                return;
            }
            if (sessionEnding.getAsBoolean()) {
                close(); // the agent's connection ends with its session
                return;
            }
            if (!up.get() && first != null) {
                open.set(false);
                first.error(e != null ? e : new IllegalStateException("the sandbox's listener ended at once"));
                return;
            }
            int n = up.get() ? 0 : failures + 1;
            long pause = Math.min(MAX_RELISTEN_MS, 1000L << Math.min(n, 5));
            LOG.warn(
                    "{}: the listener in the sandbox {}; listening again in {} ms",
                    what,
                    e == null ? "ended" : "failed: " + e,
                    pause);
            Mono.delay(Duration.ofMillis(pause)).subscribe(x -> {
                if (open.get()) {
                    listen(null, n);
                }
            });
        };
        Disposable d = listener.listen(policy.proxyPort(), MAX_CONNECTIONS, () -> {
                    up.set(true);
                    if (first != null) {
                        first.success();
                    }
                })
                .subscribe(this::accepted, ended::accept, () -> ended.accept(null));
        listening = d;
        if (!open.get()) {
            d.dispose(); // closed meanwhile
        }
        if (first != null) {
            first.onCancel(() -> {
                if (!up.get()) {
                    close();
                }
            });
        }
    }

    /** The longest pause between two attempts to listen again. */
    static final long MAX_RELISTEN_MS = 30_000;

    /**
     * The environment every command of the session gets: the proxy's address under the names programs read, and,
     * when asked, the authority's certificate files under the names TLS libraries read.
     *
     * @param withCa whether to name the certificate files ({@link #CA_BUNDLE} replaces what programs trust: name it
     *     only when it holds the image's own certificates too, or when a rule needs the authority)
     * @return the variables
     */
    public Map<String, String> env(boolean withCa) {
        String url = "http://127.0.0.1:" + policy.proxyPort();
        Map<String, String> env = new LinkedHashMap<>();
        if (ca != null && withCa) {
            // OpenSSL (Python, curl, wget, git, Ruby), requests, pip, the AWS CLI: one file; Node.js: extra ones
            for (String name : List.of(
                    "SSL_CERT_FILE",
                    "REQUESTS_CA_BUNDLE",
                    "CURL_CA_BUNDLE",
                    "PIP_CERT",
                    "GIT_SSL_CAINFO",
                    "AWS_CA_BUNDLE")) {
                env.put(name, CA_BUNDLE);
            }
            env.put("NODE_EXTRA_CA_CERTS", CA_FILE);
        }
        env.put("HTTP_PROXY", url);
        env.put("HTTPS_PROXY", url);
        env.put("http_proxy", url);
        env.put("https_proxy", url);
        env.put("NO_PROXY", "localhost,127.0.0.1,::1");
        env.put("no_proxy", "localhost,127.0.0.1,::1");
        return env;
    }

    /** Stops listening and cuts every connection. */
    public void close() {
        if (!open.compareAndSet(true, false)) {
            return;
        }
        Disposable d = listening;
        if (d != null) {
            d.dispose();
        }
        for (TunnelRelay r : relays) {
            r.abort();
        }
        for (CredentialTunnel t : tunnels) {
            t.abort();
        }
    }

    @Override
    public Mono<NetworkPolicy> policy() {
        return Mono.fromSupplier(() -> policy);
    }

    /**
     * The policy in force, now.
     *
     * @return the policy
     */
    public NetworkPolicy current() {
        return policy;
    }

    @Override
    public Mono<Void> update(NetworkPolicy next) {
        Objects.requireNonNull(next, "policy");
        return Mono.fromRunnable(() -> {
            if (next.proxyPort() != policy.proxyPort()) {
                throw new InvalidArgumentException(
                        "proxyPort",
                        "the proxy's port is set when the session is created: proxyPort " + policy.proxyPort()
                                + " cannot become " + next.proxyPort());
            }
            policy = checkCredentials(next); // a NONE policy denies every new connection, the proxy stays
            LOG.info("{}: policy now {}", what, next);
        });
    }

    @Override
    public Mono<EgressReport> report() {
        return Mono.fromSupplier(() -> {
            synchronized (decisions) {
                return new EgressReport(allowed.get(), denied.get(), new ArrayList<>(decisions));
            }
        });
    }

    private void accepted(Listener.Incoming in) {
        if (!open.get()) {
            in.close();
            return;
        }
        HeadSplitter splitter = new HeadSplitter();
        in.received().subscribe(splitter);
        Thread.ofVirtual().name("sandbox-egress " + what).start(() -> serve(in, splitter));
    }

    private void serve(Listener.Incoming in, HeadSplitter splitter) {
        byte[] head;
        try {
            head = splitter.head().get(HEAD_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            answer(in, 408, "no request within " + HEAD_TIMEOUT_SECONDS + " s");
            return;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof HeadSplitter.HeadTooLargeException t) {
                answer(in, 431, t.getMessage());
            } else {
                in.close(); // the program went away before asking anything
            }
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            in.close();
            return;
        }
        ProxyRequest request;
        try {
            request = ProxyRequest.parse(head);
        } catch (ProxyRequest.BadRequestException e) {
            answer(in, 400, e.getMessage());
            return;
        }
        EgressGate.Decision decision = EgressGate.decide(policy, request);
        Socket socket = decision.allowed() ? dial(request, decision.addresses()) : null;
        String reason = decision.allowed() && socket == null
                ? "cannot connect to " + request.host() + " port " + request.port() + " (" + decision.reason() + ")"
                : decision.reason();
        record(new EgressDecision(Instant.now(), request.host(), request.port(), decision.allowed(), reason));
        if (socket == null) {
            answer(in, decision.allowed() ? 502 : decision.status(), reason);
            return;
        }
        EgressRule rule = decision.rule();
        if (rule != null && !rule.headers().isEmpty()) {
            if (request.connect()) {
                EgressCa authority = ca;
                if (authority == null) { // not reached: such a rule is refused without BouncyCastle
                    closeQuietly(socket);
                    answer(in, 502, "no certificate authority for a rule that adds headers");
                    return;
                }
                CredentialTunnel done = CredentialTunnel.serve(
                        in,
                        splitter,
                        request,
                        rule,
                        socket,
                        upstreamTls(),
                        authority,
                        relays,
                        t -> {
                            tunnels.add(t);
                            return open.get();
                        },
                        failure -> {
                            LOG.info("{}: {}", what, failure);
                            answer(in, 502, failure);
                        });
                tunnels.remove(done);
                return;
            }
            request = new ProxyRequest(
                    false,
                    request.host(),
                    request.port(),
                    ProxyRequest.withHeaders(request.forwarded(), rule.headers()));
        }
        relay(in, splitter, request, socket);
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            LOG.debug("closing", e);
        }
    }

    /** The TLS context for destinations of credential rules: the JDK's trust and the policy's certificates. */
    private javax.net.ssl.SSLContext upstreamTls() {
        return UpstreamTls.context(policy.trustedCertificates());
    }

    private Socket dial(ProxyRequest request, List<InetAddress> addresses) {
        for (InetAddress a : addresses) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress(a, request.port()), CONNECT_TIMEOUT_MS);
                s.setTcpNoDelay(true);
                return s;
            } catch (IOException e) {
                LOG.debug("{}: {} port {} at {}: {}", what, request.host(), request.port(), a, e.toString());
                try {
                    s.close();
                } catch (IOException ignored) {
                    // never connected
                }
            }
        }
        return null;
    }

    private void relay(Listener.Incoming in, HeadSplitter splitter, ProxyRequest request, Socket socket) {
        TunnelRelay r = TunnelRelay.tracked(socket, what + " " + request.host() + ":" + request.port(), relays);
        if (!open.get()) {
            r.abort();
            splitter.cancel();
            in.close();
            return;
        }
        // the relay's "host socket" is the destination; its "sandbox side" is this connection, after the head
        r.start(
                (port, fromDestination) -> {
                    if (request.connect()) {
                        byte[] established =
                                "HTTP/1.1 200 Connection established\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);
                        in.send(Flux.concat(Mono.just(ByteBuffer.wrap(established)), fromDestination));
                        return splitter.rest();
                    }
                    in.send(fromDestination);
                    return Flux.concat(Mono.just(ByteBuffer.wrap(request.forwarded())), splitter.rest());
                },
                request.port());
    }

    private void record(EgressDecision d) {
        synchronized (decisions) {
            (d.allowed() ? allowed : denied).incrementAndGet();
            if (decisions.size() == KEPT_DECISIONS) {
                decisions.removeFirst();
            }
            decisions.addLast(d);
        }
        if (d.allowed()) {
            LOG.debug("{}: allowed {} port {}: {}", what, d.host(), d.port(), d.reason());
        } else {
            LOG.info("{}: denied {} port {}: {}", what, d.host(), d.port(), d.reason());
        }
    }

    /**
     * Answers a refusal: the reason in the body and in a header, for programs and people. What the program still
     * sends is not read (it waits in the agent's bounded window); the connection ends when the program closes it, or
     * {@value #LINGER_SECONDS} s later.
     */
    private static void answer(Listener.Incoming in, int status, String reason) {
        String text = switch (status) {
            case 400 -> "Bad Request";
            case 403 -> "Forbidden";
            case 408 -> "Request Timeout";
            case 431 -> "Request Header Fields Too Large";
            default -> "Bad Gateway";
        };
        String body = "sandbox egress: " + reason + "\n";
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        String response = "HTTP/1.1 " + status + " " + text + "\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: " + bytes.length + "\r\nConnection: close\r\nX-Sandbox-Egress: "
                + reason.replaceAll("[^\\x20-\\x7e]", "?") + "\r\n\r\n";
        byte[] h = response.getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer all =
                ByteBuffer.allocate(h.length + bytes.length).put(h).put(bytes).flip();
        in.send(Mono.just(all));
        Mono.delay(Duration.ofSeconds(LINGER_SECONDS)).subscribe(x -> in.close());
    }

    /** How long a refused connection stays after its answer. */
    static final int LINGER_SECONDS = 10;
}
