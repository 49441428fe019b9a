package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.command.InspectContainerResponse;
import dev.sandbox.ExecOptions;
import dev.sandbox.PortForward;
import dev.sandbox.PortForwardOptions;
import dev.sandbox.SandboxSession;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Port forwards into Docker sandboxes that have no network: a web server in the sandbox read from the host through
 * the agent's connection, the container still on network {@code none}; a client that stops reading holds up its own
 * connection only; a flood of connections beyond the forward's bound leaves it and the session usable.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerPortForwardTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private DockerTestSupport support;
    private DockerSandboxProvider provider;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        provider = DockerTestSupport.unsweptProvider();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    /** Starts busybox httpd on a port of the session, serving {@code www} of its workdir. */
    private static void httpd(SandboxSession s, int port) {
        s.run(ExecOptions.shell("mkdir -p www && echo 'served from a sandbox without network' > www/index.html"))
                .block(WAIT);
        s.start(ExecOptions.shell("exec busybox httpd -f -p 127.0.0.1:" + port + " -h \"$PWD/www\""))
                .block(WAIT);
    }

    /** GETs the index through a forward, retrying while the server does not listen yet. */
    private static String index(PortForward f) throws Exception {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest get = HttpRequest.newBuilder(URI.create("http://" + f.hostString() + "/index.html"))
                .timeout(Duration.ofSeconds(10))
                .build();
        long deadline = System.nanoTime() + WAIT.toNanos();
        for (; ; ) {
            try {
                HttpResponse<String> r = http.send(get, HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return r.body();
                }
            } catch (IOException e) {
                // the forward closed a connection nobody listened for yet
            }
            assertThat(System.nanoTime()).as("the server answers in time").isLessThan(deadline);
            Thread.sleep(100);
        }
    }

    /** Sends a line through an echo forward and reads the answer, retrying while nc re-listens between clients. */
    private static String echo(PortForward f, String line, long deadline) throws Exception {
        for (; ; ) {
            try (Socket c = new Socket()) {
                c.connect(f.localAddress(), 5000);
                c.setSoTimeout(10_000);
                c.getOutputStream().write(line.getBytes(StandardCharsets.US_ASCII));
                c.shutdownOutput();
                ByteArrayOutputStream got = new ByteArrayOutputStream();
                c.getInputStream().transferTo(got);
                if (got.size() > 0) {
                    return got.toString(StandardCharsets.US_ASCII);
                }
            } catch (IOException e) {
                // refused and reset: nc was between two clients
            }
            assertThat(System.nanoTime()).as("the echo answers in time").isLessThan(deadline);
            Thread.sleep(100);
        }
    }

    @Test
    void aWebServerInASandboxWithoutNetworkIsReadThroughAForward() throws Exception {
        SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
        try {
            httpd(s, 8080);
            PortForward f = s.ports().forward(8080).block(WAIT);
            assertThat(index(f)).isEqualTo("served from a sandbox without network\n");
            InspectContainerResponse c = support.docker
                    .inspectContainerCmd(support.container(s.id()).getId())
                    .exec();
            assertThat(c.getHostConfig().getNetworkMode()).isEqualTo("none");
            assertThat(c.getNetworkSettings().getPorts().getBindings())
                    .as("no port is published")
                    .isEmpty();
            String direct =
                    s.run(ExecOptions.shell("ls /sys/class/net")).block(WAIT).stdout();
            assertThat(direct.trim()).as("the sandbox has loopback only").isEqualTo("lo");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aClientThatStopsReadingHoldsUpOnlyItsOwnConnection() throws Exception {
        SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
        try {
            httpd(s, 8080);
            // an endless source: each connection gets its own `yes`
            s.start(ExecOptions.of("busybox", "nc", "-ll", "-p", "9000", "-e", "yes"))
                    .block(WAIT);
            PortForward web = s.ports().forward(8080).block(WAIT);
            PortForward endless = s.ports().forward(9000).block(WAIT);
            index(web);
            try (Socket stalled = new Socket()) {
                stalled.connect(endless.localAddress(), 5000);
                stalled.setSoTimeout(10_000);
                InputStream in = stalled.getInputStream();
                byte[] first = in.readNBytes(1024);
                assertThat(new String(first, StandardCharsets.US_ASCII)).startsWith("y\ny\n");
                // now it reads nothing for a while: the socket buffers, the relay and the agent's credit fill
                for (int i = 0; i < 20; i++) {
                    assertThat(index(web)).isEqualTo("served from a sandbox without network\n");
                }
                assertThat(s.run(ExecOptions.of("echo", "still here"))
                                .block(WAIT)
                                .stdout())
                        .isEqualTo("still here\n");
                // and it resumes where it stopped: 8 MiB more of y's, nothing lost or mangled
                byte[] more = in.readNBytes(8 << 20);
                assertThat(more.length).isEqualTo(8 << 20);
                for (int i = 0; i < more.length; i += 4096) {
                    assertThat(more[i]).isIn((byte) 'y', (byte) '\n');
                }
            }
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @Test
    void aFloodOfConnectionsBeyondTheBoundLeavesTheForwardUsable() throws Exception {
        SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
        List<Socket> flood = new ArrayList<>();
        try {
            httpd(s, 8080);
            s.start(ExecOptions.of("busybox", "nc", "-ll", "-p", "9000", "-e", "cat"))
                    .block(WAIT);
            PortForward held = s.ports()
                    .forward(PortForwardOptions.to(9000).withMaxConnections(16))
                    .block(WAIT);
            for (int i = 0; i < 300; i++) {
                Socket c = new Socket();
                c.connect(held.localAddress(), 5000);
                c.getOutputStream().write("garbage\u0000\u00ff".getBytes(StandardCharsets.ISO_8859_1));
                flood.add(c);
            }
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (held.acceptedConnections() < 300) {
                assertThat(System.nanoTime())
                        .as("the forward accepts the flood")
                        .isLessThan(deadline);
                Thread.sleep(20);
            }
            assertThat(held.openConnections()).as("at most the bound at once").isLessThanOrEqualTo(16);
            assertThat(held.isOpen()).isTrue();
            PortForward web = s.ports().forward(8080).block(WAIT);
            assertThat(index(web)).isEqualTo("served from a sandbox without network\n");
            for (Socket c : flood) {
                c.close();
            }
            flood.clear();
            while (held.openConnections() > 0) {
                assertThat(System.nanoTime()).as("the flood's connections end").isLessThan(deadline);
                Thread.sleep(20);
            }
            assertThat(echo(held, "after the flood\n", deadline)).isEqualTo("after the flood\n");
        } finally {
            for (Socket c : flood) {
                c.close();
            }
            s.destroy().block(WAIT);
        }
    }
}
