package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.local.LocalSandboxProvider;
import java.net.CookieManager;
import java.net.HttpCookie;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The server's HTTP route to a web server in a session ({@code /v1/sessions/{id}/ports/{port}/http/...}), as an HTTP
 * client sees it (the JDK's, with a cookie store as a browser has): busybox httpd's pages, a 1 MiB file and a CGI
 * that echoes a POST come through; the token may come once in the URL and then lives in a cookie for that port only;
 * the sandbox's server never sees the token; an answer that is not HTTP is a 502.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PortHttpTest {
    private static final String TOKEN = "port-http-token-0123456789abcdef";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private LocalSandboxProvider local;
    private SandboxServer server;
    private HttpClient http;
    private SandboxSession session;
    private int web;
    private int dump;
    private int garbage;
    private byte[] big;

    @BeforeAll
    void start() throws Exception {
        local = LocalSandboxProvider.create();
        server = SandboxServer.builder(local).port(0).token(TOKEN.toCharArray()).start();
        http = HttpClient.newBuilder().connectTimeout(WAIT).build();
        String id = new ObjectMapper()
                .readTree(send(HttpRequest.newBuilder(uri("/v1/sessions"))
                                .header("Authorization", "Bearer " + TOKEN)
                                .POST(HttpRequest.BodyPublishers.ofString("{}")))
                        .body())
                .path("id")
                .asText();
        session = local.attach(id).block(WAIT);
        // below the ephemeral range (32768-60999): an outgoing connection of anything on the host cannot hold it
        int base = ThreadLocalRandom.current().nextInt(11_000, 14_000);
        web = base;
        dump = base + 1;
        garbage = base + 2;
        big = new byte[1 << 20];
        new Random(3).nextBytes(big);
        session.run(ExecOptions.shell("mkdir -p www/cgi-bin && echo '<h1>hello from the sandbox</h1>' > www/index.html"
                        + " && printf '#!/bin/sh\\necho Content-Type: text/plain\\necho\\ncat\\n' > www/cgi-bin/echo"
                        + " && chmod +x www/cgi-bin/echo"
                        + " && printf '#!/bin/sh\\ntimeout 1 cat > request.txt\\n"
                        + "printf \"HTTP/1.1 200 OK\\\\r\\\\nContent-Length: 2\\\\r\\\\n\\\\r\\\\nok\"\\n' > dump.sh"
                        + " && printf '#!/bin/sh\\necho not http at all; sleep 1\\n' > garbage.sh"
                        + " && chmod +x dump.sh garbage.sh"))
                .block(WAIT);
        session.files().write("www/big.bin", big).block(WAIT);
        session.start(ExecOptions.shell("exec busybox httpd -f -p 127.0.0.1:" + web + " -h \"$PWD/www\""))
                .block(WAIT);
        session.start(ExecOptions.shell("exec busybox nc -ll -p " + dump + " -e \"$PWD/dump.sh\""))
                .block(WAIT);
        session.start(ExecOptions.shell("exec busybox nc -ll -p " + garbage + " -e \"$PWD/garbage.sh\""))
                .block(WAIT);
    }

    @AfterAll
    void stop() {
        http.close();
        server.close();
        local.close();
    }

    private URI uri(String path) {
        return URI.create(server.baseUrl() + path);
    }

    private String portPath(int port, String rest) {
        return "/v1/sessions/" + session.id() + "/ports/" + port + "/http" + rest;
    }

    private HttpResponse<byte[]> sendBytes(HttpClient client, HttpRequest.Builder b) throws Exception {
        return client.send(b.timeout(WAIT).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        return http.send(b.timeout(WAIT).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** GETs with the bearer header until the sandbox's server listens. */
    private HttpResponse<byte[]> get(int port, String rest) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        for (; ; ) {
            HttpResponse<byte[]> r = sendBytes(
                    http, HttpRequest.newBuilder(uri(portPath(port, rest))).header("Authorization", "Bearer " + TOKEN));
            if (r.statusCode() != 502 || System.nanoTime() > deadline) {
                return r;
            }
            Thread.sleep(100); // 502: nothing listens yet
        }
    }

    @Test
    void pagesLargeFilesAndPostsComeThrough() throws Exception {
        HttpResponse<byte[]> index = get(web, "/index.html");
        assertThat(index.statusCode()).isEqualTo(200);
        assertThat(new String(index.body(), StandardCharsets.UTF_8)).isEqualTo("<h1>hello from the sandbox</h1>\n");
        assertThat(index.headers().firstValue("Content-Type"))
                .hasValueSatisfying(t -> assertThat(t).startsWith("text/html"));

        HttpResponse<byte[]> file = get(web, "/big.bin");
        assertThat(file.statusCode()).isEqualTo(200);
        assertThat(MessageDigest.getInstance("SHA-256").digest(file.body()))
                .isEqualTo(MessageDigest.getInstance("SHA-256").digest(big));

        HttpResponse<byte[]> missing = get(web, "/nothing-here");
        assertThat(missing.statusCode()).isEqualTo(404);

        String form = "a=1&b=" + "x".repeat(100_000);
        HttpResponse<String> echoed = send(HttpRequest.newBuilder(uri(portPath(web, "/cgi-bin/echo")))
                .header("Authorization", "Bearer " + TOKEN)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)));
        assertThat(echoed.statusCode()).as(echoed.body()).isEqualTo(200);
        assertThat(echoed.body()).isEqualTo(form);
    }

    @Test
    void theTokenMayComeOnceInTheUrlThenLivesInACookieForThatPortOnly() throws Exception {
        assertThat(send(HttpRequest.newBuilder(uri(portPath(web, "/index.html"))))
                        .statusCode())
                .as("no token")
                .isEqualTo(401);
        assertThat(send(HttpRequest.newBuilder(uri(portPath(web, "/index.html?sandbox_token=wrong"))))
                        .statusCode())
                .isEqualTo(401);
        HttpResponse<String> login =
                send(HttpRequest.newBuilder(uri(portPath(web, "/index.html?x=1&sandbox_token=" + TOKEN))));
        assertThat(login.statusCode()).isEqualTo(303);
        assertThat(login.headers().firstValue("Location")).contains(portPath(web, "/index.html?x=1"));
        String setCookie = login.headers().firstValue("Set-Cookie").orElseThrow();
        HttpCookie cookie = HttpCookie.parse(setCookie).get(0);
        assertThat(cookie.getName()).isEqualTo("sandbox_token");
        assertThat(cookie.isHttpOnly()).isTrue();
        assertThat(cookie.getPath()).isEqualTo("/v1/sessions/" + session.id() + "/ports/" + web + "/");
        assertThat(setCookie).containsIgnoringCase("SameSite=Strict");

        // a client with a cookie store follows the redirect as a browser does
        try (HttpClient browser = HttpClient.newBuilder()
                .cookieHandler(new CookieManager())
                .followRedirects(HttpClient.Redirect.NORMAL)
                .connectTimeout(WAIT)
                .build()) {
            HttpResponse<byte[]> page = sendBytes(
                    browser, HttpRequest.newBuilder(uri(portPath(web, "/index.html?sandbox_token=" + TOKEN))));
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.uri().getQuery()).isNull();
            assertThat(new String(page.body(), StandardCharsets.UTF_8)).contains("hello from the sandbox");
            HttpResponse<byte[]> again = sendBytes(browser, HttpRequest.newBuilder(uri(portPath(web, "/big.bin"))));
            assertThat(again.statusCode()).as("the cookie alone").isEqualTo(200);
            HttpResponse<byte[]> otherPort = sendBytes(browser, HttpRequest.newBuilder(uri(portPath(dump, "/"))));
            assertThat(otherPort.statusCode())
                    .as("the cookie is for its port only")
                    .isEqualTo(401);
            HttpResponse<byte[]> api = sendBytes(browser, HttpRequest.newBuilder(uri("/v1/sessions")));
            assertThat(api.statusCode())
                    .as("the cookie opens nothing but the port")
                    .isEqualTo(401);
        }
    }

    @Test
    void theSandboxsServerNeverSeesTheToken() throws Exception {
        HttpResponse<byte[]> r = null;
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (r == null || r.statusCode() != 200) {
            assertThat(System.nanoTime()).as("the dump server answers in time").isLessThan(deadline);
            r = sendBytes(
                    http,
                    HttpRequest.newBuilder(uri(portPath(dump, "/seen?q=1")))
                            .header("Authorization", "Bearer " + TOKEN)
                            .header("Cookie", "sandbox_token=" + TOKEN + "; app=kept")
                            .header("X-Custom", "passed"));
            if (r.statusCode() != 200) {
                Thread.sleep(100);
            }
        }
        assertThat(new String(r.body(), StandardCharsets.US_ASCII)).isEqualTo("ok");
        String seen =
                new String(session.files().readAllBytes("request.txt", 1 << 16).block(WAIT), StandardCharsets.UTF_8);
        assertThat(seen).startsWith("GET /seen?q=1 HTTP/1.1\r\n");
        assertThat(seen).containsIgnoringCase("x-custom: passed").containsIgnoringCase("cookie: app=kept");
        assertThat(seen).doesNotContain(TOKEN).doesNotContainIgnoringCase("authorization");
    }

    @Test
    void anAnswerThatIsNotHttpIsABadGateway() throws Exception {
        HttpResponse<String> r =
                send(HttpRequest.newBuilder(uri(portPath(garbage, "/"))).header("Authorization", "Bearer " + TOKEN));
        assertThat(r.statusCode()).isEqualTo(502);
        assertThat(r.body()).contains("BadGateway");
        HttpResponse<String> refused = send(
                HttpRequest.newBuilder(uri(portPath(garbage + 10, "/"))).header("Authorization", "Bearer " + TOKEN));
        assertThat(refused.statusCode()).isEqualTo(502);
        assertThat(refused.body()).contains("PortConnectionException").contains(Integer.toString(garbage + 10));
    }
}
