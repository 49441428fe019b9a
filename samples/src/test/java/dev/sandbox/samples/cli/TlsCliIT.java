package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.testsupport.TestCertificate;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sandbox serve --tls-cert --tls-key} as a real process with a certificate {@code keytool} made, and the CLI's
 * remote commands against it over https; the errors a user meets on the way are one line each.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class TlsCliIT {
    private Path dir;
    private Path token;
    private TestCertificate cert;
    private JarCli.Server server;

    @BeforeAll
    void serve(@TempDir Path classDir) throws Exception {
        dir = classDir;
        token = JarCli.tokenFile(dir.resolve("token"), "tls-cli-token-0123456789abcdef");
        cert = TestCertificate.make(dir, "server", "ip:127.0.0.1,dns:localhost");
        server = JarCli.Server.start(
                dir,
                token,
                "--tls-cert",
                cert.certificate().toString(),
                "--tls-key",
                cert.privateKey().toString());
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private String[] remote(boolean trust, String subcommand, String... rest) {
        List<String> args = new ArrayList<>(
                List.of(subcommand, "--provider", "remote", "--url", server.url(), "--token-file", token.toString()));
        if (trust) {
            args.addAll(List.of("--ca-cert", cert.certificate().toString()));
        }
        args.addAll(List.of(rest));
        return args.toArray(String[]::new);
    }

    @Test
    void execAndCopyGoOverHttpsWithTheCertificateTrusted() throws Exception {
        assertThat(server.url()).startsWith("https://127.0.0.1:");
        JarCli.Result exec = JarCli.run(dir, remote(true, "exec", "--", "sh", "-c", "echo over-$((40+3))"));
        assertThat(exec.code()).as(exec.err()).isZero();
        assertThat(exec.out()).isEqualTo("over-43\n");
        assertThat(exec.err()).isEmpty();

        JarCli.Result created = JarCli.run(dir, remote(true, "create"));
        assertThat(created.code()).as(created.err()).isZero();
        String session = created.out().strip();
        try {
            Files.writeString(dir.resolve("up.txt"), "through tls\n");
            assertThat(JarCli.run(dir, remote(true, "cp", "up.txt", session + ":in.txt"))
                            .code())
                    .isZero();
            assertThat(JarCli.run(dir, remote(true, "cp", session + ":in.txt", "down.txt"))
                            .code())
                    .isZero();
            assertThat(dir.resolve("down.txt")).hasContent("through tls");
        } finally {
            JarCli.run(dir, remote(true, "destroy", session));
        }
    }

    @Test
    void withoutTheCertificateTrustedTheErrorIsOneLineNamingTheHost() throws Exception {
        JarCli.Result refused = JarCli.run(dir, remote(false, "exec", "--", "true"));
        assertThat(refused.code()).isEqualTo(1);
        int port = Integer.parseInt(server.url().substring(server.url().lastIndexOf(':') + 1));
        assertThat(refused.err().lines()).hasSize(1);
        assertThat(refused.err())
                .startsWith("sandbox: the sandbox server at https://127.0.0.1:" + port
                        + " presented a TLS certificate that is not trusted")
                .contains("--ca-cert FILE")
                .doesNotContain("Exception")
                .doesNotContain("io.netty");
    }

    @Test
    void aSecondServeOnTheSamePortSaysWhichPortAndWhatToDo() throws Exception {
        int port = Integer.parseInt(server.url().substring(server.url().lastIndexOf(':') + 1));
        JarCli.Result busy = JarCli.run(dir, "serve", "--port", String.valueOf(port), "--token-file", token.toString());
        assertThat(busy.code()).isEqualTo(1);
        assertThat(busy.err())
                .isEqualTo("sandbox: cannot listen on 127.0.0.1:" + port + ": port " + port + " is already in use by"
                        + " another program (perhaps another sandbox serve); stop it, or choose another port (0 picks a"
                        + " free one)\n");
    }

    @Test
    void aDockerHostWhereNoDaemonListensNamesDockerHost() throws Exception {
        try (Socket reserved = new Socket()) {
            reserved.bind(new InetSocketAddress("127.0.0.1", 0)); // bound, not listening: connections are refused
            String host = "tcp://127.0.0.1:" + reserved.getLocalPort();
            ProcessBuilder pb = new ProcessBuilder(JarCli.command("exec", "--provider", "docker", "--", "true"))
                    .directory(dir.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            Map<String, String> env = pb.environment();
            env.put("DOCKER_HOST", host);
            Process p = pb.start();
            CompletableFuture<String> out = JarCli.drain(p.getInputStream());
            CompletableFuture<String> err = JarCli.drain(p.getErrorStream());
            assertThat(p.waitFor(90, TimeUnit.SECONDS)).isTrue();
            String message = err.get(30, TimeUnit.SECONDS);
            assertThat(p.exitValue()).as(message).isEqualTo(1);
            assertThat(out.get(30, TimeUnit.SECONDS)).isEmpty();
            assertThat(message.lines()).hasSize(1);
            assertThat(message)
                    .startsWith("sandbox: docker: ")
                    .contains("the daemon at " + host + " is not reachable (connection refused)")
                    .contains("DOCKER_HOST")
                    .doesNotContain("Exception")
                    .doesNotContain("dockerjava");
        }
    }
}
