package dev.sandbox.samples.cli;

import static dev.sandbox.samples.cli.CommandLineTest.cli;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI's errors in a user's words: what failed, with the host, port, file or flag, and what to do. */
class CliErrorsTest {
    @TempDir
    Path dir;

    private Path token(String mode) throws Exception {
        Path file = dir.resolve("token-" + mode);
        Files.writeString(file, "cli-errors-token-0123456789abcdef\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
        return file;
    }

    @Test
    void aRefusedServerNamesTheHostAndPortInOneLine() throws Exception {
        try (Socket reserved = new Socket()) {
            reserved.bind(new InetSocketAddress("127.0.0.1", 0)); // bound, not listening: connections are refused
            int port = reserved.getLocalPort();
            CommandLineTest.Outcome o = cli(
                    "exec",
                    "--provider",
                    "remote",
                    "--url",
                    "http://127.0.0.1:" + port,
                    "--token-file",
                    token("rw-------").toString(),
                    "--",
                    "true");
            assertThat(o.code()).isEqualTo(1);
            assertThat(o.err())
                    .isEqualTo("sandbox: could not connect to the sandbox server at http://127.0.0.1:" + port
                            + ": the connection was refused (nothing listens on that port); check that the server runs"
                            + " (sandbox serve) and that the URL's host and port are its own\n");
        }
    }

    @Test
    void aBadEgressRuleForMcpIsAUsageErrorNamingIt() {
        CommandLineTest.Outcome o = cli("mcp", "--provider", "local", "--egress-allow", "pypi.org https");
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.firstErrorLine()).isEqualTo("sandbox: --egress-allow 'pypi.org https': not a port: 'https'");
        McpCommand mcp = CommandLineTest.parse(
                McpCommand.class, "mcp", "--egress-allow", "pypi.org 443", "--egress-allow", "10.0.0.0/8");
        assertThat(mcp.egressAllow).containsExactly("pypi.org 443", "10.0.0.0/8");
    }

    @Test
    void aMissingTokenFileIsNotFound() {
        CommandLineTest.Outcome o = cli(
                "exec",
                "--provider",
                "remote",
                "--url",
                "http://127.0.0.1:1",
                "--token-file",
                "nosuchfile",
                "--",
                "true");
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.firstErrorLine()).isEqualTo("sandbox: --token-file 'nosuchfile' was not found");
    }

    @Test
    void aTokenFileOthersCanReadIsWarnedAboutAndOneOthersCanWriteIsRefusedByServe() throws Exception {
        Path readable = token("rw-r--r--");
        CommandLineTest.Outcome client = cli(
                "exec",
                "--provider",
                "remote",
                "--url",
                "http://127.0.0.1:1",
                "--token-file",
                readable.toString(),
                "--",
                "true");
        assertThat(client.firstErrorLine())
                .isEqualTo("sandbox: warning: --token-file '" + readable + "' can be read by other users (mode 0644),"
                        + " and whoever reads it can use the server's sessions; run chmod 600 '" + readable + "'");

        Path writable = token("rw-rw-rw-");
        CommandLineTest.Outcome serve = cli("serve", "--port", "0", "--token-file", writable.toString());
        assertThat(serve.code()).isEqualTo(2);
        assertThat(serve.firstErrorLine())
                .isEqualTo("sandbox: --token-file '" + writable + "' can be changed by every user (mode 0666):"
                        + " anyone could add a token and use the server; run chmod 600 '" + writable + "'");

        CommandLineTest.Outcome quiet = cli(
                "exec",
                "--provider",
                "remote",
                "--url",
                "http://127.0.0.1:1",
                "--token-file",
                token("rw-------").toString(),
                "--",
                "true");
        assertThat(quiet.err()).as("an owner-only file gets no warning").doesNotContain("warning");
    }

    @Test
    void aMemoryLimitBelowDockersSmallestNamesTheFlagAndTheLimitInMib() {
        CommandLineTest.Outcome o = cli("create", "--provider", "docker", "--memory", "1m");
        assertThat(o.code()).isEqualTo(2);
        assertThat(o.firstErrorLine())
                .startsWith("sandbox: ")
                .contains("'--memory'")
                .contains("expected at least 6m (6 MiB, the smallest memory limit Docker accepts), got '1m' (1 MiB)");
    }

    @Test
    void tlsOptionsGoTogether() throws Exception {
        CommandLineTest.Outcome key = cli("serve", "--token-file", "t", "--tls-cert", "c.pem");
        assertThat(key.code()).isEqualTo(2);
        assertThat(key.firstErrorLine()).isEqualTo("sandbox: --tls-cert needs --tls-key FILE");
        CommandLineTest.Outcome plain = cli(
                "exec",
                "--provider",
                "remote",
                "--url",
                "http://127.0.0.1:1",
                "--token-file",
                "t",
                "--ca-cert",
                "c.pem",
                "--",
                "true");
        assertThat(plain.code()).isEqualTo(2);
        assertThat(plain.firstErrorLine())
                .isEqualTo("sandbox: --ca-cert applies to an https:// --url only, got 'http://127.0.0.1:1'");
        McpCommand mcp = CommandLineTest.parse(
                McpCommand.class,
                "mcp",
                "--provider",
                "remote",
                "--url",
                "https://127.0.0.1:7443",
                "--token-file",
                "t",
                "--ca-cert",
                "ca.pem");
        assertThat(mcp.provider.caCert()).isEqualTo(Path.of("ca.pem"));
    }
}
