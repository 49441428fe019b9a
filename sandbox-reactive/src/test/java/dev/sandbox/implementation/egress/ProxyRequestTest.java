package dev.sandbox.implementation.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.EgressRule;
import dev.sandbox.NetworkPolicy;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;

/**
 * The proxy's reading of what a sandbox sends (hostile: bounded, and refused with a short reason) and its decisions.
 * The proxy on a real sandbox is {@code DockerEgressTest}.
 */
class ProxyRequestTest {

    private static ProxyRequest parse(String head) {
        return ProxyRequest.parse(head.getBytes(StandardCharsets.ISO_8859_1));
    }

    @Test
    void aConnectNamesHostAndPort() {
        ProxyRequest r = parse("CONNECT Pypi.ORG:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n");
        assertThat(r.connect()).isTrue();
        assertThat(r.host()).isEqualTo("pypi.org");
        assertThat(r.port()).isEqualTo(443);
        assertThat(r.literal()).isFalse();
        ProxyRequest v6 = parse("CONNECT [2606:4700::1111]:443 HTTP/1.1\r\n\r\n");
        assertThat(v6.host()).isEqualTo("2606:4700::1111");
        assertThat(v6.literal()).isTrue();
    }

    @Test
    void aPlainRequestIsRewrittenForItsServer() {
        ProxyRequest r = parse("POST http://example.com:8080/a/b?c=d#frag HTTP/1.1\r\nHost: example.com:8080\r\n"
                + "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\n"
                + "Content-Length: 3\r\nX-Kept: 1\r\n\r\n");
        assertThat(r.connect()).isFalse();
        assertThat(r.host()).isEqualTo("example.com");
        assertThat(r.port()).isEqualTo(8080);
        assertThat(new String(r.forwarded(), StandardCharsets.ISO_8859_1))
                .isEqualTo("POST /a/b?c=d HTTP/1.1\r\nHost: example.com:8080\r\nContent-Length: 3\r\nX-Kept: 1\r\n"
                        + "Connection: close\r\n\r\n");
        ProxyRequest bare = parse("GET http://example.com HTTP/1.0\n\n");
        assertThat(bare.port()).isEqualTo(80);
        assertThat(new String(bare.forwarded(), StandardCharsets.ISO_8859_1))
                .isEqualTo("GET / HTTP/1.0\r\nHost: example.com\r\nConnection: close\r\n\r\n");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "GET / HTTP/1.1\r\n\r\n", // origin-form: not a proxy request
                "GET https://example.com/ HTTP/1.1\r\n\r\n", // HTTPS goes through CONNECT
                "CONNECT example.com HTTP/1.1\r\n\r\n", // no port
                "CONNECT example.com:0 HTTP/1.1\r\n\r\n",
                "CONNECT example.com:65536 HTTP/1.1\r\n\r\n",
                "CONNECT example.com:12a HTTP/1.1\r\n\r\n",
                "CONNECT exa_mple.com:443 HTTP/1.1\r\n\r\n",
                "CONNECT 999.1.1.1:443 HTTP/1.1\r\n\r\n",
                "CONNECT 1.2.3:443 HTTP/1.1\r\n\r\n",
                "CONNECT [zz::1]:443 HTTP/1.1\r\n\r\n",
                "CONNECT [::1:443 HTTP/1.1\r\n\r\n",
                "GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n",
                "GET http://example.com/ HTTP/2.0\r\n\r\n",
                "GET http://example.com/ HTTP/1.1 extra\r\n\r\n",
                "GET http://example.com/a b HTTP/1.1\r\n\r\n",
                "G(T http://example.com/ HTTP/1.1\r\n\r\n",
                "GET http://example.com/ HTTP/1.1\r\nno colon\r\n\r\n",
                "GET http://example.com/ HTTP/1.1\r\nX: a\u0001b\r\n\r\n",
                "\u0001\u0002 nonsense\r\n\r\n",
                "\r\n\r\n"
            })
    void whatIsNotAProxyRequestIsRefused(String head) {
        assertThatThrownBy(() -> parse(head)).isInstanceOf(ProxyRequest.BadRequestException.class);
    }

    @Test
    void aRulesHeadersReplaceTheProgramsOwnInAPlainRequestAndInOneReadFromTls() {
        ProxyRequest r = parse(
                "GET http://api.test/v1 HTTP/1.1\r\nHost: api.test\r\nauthorization: mine\r\n" + "X-Kept: 1\r\n\r\n");
        assertThat(new String(
                        ProxyRequest.withHeaders(r.forwarded(), java.util.Map.of("Authorization", "Bearer k")),
                        StandardCharsets.ISO_8859_1))
                .isEqualTo("GET /v1 HTTP/1.1\r\nHost: api.test\r\nX-Kept: 1\r\nAuthorization: Bearer k\r\n"
                        + "Connection: close\r\n\r\n");
        byte[] inTls = "POST /v1/x HTTP/1.1\r\nHost: api.test\r\nAuthorization: mine\r\nConnection: keep-alive\r\n"
                .concat("Content-Length: 2\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1);
        assertThat(new String(
                        ProxyRequest.origin(inTls, java.util.Map.of("Authorization", "Bearer k")),
                        StandardCharsets.ISO_8859_1))
                .isEqualTo("POST /v1/x HTTP/1.1\r\nHost: api.test\r\nContent-Length: 2\r\nAuthorization: Bearer k\r\n"
                        + "Connection: close\r\n\r\n");
        for (String bad :
                new String[] {"GET http://api.test/ HTTP/1.1\r\n\r\n", "GET / HTTP/2\r\n\r\n", "garbage\r\n\r\n"}) {
            assertThatThrownBy(() -> ProxyRequest.origin(bad.getBytes(StandardCharsets.ISO_8859_1), java.util.Map.of()))
                    .isInstanceOf(ProxyRequest.BadRequestException.class);
        }
    }

    @Test
    void tooManyHeadersAreRefused() {
        StringBuilder b = new StringBuilder("GET http://a.com/ HTTP/1.1\r\n");
        for (int i = 0; i <= ProxyRequest.MAX_HEADERS; i++) {
            b.append("X-").append(i).append(": v\r\n");
        }
        assertThatThrownBy(() -> parse(b + "\r\n"))
                .isInstanceOf(ProxyRequest.BadRequestException.class)
                .hasMessageContaining("more than 100 header lines");
    }

    @Test
    void theHeadIsSplitWhereverItsChunksEndAndTheRestFollowsAsAskedFor() throws Exception {
        byte[] all = "CONNECT a.com:443 HTTP/1.1\r\nHost: a.com\r\n\r\nHELLO, after the head"
                .getBytes(StandardCharsets.ISO_8859_1);
        for (int size = 1; size <= all.length; size++) {
            List<ByteBuffer> chunks = new ArrayList<>();
            for (int i = 0; i < all.length; i += size) {
                chunks.add(
                        ByteBuffer.wrap(all, i, Math.min(size, all.length - i)).slice());
            }
            AtomicInteger requested = new AtomicInteger();
            HeadSplitter splitter = new HeadSplitter();
            Flux.fromIterable(chunks)
                    .doOnRequest(n -> requested.addAndGet((int) n))
                    .subscribe(splitter);
            byte[] head = splitter.head().get(5, TimeUnit.SECONDS);
            assertThat(new String(head, StandardCharsets.ISO_8859_1))
                    .isEqualTo("CONNECT a.com:443 HTTP/1.1\r\nHost: a.com\r\n\r\n");
            int before = requested.get();
            assertThat(before).as("one chunk at a time, nothing past the head").isLessThanOrEqualTo(chunks.size());
            String rest = splitter.rest()
                    .map(b -> StandardCharsets.ISO_8859_1.decode(b).toString())
                    .collectList()
                    .map(l -> String.join("", l))
                    .block(Duration.ofSeconds(5));
            assertThat(rest).as("chunk size %d", size).isEqualTo("HELLO, after the head");
        }
    }

    @Test
    void aHeadThatNeverEndsIsCutAtItsBound() {
        HeadSplitter splitter = new HeadSplitter();
        AtomicInteger cancelled = new AtomicInteger();
        Flux.<ByteBuffer>generate(sink -> sink.next(ByteBuffer.wrap(new byte[1000])))
                .doOnCancel(cancelled::incrementAndGet)
                .subscribe(splitter);
        assertThat(splitter.head())
                .failsWithin(Duration.ofSeconds(5))
                .withThrowableThat()
                .havingCause()
                .isInstanceOf(HeadSplitter.HeadTooLargeException.class);
        assertThat(cancelled).hasValue(1);
    }

    @Test
    void aNameIsAllowedOnlyWhenEveryAddressItResolvesToIsPublicOrInACidrRule() throws Exception {
        NetworkPolicy policy = NetworkPolicy.allowlist(
                        EgressRule.domain("*.ok.test").ports(443),
                        EgressRule.cidr("10.0.0.0/8").ports(443))
                .withResolver(host -> switch (host) {
                    case "pub.ok.test" -> List.of(InetAddress.getByName("93.184.216.34"));
                    case "mixed.ok.test" ->
                        List.of(InetAddress.getByName("93.184.216.34"), InetAddress.getByName("127.0.0.1"));
                    case "private.ok.test" -> List.of(InetAddress.getByName("10.1.1.1"));
                    case "slow.ok.test" -> {
                        java.util.concurrent.locks.LockSupport.parkNanos(60_000_000_000L);
                        yield List.of();
                    }
                    default -> throw new UnknownHostException(host);
                });
        EgressGate.Decision pub = EgressGate.decide(policy, parse("CONNECT pub.ok.test:443 HTTP/1.1\r\n\r\n"));
        assertThat(pub.allowed()).isTrue();
        assertThat(pub.reason()).isEqualTo("domain *.ok.test ports [443]");
        EgressGate.Decision mixed = EgressGate.decide(policy, parse("CONNECT mixed.ok.test:443 HTTP/1.1\r\n\r\n"));
        assertThat(mixed.allowed()).isFalse();
        assertThat(mixed.reason()).contains("resolves to 127.0.0.1, an internal address");
        assertThat(EgressGate.decide(policy, parse("CONNECT private.ok.test:443 HTTP/1.1\r\n\r\n"))
                        .allowed())
                .as("a cidr rule lets a name lead to its block")
                .isTrue();
        EgressGate.Decision unknown = EgressGate.decide(policy, parse("CONNECT nx.ok.test:443 HTTP/1.1\r\n\r\n"));
        assertThat(unknown.status()).isEqualTo(502);
        assertThat(unknown.reason()).startsWith("cannot resolve nx.ok.test");
        long t0 = System.nanoTime();
        EgressGate.Decision slow = EgressGate.decide(policy, parse("CONNECT slow.ok.test:443 HTTP/1.1\r\n\r\n"));
        assertThat(slow.allowed()).isFalse();
        assertThat(slow.reason()).contains("no answer within 5 s");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
        assertThat(EgressGate.decide(policy, parse("CONNECT 10.2.3.4:443 HTTP/1.1\r\n\r\n"))
                        .allowed())
                .isTrue();
        assertThat(EgressGate.decide(policy, parse("CONNECT 10.2.3.4:80 HTTP/1.1\r\n\r\n"))
                        .reason())
                .isEqualTo("no cidr rule allows 10.2.3.4 port 80 (an address asked for by number needs one)");
        assertThat(EgressGate.decide(NetworkPolicy.none(), parse("CONNECT pub.ok.test:443 HTTP/1.1\r\n\r\n"))
                        .reason())
                .isEqualTo("the session's network policy is none");
    }
}
