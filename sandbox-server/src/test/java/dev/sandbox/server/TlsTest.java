package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.PtyOptions;
import dev.sandbox.PtySession;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import dev.sandbox.testsupport.TestCertificate;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * {@code https}: a server started with a self-signed certificate (made by {@code keytool}) serves a remote provider
 * that trusts it (commands, streams, files, a terminal); a client that does not trust it, or whose URL's host the certificate does not name, is refused with
 * a message in a user's words.
 */
class TlsTest {
    private static final char[] TOKEN = "tls-test-token-0123456789".toCharArray();
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    static Path dir;

    static TestCertificate cert;
    static LocalSandboxProvider local;
    static SandboxServer server;

    @BeforeAll
    static void start() throws Exception {
        cert = TestCertificate.make(dir, "server", "ip:127.0.0.1,dns:localhost");
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local)
                .port(0)
                .token(TOKEN)
                .tls(cert.certificate(), cert.privateKey())
                .start();
    }

    @AfterAll
    static void stop() {
        server.close();
        local.close();
    }

    private static RemoteSandboxProvider.Builder client(String url) {
        return RemoteSandboxProvider.builder().baseUrl(url).token(TOKEN).reconnect(0, Duration.ofMillis(50));
    }

    @Test
    void aClientThatTrustsTheCertificateRunsCommandsStreamsAndMovesFiles() throws Exception {
        assertThat(server.baseUrl()).startsWith("https://127.0.0.1:");
        try (RemoteSandboxProvider remote =
                client(server.baseUrl()).trustedCertificates(cert.certificate()).build()) {
            SandboxSession s = remote.create(SessionOptions.defaults()).block(WAIT);
            try {
                assertThat(s.run(ExecOptions.shell("echo over-tls")).block(WAIT).stdout())
                        .isEqualTo("over-tls\n");
                List<ExecEvent> events = s.exec(ExecOptions.shell("for i in 1 2 3; do echo $i; done"))
                        .collectList()
                        .block(WAIT);
                assertThat(events)
                        .filteredOn(e -> e instanceof ExecEvent.Stdout)
                        .extracting(e -> ((ExecEvent.Stdout) e).text())
                        .containsExactly("1", "2", "3");

                byte[] content = "bytes through TLS\n".repeat(10_000).getBytes(StandardCharsets.UTF_8);
                s.files().write("in.txt", content).block(WAIT);
                assertThat(s.files().readAllBytes("in.txt", 1 << 20).block(WAIT))
                        .isEqualTo(content);
                Path local = dir.resolve("down.txt");
                s.files().download("in.txt", local).block(WAIT);
                assertThat(Files.readAllBytes(local)).isEqualTo(content);

                // a terminal: a WebSocket, over TLS too
                PtySession pty = s.pty(PtyOptions.shell()).block(WAIT);
                StringBuffer screen = new StringBuffer();
                Disposable reading = pty.output().subscribe(b -> screen.append(StandardCharsets.UTF_8.decode(b)));
                try {
                    pty.write(ByteBuffer.wrap("echo pty-$((6*7))\nexit 3\n".getBytes(StandardCharsets.UTF_8)))
                            .block(WAIT);
                    assertThat(pty.exit().block(WAIT).code()).isEqualTo(3);
                    Flux.interval(Duration.ofMillis(20))
                            .takeUntil(i -> screen.toString().contains("pty-42"))
                            .blockLast(WAIT);
                    assertThat(screen.toString()).contains("pty-42");
                } finally {
                    reading.dispose();
                }
            } finally {
                s.close();
            }
        }
    }

    @Test
    void aClientWithoutTheTrustIsToldTheCertificateIsNotTrusted() {
        try (RemoteSandboxProvider remote = client(server.baseUrl()).build()) {
            assertThatThrownBy(() -> remote.create(SessionOptions.defaults()).block(WAIT))
                    .isInstanceOf(BackendException.class)
                    .satisfies(e -> assertThat(((SandboxException) e).isRetryable())
                            .as("retrying cannot help")
                            .isFalse())
                    .hasMessageContaining("https://127.0.0.1:" + server.port())
                    .hasMessageContaining("certificate that is not trusted")
                    .hasMessageContaining("trustedCertificates")
                    .satisfies(TlsTest::noClassNames);
        }
    }

    @Test
    void aCertificateThatDoesNotNameTheHostIsRefused() throws Exception {
        TestCertificate other = TestCertificate.make(dir, "other", "dns:sandbox.example");
        try (RemoteSandboxProvider remote = client(server.baseUrl())
                .trustedCertificates(other.certificate())
                .build()) {
            assertThatThrownBy(() -> remote.create(SessionOptions.defaults()).block(WAIT))
                    .as("a certificate the client trusts, but not the server's")
                    .isInstanceOf(BackendException.class)
                    .hasMessageContaining("not trusted");
        }
        try (LocalSandboxProvider p = LocalSandboxProvider.create();
                SandboxServer misnamed = SandboxServer.builder(p)
                        .port(0)
                        .token(TOKEN)
                        .tls(other.certificate(), other.privateKey())
                        .start();
                RemoteSandboxProvider remote = client(misnamed.baseUrl())
                        .trustedCertificates(other.certificate())
                        .build()) {
            assertThatThrownBy(() -> remote.create(SessionOptions.defaults()).block(WAIT))
                    .as("the host is checked against the certificate's names")
                    .isInstanceOf(BackendException.class)
                    .hasMessageContaining("https://127.0.0.1:" + misnamed.port())
                    .hasMessageContaining("not issued for '127.0.0.1'")
                    .satisfies(TlsTest::noClassNames);
        }
    }

    @Test
    void theWrongSchemeSaysWhichOneToUse() {
        String plainUrl = server.baseUrl().replace("https://", "http://");
        try (RemoteSandboxProvider remote = client(plainUrl).build()) {
            assertThatThrownBy(() -> remote.create(SessionOptions.defaults()).block(WAIT))
                    .isInstanceOf(BackendException.class)
                    .hasMessageContaining("http://127.0.0.1:" + server.port())
                    .hasMessageContaining("use an https:// URL")
                    .satisfies(TlsTest::noClassNames);
        }
        try (LocalSandboxProvider p = LocalSandboxProvider.create();
                SandboxServer plain =
                        SandboxServer.builder(p).port(0).token(TOKEN).start();
                RemoteSandboxProvider remote =
                        client(plain.baseUrl().replace("http://", "https://")).build()) {
            assertThatThrownBy(() -> remote.create(SessionOptions.defaults()).block(WAIT))
                    .isInstanceOf(BackendException.class)
                    .hasMessageContaining("https://127.0.0.1:" + plain.port())
                    .hasMessageContaining("use an http:// URL")
                    .satisfies(TlsTest::noClassNames);
        }
    }

    @Test
    void badTlsFilesAreRefusedWhenTheServerStartsNamingTheSetting() throws Exception {
        Path missing = dir.resolve("missing.pem");
        Path notAKey = Files.writeString(dir.resolve("not-a-key.pem"), "hello\n");
        assertThatThrownBy(() -> SandboxServer.builder(local)
                        .port(0)
                        .token(TOKEN)
                        .tls(missing, cert.privateKey())
                        .start())
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessage("tlsCertificate '" + missing + "' was not found");
        assertThatThrownBy(() -> SandboxServer.builder(local)
                        .port(0)
                        .token(TOKEN)
                        .tls(cert.certificate(), notAKey)
                        .start())
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("not-a-key.pem")
                .hasMessageContaining("PKCS#8");
        assertThatThrownBy(() ->
                        client(server.baseUrl()).trustedCertificates(missing).build())
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessage("trustedCertificates '" + missing + "' was not found");
        assertThatThrownBy(() ->
                        client(server.baseUrl()).trustedCertificates(notAKey).build())
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("holds no");
        assertThatThrownBy(() -> client("http://127.0.0.1:1")
                        .trustedCertificates(cert.certificate())
                        .build())
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("applies to an https URL only");
    }

    /** The message is for a person: no Java or Netty class names. */
    static void noClassNames(Throwable e) {
        assertThat(e.getMessage())
                .doesNotContainPattern("[a-z]+\\.[a-z]+\\.[A-Za-z]*(Exception|Error)|io\\.netty|sun\\.");
    }
}
