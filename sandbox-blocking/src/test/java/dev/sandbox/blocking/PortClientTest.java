package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.SessionClosedException;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/** The blocking facade's port forwards: a web page served in the session read through one; closing ends them. */
class PortClientTest {

    @Test
    void aPageServedInTheSessionIsReadThroughAForwardAndClosingTheClientStopsIt() throws Exception {
        int port = ThreadLocalRandom.current().nextInt(17_000, 20_000); // below the ephemeral range
        PortClient.Forward web;
        try (SandboxClient client = SandboxClient.local()) {
            client.process().run(ExecOptions.shell("mkdir -p www && echo 'hello through the tunnel' > www/index.html"));
            client.process()
                    .start(ExecOptions.shell("exec busybox httpd -f -p 127.0.0.1:" + port + " -h \"$PWD/www\""));
            web = client.ports().forward(port);
            assertThat(client.ports().forwards())
                    .extracting(PortClient.Forward::sandboxPort)
                    .containsExactly(port);
            HttpClient http = HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(5))
                    .build();
            HttpRequest get = HttpRequest.newBuilder(URI.create("http://" + web.hostString() + "/index.html"))
                    .timeout(Duration.ofSeconds(10))
                    .build();
            HttpResponse<String> page = null;
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (page == null || page.statusCode() != 200) {
                assertThat(System.nanoTime()).as("httpd answers in time").isLessThan(deadline);
                try {
                    page = http.send(get, HttpResponse.BodyHandlers.ofString());
                } catch (IOException e) {
                    Thread.sleep(100); // httpd not listening yet: the forward closed that connection
                }
            }
            assertThat(page.body()).isEqualTo("hello through the tunnel\n");
            web.close();
            assertThat(web.isOpen()).isFalse();
            PortClient.Forward again = client.ports().forward(port);
            assertThat(again.isOpen()).isTrue();
            web = again;
        }
        assertThat(web.isOpen()).as("closing the client closes its forwards").isFalse();
        try (Socket s = new Socket()) {
            PortClient.Forward closed = web;
            assertThatThrownBy(() -> s.connect(closed.localAddress(), 2000)).isInstanceOf(IOException.class);
        }
    }

    @Test
    void aHostServiceIsReachedFromTheSessionThroughAReverseForward() throws Exception {
        try (java.net.ServerSocket service =
                        new java.net.ServerSocket(0, 5, java.net.InetAddress.getLoopbackAddress());
                SandboxClient client = SandboxClient.local()) {
            Thread.ofVirtual().start(() -> {
                try (Socket c = service.accept()) {
                    c.getOutputStream()
                            .write("hello from the host\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                } catch (IOException e) {
                    // the test failed elsewhere
                }
            });
            int port = ThreadLocalRandom.current().nextInt(17_000, 20_000); // below the ephemeral range
            PortClient.Reverse r;
            try (PortClient.Reverse open =
                    client.ports().reverse(port, (java.net.InetSocketAddress) service.getLocalSocketAddress())) {
                r = open;
                assertThat(open.isOpen()).isTrue();
                String got = client.process()
                        .run(ExecOptions.shell("busybox nc 127.0.0.1 " + port + " </dev/null"))
                        .stdout();
                assertThat(got).isEqualTo("hello from the host\n");
            }
            assertThat(r.isOpen()).isFalse();
        }
    }

    @Test
    void aClosedClientOpensNoForward() {
        SandboxClient client = SandboxClient.local();
        client.close();
        assertThatThrownBy(() -> client.ports().forward(8080)).isInstanceOf(SessionClosedException.class);
    }
}
