package dev.sandbox.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.sandbox.InvalidArgumentException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.NestedExceptionUtils;
import tools.jackson.databind.json.JsonMapper;

/**
 * DNS rebinding: a web page on a name its author controls points that name at 127.0.0.1 and then talks to the demo as
 * if it were its own origin. The requests here go over a raw socket to the real server on its loopback port, so the
 * {@code Host} and {@code Origin} headers are exactly what such a page's browser would send. A refused request gets a
 * 403 with a JSON {@link ApiError} naming the header, and its command does not run (its marker file never appears).
 */
@SpringBootTest(
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "sandbox.demo.allowed-hosts=sandbox.test, localhost:9000")
class RebindingGuardTest {
    private static final JsonMapper JSON = new JsonMapper();
    private static final int SOCKET_TIMEOUT_MILLIS = 20_000;
    private static final int MAX_RESPONSE = 1024 * 1024;

    @LocalServerPort
    int port;

    @TempDir
    Path dir;

    private record Response(int status, String head, String body) {
        ApiError error() {
            assertThat(head.toLowerCase()).contains("content-type: application/json");
            return JSON.readValue(body, ApiError.class);
        }
    }

    /** Sends one HTTP/1.1 request with exactly the given header lines and reads the whole answer. */
    private Response send(String requestLine, List<String> headers, byte[] body) throws IOException {
        StringBuilder head = new StringBuilder(requestLine).append("\r\n");
        for (String header : headers) {
            head.append(header).append("\r\n");
        }
        if (body.length > 0) {
            head.append("Content-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: ")
                    .append(body.length)
                    .append("\r\n");
        }
        head.append("Connection: close\r\n\r\n");
        try (Socket socket = new Socket()) {
            socket.setSoTimeout(SOCKET_TIMEOUT_MILLIS);
            socket.connect(new InetSocketAddress("127.0.0.1", port), SOCKET_TIMEOUT_MILLIS);
            // one write, as a browser sends a small request: the server may answer a refused request and close
            // before reading its body, and a body that arrived after that would reset the connection
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
            request.write(body);
            OutputStream out = socket.getOutputStream();
            out.write(request.toByteArray());
            out.flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) >= 0; ) {
                answer.write(buffer, 0, n);
                assertThat(answer.size()).as("response size").isLessThan(MAX_RESPONSE);
            }
            String text = answer.toString(StandardCharsets.UTF_8);
            int end = text.indexOf("\r\n\r\n");
            assertThat(end).as("end of the response head in %s", text).isPositive();
            int status = Integer.parseInt(text.substring(text.indexOf(' ') + 1, text.indexOf(' ') + 4));
            return new Response(status, text.substring(0, end), text.substring(end + 4));
        }
    }

    private Response exec(Path marker, String... headers) throws IOException {
        byte[] body = JSON.writeValueAsBytes(Map.of("command", List.of("sh", "-c", "touch " + marker + "; echo ran")));
        return send("POST /api/exec HTTP/1.1", List.of(headers), body);
    }

    private String own(String name) {
        return name + ":" + port;
    }

    /**
     * Checks that the refused command never ran: a command sent afterwards with the right headers runs to its end,
     * and the refused one's marker is still missing.
     */
    private void assertNothingRan(Path marker) throws IOException {
        Path control = dir.resolve("control");
        Response ok = exec(control, "Host: " + own("127.0.0.1"));
        assertThat(ok.status()).isEqualTo(200);
        assertThat(ok.body()).contains("event:exit");
        assertThat(control).exists();
        assertThat(marker).as("the refused command's marker").doesNotExist();
    }

    @Test
    void a_page_on_a_rebound_name_is_refused_and_runs_nothing() throws IOException {
        Path marker = dir.resolve("marker");
        // what a browser sends from http://evil.example:PORT/ once evil.example resolves to 127.0.0.1
        Response response = exec(marker, "Host: " + own("evil.example"), "Origin: http://" + own("evil.example"));

        assertThat(response.status()).isEqualTo(403);
        ApiError error = response.error();
        assertThat(error.error()).isEqualTo("host_not_allowed");
        assertThat(error.field()).isEqualTo("Host");
        assertThat(error.message()).contains("evil.example", "sandbox.demo.allowed-hosts");
        assertNothingRan(marker);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "evil.example",
                "evil.example:PORT",
                "localhost.evil.example:PORT",
                "127.0.0.1.nip.io:PORT",
                "localhost.:PORT",
                "localhost:1",
                "localhost",
                "127.0.0.1:PORT0",
                "[::2]:PORT",
                "sandbox.test:9000",
                "",
            })
    void a_request_for_any_other_host_is_refused_and_runs_nothing(String host) throws IOException {
        host = host.replace("PORT", Integer.toString(port));
        Path marker = dir.resolve("marker");

        Response response = exec(marker, "Host: " + host);

        assertThat(response.status()).as("answer to Host '%s'", host).isEqualTo(403);
        assertThat(response.error().field()).isEqualTo("Host");
        assertNothingRan(marker);
    }

    @Test
    void a_request_without_a_host_or_with_two_is_refused() throws IOException {
        Path marker = dir.resolve("marker");
        byte[] body = JSON.writeValueAsBytes(Map.of("command", List.of("touch", marker.toString())));

        Response none = send("POST /api/exec HTTP/1.0", List.of(), body);
        Response two = send(
                "POST /api/exec HTTP/1.1", List.of("Host: " + own("127.0.0.1"), "Host: " + own("evil.example")), body);

        assertThat(none.status()).isEqualTo(403);
        assertThat(none.error().field()).isEqualTo("Host");
        assertThat(two.status()).as("two Host headers").isEqualTo(403);
        assertThat(two.error().field()).isEqualTo("Host");
        assertNothingRan(marker);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "http://evil.example",
                "http://evil.example:PORT",
                "null",
                "http://127.0.0.1",
                "http://127.0.0.1:1",
                "file://",
                "http://127.0.0.1:PORT/page",
                "http://127.0.0.1:PORT@evil.example",
                "",
            })
    void a_foreign_origin_with_the_right_host_is_refused_and_runs_nothing(String origin) throws IOException {
        origin = origin.replace("PORT", Integer.toString(port));
        Path marker = dir.resolve("marker");

        Response response = exec(marker, "Host: " + own("127.0.0.1"), "Origin: " + origin);

        assertThat(response.status()).as("answer to Origin '%s'", origin).isEqualTo(403);
        ApiError error = response.error();
        assertThat(error.error()).isEqualTo("origin_not_allowed");
        assertThat(error.field()).isEqualTo("Origin");
        assertNothingRan(marker);
    }

    @Test
    void two_origins_are_refused() throws IOException {
        Path marker = dir.resolve("marker");
        Response response = exec(
                marker,
                "Host: " + own("127.0.0.1"),
                "Origin: http://" + own("127.0.0.1"),
                "Origin: http://evil.example");
        assertThat(response.status()).isEqualTo(403);
        assertThat(response.error().field()).isEqualTo("Origin");
        assertNothingRan(marker);
    }

    @Test
    void the_page_is_not_served_to_a_foreign_host_either() throws IOException {
        Response response = send("GET / HTTP/1.1", List.of("Host: " + own("evil.example")), new byte[0]);
        assertThat(response.status()).isEqualTo(403);
        assertThat(response.body()).doesNotContain("api/exec");
    }

    @ParameterizedTest
    @ValueSource(strings = {"localhost", "127.0.0.1", "[::1]", "LocalHost", "sandbox.test"})
    void the_servers_own_names_on_its_port_run_commands_with_or_without_their_origin(String name) throws IOException {
        Path withoutOrigin = dir.resolve("without-origin");
        Path withOrigin = dir.resolve("with-origin");

        Response curl = exec(withoutOrigin, "Host: " + own(name));
        Response browser = exec(withOrigin, "Host: " + own(name), "Origin: http://" + own(name.toLowerCase()));

        assertThat(curl.status()).isEqualTo(200);
        assertThat(curl.body()).contains("event:stdout", "ran", "event:exit");
        assertThat(withoutOrigin).exists();
        assertThat(browser.status()).isEqualTo(200);
        assertThat(browser.body()).contains("event:exit");
        assertThat(withOrigin).exists();

        Response page = send("GET / HTTP/1.1", List.of("Host: " + own(name)), new byte[0]);
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.body()).contains("api/exec");
    }

    @Test
    void an_allowed_name_with_a_port_is_accepted_on_that_port_as_a_tunnel_would_send_it() throws IOException {
        // ssh -L 9000:127.0.0.1:PORT: the browser shows http://localhost:9000/ and sends that as Host and Origin
        Path marker = dir.resolve("marker");
        Response response = exec(marker, "Host: localhost:9000", "Origin: http://localhost:9000");
        assertThat(response.status()).isEqualTo(200);
        assertThat(marker).exists();
    }

    @Test
    void the_server_listens_on_loopback_only() throws IOException {
        assertThat(listeners(port)).as("addresses listening on port %d", port).containsExactly("127.0.0.1");

        for (InetAddress address : otherAddresses()) {
            assertThatThrownBy(() -> {
                        try (Socket socket = new Socket()) {
                            socket.connect(new InetSocketAddress(address, port), SOCKET_TIMEOUT_MILLIS);
                        }
                    })
                    .as("connecting to %s:%d", address.getHostAddress(), port)
                    .isInstanceOf(ConnectException.class);
        }
    }

    @Test
    void a_bad_allowed_hosts_entry_stops_the_application_naming_it() {
        for (String entry : List.of("*", "http://example.com", "::1", "bad name", "example.com:99999")) {
            Throwable failure = catchThrowable(() -> SpringApplication.run(
                            WebfluxDemoApplication.class,
                            "--server.port=0",
                            "--spring.main.banner-mode=off",
                            "--sandbox.demo.allowed-hosts=localhost," + entry)
                    .close());
            Throwable cause = NestedExceptionUtils.getMostSpecificCause(failure);
            assertThat(cause)
                    .as("startup with allowed host '%s'", entry)
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("'" + entry + "'");
            assertThat(((InvalidArgumentException) cause).field()).isEqualTo("sandbox.demo.allowed-hosts[1]");
        }
    }

    /** The local addresses with a TCP socket listening on the port, from the kernel's socket tables. */
    private static Set<String> listeners(int port) throws IOException {
        Set<String> addresses = new LinkedHashSet<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            Path file = Path.of(table);
            if (!Files.exists(file)) {
                continue;
            }
            List<String> lines = Files.readAllLines(file);
            for (String line : lines.subList(1, lines.size())) {
                String[] columns = line.trim().split("\\s+");
                String[] local = columns[1].split(":");
                boolean listening = columns[3].equals("0A");
                if (listening && Integer.parseInt(local[1], 16) == port) {
                    addresses.add(decode(local[0]));
                }
            }
        }
        return addresses;
    }

    /** An address as /proc/net/tcp{,6} prints it: 32-bit words in hex, each in the host's (little-endian) order. */
    private static String decode(String hex) throws IOException {
        byte[] raw = HexFormat.of().parseHex(hex);
        for (int word = 0; word < raw.length; word += 4) {
            for (int i = 0; i < 2; i++) {
                byte b = raw[word + i];
                raw[word + i] = raw[word + 3 - i];
                raw[word + 3 - i] = b;
            }
        }
        return InetAddress.getByAddress(raw).getHostAddress();
    }

    /** This machine's addresses other than loopback (and IPv6 link-local, which needs a scope to reach). */
    private static List<InetAddress> otherAddresses() throws IOException {
        List<InetAddress> addresses = new ArrayList<>();
        for (NetworkInterface nic : NetworkInterface.networkInterfaces().toList()) {
            if (!nic.isUp() || nic.isLoopback()) {
                continue;
            }
            for (InetAddress address : nic.inetAddresses().toList()) {
                if (!(address instanceof Inet6Address && address.isLinkLocalAddress())) {
                    addresses.add(address);
                }
            }
        }
        return addresses;
    }
}
