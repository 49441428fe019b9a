package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.docker.RequiresDocker;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sandbox port-forward} on a real Docker session (network {@code none}): a page of busybox httpd, listening on
 * the sandbox's loopback only, read with an HTTP client through the address the CLI prints; Ctrl-C (a real SIGINT to
 * the {@code java -jar} process) closes the forward with exit code 0 and the address refuses afterwards; and the
 * session's end (destroyed by another CLI) ends the command with one line naming the session and exit code 1.
 */
@RequiresDocker
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class PortForwardCliIT {
    private static final Pattern FORWARDING =
            Pattern.compile("Forwarding (\\S+):(\\d+) -> sandbox port (\\d+) of (\\S+)");
    private static final List<String> DOCKER =
            List.of("--provider", "docker", "--image", DockerCliTest.TEST_IMAGE, "--pull", "never");

    @TempDir
    Path dir;

    private String session;

    @BeforeEach
    void createSession() throws Exception {
        JarCli.Result created = JarCli.run(dir, args(List.of("create"), DOCKER, List.of("--lifetime", "3m")));
        assertThat(created.code()).as(created.err()).isZero();
        session = created.out().strip();
    }

    @AfterEach
    void destroySession() throws Exception {
        JarCli.run(dir, args(List.of("destroy", "--provider", "docker"), List.of(session)));
    }

    @Test
    void aPageOfTheSandboxsLoopbackThroughThePrintedAddressAndCtrlCClosesIt() throws Exception {
        exec("sh", "-c", "mkdir -p /tmp/www && echo 'hello through the forward' > /tmp/www/index.html");
        JarCli.Result httpd = JarCli.run(
                dir,
                args(
                        List.of("exec"),
                        DOCKER,
                        List.of(
                                "--session",
                                session,
                                "--background",
                                "--",
                                "busybox",
                                "httpd",
                                "-f",
                                "-p",
                                "127.0.0.1:8080",
                                "-h",
                                "/tmp/www")));
        assertThat(httpd.code()).as(httpd.err()).isZero();

        Process cli = start(args(List.of("port-forward"), DOCKER, List.of(session, "8080")));
        try {
            CompletableFuture<String> err = JarCli.drain(cli.getErrorStream());
            Matcher line = firstLine(cli, err);
            assertThat(line.group(1)).isEqualTo("127.0.0.1");
            assertThat(line.group(3)).isEqualTo("8080");
            assertThat(line.group(4)).isEqualTo(session);
            int port = Integer.parseInt(line.group(2));
            assertThat(port).isPositive();

            HttpResponse<String> page = get(URI.create("http://127.0.0.1:" + port + "/index.html"));
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).isEqualTo("hello through the forward\n");

            interrupt(cli);
            assertThat(cli.waitFor(60, TimeUnit.SECONDS))
                    .as("the CLI exits on SIGINT")
                    .isTrue();
            String stderr = err.get(30, TimeUnit.SECONDS);
            assertThat(cli.exitValue()).as(stderr).isZero();
            assertThat(stderr).contains("closed").doesNotContain("Exception");
            assertThatThrownBy(() -> {
                        try (Socket s = new Socket()) {
                            s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
                        }
                    })
                    .as("the forward's address after Ctrl-C")
                    .isInstanceOf(ConnectException.class);
        } finally {
            cli.destroyForcibly();
        }
    }

    @Test
    void theSessionsEndEndsItWithOneLineNamingTheSessionAndANonZeroExit() throws Exception {
        Process cli = start(args(List.of("port-forward"), DOCKER, List.of("--address", "0.0.0.0", session, "8080")));
        try {
            CompletableFuture<String> err = JarCli.drain(cli.getErrorStream());
            Matcher line = firstLine(cli, err);
            assertThat(line.group(1)).isEqualTo("0.0.0.0");

            JarCli.Result destroyed = JarCli.run(dir, "destroy", "--provider", "docker", session);
            assertThat(destroyed.code()).as(destroyed.err()).isZero();

            assertThat(cli.waitFor(60, TimeUnit.SECONDS))
                    .as("the CLI exits when its session ends")
                    .isTrue();
            String stderr = err.get(30, TimeUnit.SECONDS);
            assertThat(cli.exitValue()).as(stderr).isEqualTo(1);
            List<String> lines = stderr.lines().toList();
            assertThat(lines).as(stderr).hasSize(2);
            // the warning comes first: 0.0.0.0 is no loopback address
            assertThat(lines.get(0))
                    .startsWith("sandbox: warning: listening on 0.0.0.0, not loopback")
                    .contains("anyone who can reach this address");
            assertThat(lines.get(1)).startsWith("sandbox: ").contains(session).contains("8080");
        } finally {
            cli.destroyForcibly();
        }
    }

    private void exec(String... command) throws Exception {
        JarCli.Result r =
                JarCli.run(dir, args(List.of("exec"), DOCKER, List.of("--session", session, "--"), List.of(command)));
        assertThat(r.code()).as(r.err()).isZero();
    }

    /** The server may take a moment to listen: a refused connection is closed by the forward, so retry briefly. */
    private static HttpResponse<String> get(URI uri) throws Exception {
        try (HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()) {
            HttpRequest request =
                    HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (true) {
                try {
                    return http.send(request, HttpResponse.BodyHandlers.ofString());
                } catch (IOException e) {
                    if (System.nanoTime() - deadline > 0) {
                        throw e;
                    }
                    Thread.sleep(200);
                }
            }
        }
    }

    /** Starts the CLI with SIGINT at its default (see {@link CtrlCCliIT}). */
    private Process start(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("env", "--default-signal=INT"));
        command.addAll(JarCli.command(args));
        return new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
    }

    /** The CLI's first line, the forward's, parsed; the rest of stdout is drained. */
    private static Matcher firstLine(Process cli, CompletableFuture<String> err) throws Exception {
        BufferedReader out = new BufferedReader(new InputStreamReader(cli.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        String line = first.get(90, TimeUnit.SECONDS);
        assertThat(line).as(() -> err.getNow("(stderr still open)")).isNotNull();
        Matcher m = FORWARDING.matcher(line);
        assertThat(m.matches()).as(line).isTrue();
        JarCli.drain(cli.getInputStream());
        return m;
    }

    private static void interrupt(Process cli) throws Exception {
        Process kill = new ProcessBuilder("kill", "-INT", Long.toString(cli.pid()))
                .inheritIO()
                .start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(kill.exitValue()).isZero();
    }

    @SafeVarargs
    private static String[] args(List<String>... parts) {
        List<String> all = new ArrayList<>();
        for (List<String> part : parts) {
            all.addAll(part);
        }
        return all.toArray(String[]::new);
    }
}
