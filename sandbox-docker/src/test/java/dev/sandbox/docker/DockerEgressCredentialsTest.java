package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.sandbox.EgressDecision;
import dev.sandbox.EgressRule;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.NameResolver;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.PortForward;
import dev.sandbox.SandboxSession;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Credentials at egress: a rule's header reaches the destination and never the sandbox, over plain HTTP and over
 * HTTPS (the host ends the program's TLS with the session's own authority, whose certificate is the only thing the
 * sandbox gets, and opens its own verified TLS to the destination). Destinations are servers this test starts on the
 * host's loopback; names resolve through the test's resolver.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerEgressCredentialsTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SECRET = "Bearer s3cret-" + Long.toHexString(System.nanoTime());

    private DockerTestSupport support;
    private DockerSandboxProvider provider;
    private HttpServer plain;
    private HttpsServer tls;
    private X509Certificate tlsCert;
    private final ConcurrentLinkedQueue<String> seen = new ConcurrentLinkedQueue<>();

    private final NameResolver resolver = host -> List.of(InetAddress.getLoopbackAddress());

    @BeforeAll
    void start() throws Exception {
        support = new DockerTestSupport();
        provider = DockerTestSupport.unsweptProvider();
        plain = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        plain.createContext("/", x -> answer(x, "plain"));
        plain.start();
        tls = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        tls.setHttpsConfigurator(new HttpsConfigurator(serverTls("tls.test")));
        tls.createContext("/", x -> answer(x, "tls"));
        tls.start();
    }

    private void answer(com.sun.net.httpserver.HttpExchange x, String which) throws IOException {
        String auth = x.getRequestHeaders().getFirst("Authorization");
        seen.add(which + " " + x.getRequestURI().getPath() + " " + auth);
        byte[] body = ("hello over " + which + "\n").getBytes(StandardCharsets.UTF_8);
        x.sendResponseHeaders(200, body.length);
        x.getResponseBody().write(body);
        x.close();
    }

    @AfterAll
    void stop() {
        plain.stop(0);
        tls.stop(0);
        support.finish(provider);
    }

    private NetworkPolicy policy() {
        return NetworkPolicy.allowlist(
                        EgressRule.domain("plain.test")
                                .ports(plain.getAddress().getPort())
                                .withHeader("Authorization", SECRET),
                        EgressRule.domain("tls.test")
                                .ports(tls.getAddress().getPort())
                                .withHeader("Authorization", SECRET),
                        EgressRule.cidr("127.0.0.1/32"))
                .withResolver(resolver)
                .withTrustedCertificates(tlsCert);
    }

    private static ExecResult sh(SandboxSession s, String script) {
        return s.run(ExecOptions.shell(script)).block(WAIT);
    }

    @Test
    void aRulesHeaderReachesThePlainDestinationInPlaceOfTheProgramsOwn() {
        SandboxSession s =
                provider.create(support.sessionOptions().withNetwork(policy())).block(WAIT);
        try {
            int port = plain.getAddress().getPort();
            ExecResult got = sh(s, "wget -q -O - --header 'Authorization: mine' http://plain.test:" + port + "/p");
            assertThat(got.stdout()).as(got.stderr()).isEqualTo("hello over plain\n");
            assertThat(seen).contains("plain /p " + SECRET);
            assertThat(s.network().report().block(WAIT).decisions())
                    .extracting(EgressDecision::reason)
                    .containsExactly("domain plain.test ports [" + port + "] headers [Authorization]");
            assertNeverInTheSandbox(s);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void overHttpsTheProgramTalksToTheSessionsAuthorityAndTheDestinationGetsTheHeader() throws Exception {
        SandboxSession s =
                provider.create(support.sessionOptions().withNetwork(policy())).block(WAIT);
        try {
            int port = tls.getAddress().getPort();
            // the sandbox has the authority's certificate, and its environment points programs at it
            String env = sh(s, "echo $SSL_CERT_FILE $NODE_EXTRA_CA_CERTS").stdout();
            assertThat(env).isEqualTo("/tmp/.dev-sandbox-egress/ca-bundle.pem /tmp/.dev-sandbox-egress/ca.pem\n");
            byte[] pem = s.files()
                    .readAllBytes("/tmp/.dev-sandbox-egress/ca.pem", 1 << 16)
                    .block(WAIT);
            X509Certificate ca = (X509Certificate)
                    CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(pem));
            assertThat(ca.getBasicConstraints()).as("an authority").isZero();

            // a client that verifies: through the proxy's port in the sandbox (reached by a forward, so the client is
            // the JDK's TLS, which checks the chain and the name; the image's busybox wget has no HTTPS through a
            // proxy), CONNECT, then TLS trusting only the session's authority
            PortForward proxy =
                    s.ports().forward(NetworkPolicy.DEFAULT_PROXY_PORT).block(WAIT);
            try (Socket raw = new Socket()) {
                raw.connect(proxy.localAddress(), 5000);
                raw.setSoTimeout(20_000);
                raw.getOutputStream()
                        .write(("CONNECT tls.test:" + port + " HTTP/1.1\r\nHost: tls.test:" + port + "\r\n\r\n")
                                .getBytes(StandardCharsets.ISO_8859_1));
                assertThat(readHead(raw.getInputStream())).startsWith("HTTP/1.1 200 Connection established");
                SSLSocket t = (SSLSocket) trusting(ca).getSocketFactory().createSocket(raw, "tls.test", port, true);
                SSLParameters p = t.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                t.setSSLParameters(p);
                t.startHandshake();
                assertThat(((X509Certificate) t.getSession().getPeerCertificates()[0]).getIssuerX500Principal())
                        .isEqualTo(ca.getSubjectX500Principal());
                OutputStream o = t.getOutputStream();
                o.write("GET /verified HTTP/1.1\r\nHost: tls.test\r\nAuthorization: mine\r\n\r\n"
                        .getBytes(StandardCharsets.ISO_8859_1));
                o.flush();
                String answer = new String(t.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
                assertThat(answer).startsWith("HTTP/1.1 200").endsWith("hello over tls\n");
            } finally {
                proxy.close().block(WAIT);
            }
            assertThat(seen).contains("tls /verified " + SECRET);

            assertNeverInTheSandbox(s);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aDestinationTheHostCannotVerifyIsRefusedWithTheReason() {
        NetworkPolicy untrusted = NetworkPolicy.allowlist(
                        EgressRule.domain("tls.test")
                                .ports(tls.getAddress().getPort())
                                .withHeader("Authorization", SECRET),
                        EgressRule.cidr("127.0.0.1/32"))
                .withResolver(resolver); // the test server's certificate is not trusted
        SandboxSession s =
                provider.create(support.sessionOptions().withNetwork(untrusted)).block(WAIT);
        int before = seen.size();
        try {
            PortForward proxy =
                    s.ports().forward(NetworkPolicy.DEFAULT_PROXY_PORT).block(WAIT);
            try (Socket raw = new Socket()) {
                raw.connect(proxy.localAddress(), 5000);
                raw.setSoTimeout(20_000);
                raw.getOutputStream()
                        .write(("CONNECT tls.test:" + tls.getAddress().getPort() + " HTTP/1.1\r\n\r\n")
                                .getBytes(StandardCharsets.ISO_8859_1));
                assertThat(readHead(raw.getInputStream()))
                        .startsWith("HTTP/1.1 502 Bad Gateway")
                        .contains("TLS to tls.test port " + tls.getAddress().getPort() + " failed");
            } catch (IOException e) {
                throw new AssertionError(e);
            } finally {
                proxy.close().block(WAIT);
            }
            assertThat(seen).as("the destination got no request").hasSize(before);
        } finally {
            s.destroy().block(WAIT);
        }
    }

    /** Ten places a careless program would find a secret: none has it. */
    private static void assertNeverInTheSandbox(SandboxSession s) {
        String secret = SECRET.substring("Bearer ".length());
        ExecResult look = sh(
                s,
                "env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; cat /proc/*/cmdline 2>/dev/null | tr '\\0' ' ';"
                        + " cat /tmp/.dev-sandbox-egress/* 2>/dev/null; ls -la /tmp /tmp/.dev-sandbox-egress;"
                        + " grep -rs . /etc/hosts /etc/resolv.conf; cat /proc/1/maps 2>/dev/null | head -5");
        assertThat(look.stdout() + look.stderr()).doesNotContain(secret);
        assertThat(s.toString()).doesNotContain(secret);
        assertThat(s.network().policy().block(WAIT).toString()).doesNotContain(secret);
        assertThat(s.network().report().block(WAIT).toString()).doesNotContain(secret);
    }

    private static String readHead(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        while (!b.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                break;
            }
            b.append((char) c);
        }
        return b.toString()
                + (b.toString().contains(" 502 ") ? new String(in.readNBytes(512), StandardCharsets.UTF_8) : "");
    }

    private static SSLContext trusting(X509Certificate ca) throws Exception {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        ks.setCertificateEntry("ca", ca);
        TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        f.init(ks);
        SSLContext c = SSLContext.getInstance("TLS");
        c.init(null, f.getTrustManagers(), null);
        return c;
    }

    /** A self-signed certificate for a name, made for this test's server. */
    private SSLContext serverTls(String name) throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(256);
        KeyPair keys = g.generateKeyPair();
        X500Name subject = new X500Name("CN=" + name);
        Instant now = Instant.now();
        tlsCert = new JcaX509CertificateConverter()
                .getCertificate(new JcaX509v3CertificateBuilder(
                                subject,
                                BigInteger.valueOf(now.toEpochMilli()),
                                Date.from(now.minusSeconds(300)),
                                Date.from(now.plus(Duration.ofDays(1))),
                                subject,
                                keys.getPublic())
                        .addExtension(
                                Extension.subjectAlternativeName,
                                false,
                                new GeneralNames(new GeneralName(GeneralName.dNSName, name)))
                        .build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate())));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("server", keys.getPrivate(), new char[0], new X509Certificate[] {tlsCert});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, new char[0]);
        SSLContext c = SSLContext.getInstance("TLS");
        c.init(kmf.getKeyManagers(), null, null);
        return c;
    }
}
