package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.sun.net.httpserver.HttpServer;
import dev.sandbox.EgressDecision;
import dev.sandbox.EgressReport;
import dev.sandbox.EgressRule;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NameResolver;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.SandboxSession;
import dev.sandbox.SandboxStateException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Egress by policy on Docker, runc and gVisor: programs in a sandbox on network {@code none} reach what an allowlist
 * names through the agent's proxy and nothing else. Every destination is an HTTP server this test starts on the host's
 * loopback; names resolve through a resolver the test sets (nothing is looked up, nothing else is dialled).
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerEgressTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private DockerTestSupport support;
    private DockerSandboxProvider runc;
    private DockerSandboxProvider gvisor;
    private HttpServer server;
    private int port;
    private final ConcurrentLinkedQueue<Map<String, List<String>>> seenHeaders = new ConcurrentLinkedQueue<>();
    private final AtomicInteger resolved = new AtomicInteger();

    /** allowed.test is the test's server; rebind.test and metadata.test lead into the host's own network. */
    private final NameResolver resolver = host -> {
        resolved.incrementAndGet();
        return switch (host) {
            case "allowed.test", "other.allowed.test" -> List.of(InetAddress.getByName("127.0.0.1"));
            case "rebind.test" -> List.of(InetAddress.getByName("127.0.0.2"));
            case "metadata.test" -> List.of(InetAddress.getByName("169.254.169.254"));
            default -> throw new UnknownHostException(host);
        };
    };

    @BeforeAll
    void start() throws IOException {
        support = new DockerTestSupport();
        runc = DockerTestSupport.unsweptProvider();
        gvisor = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings().withRuntime(DockerSettings.Runtime.RUNSC))
                .sweepInterval(null)
                .build();
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", x -> {
            seenHeaders.add(Map.copyOf(x.getRequestHeaders()));
            byte[] body =
                    ("hello from the host, " + x.getRequestURI().getPath() + "\n").getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, body.length);
            x.getResponseBody().write(body);
            x.close();
        });
        server.start();
        port = server.getAddress().getPort();
    }

    @AfterAll
    void stop() {
        server.stop(0);
        try {
            gvisor.close();
        } finally {
            support.finish(runc);
        }
    }

    private DockerSandboxProvider provider(String runtime) {
        return runtime.equals("runsc") ? gvisor : runc;
    }

    private NetworkPolicy policy() {
        return NetworkPolicy.allowlist(
                        EgressRule.domain("allowed.test").ports(port),
                        EgressRule.domain("*.allowed.test").ports(port),
                        EgressRule.domain("rebind.test"),
                        EgressRule.domain("metadata.test"),
                        // the test's server is on loopback: a name may lead there on its port only
                        EgressRule.cidr("127.0.0.1/32").ports(port))
                .withResolver(resolver);
    }

    private static ExecResult sh(SandboxSession s, String script) {
        return s.run(ExecOptions.shell(script)).block(WAIT);
    }

    /**
     * A raw proxy request with nc, whose input stays open until the answer ended (the sandbox's half-close would end
     * the connection): nc reads a FIFO this shell holds open, and the shell waits for nc to see the answer's end.
     */
    private static String raw(SandboxSession s, String request) {
        String printf = request.replace("\r\n", "\\r\\n");
        return sh(
                        s,
                        "f=/tmp/raw.$$; mkfifo $f; nc 127.0.0.1 3128 < $f & n=$!; exec 3> $f; printf '" + printf
                                + "' >&3; wait $n; exec 3>&-; rm -f $f")
                .stdout();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"runc", "runsc"})
    void anAllowedNameIsReachedThroughTheProxyAndADeniedOneIsRefusedNamingWhy(String runtime) {
        SandboxSession s = provider(runtime)
                .create(support.sessionOptions().withNetwork(policy()))
                .block(WAIT);
        try {
            // programs find the proxy in their environment
            assertThat(sh(s, "echo $http_proxy $HTTPS_PROXY").stdout())
                    .isEqualTo("http://127.0.0.1:3128 http://127.0.0.1:3128\n");
            // no rule adds headers and the image has no trusted-certificates file: what programs trust stays theirs
            assertThat(sh(s, "echo \"[$SSL_CERT_FILE]\"; ls /tmp/.dev-sandbox-egress")
                            .stdout())
                    .isEqualTo("[]\nca-bundle.pem\nca.pem\n");
            ExecResult got = sh(s, "wget -q -O - http://allowed.test:" + port + "/first");
            assertThat(got.stdout()).as(got.stderr()).isEqualTo("hello from the host, /first\n");
            assertThat(seenHeaders.peek())
                    .as("the server sees no proxy header and a closing connection")
                    .doesNotContainKeys("Proxy-connection", "Proxy-authorization")
                    .containsEntry("Connection", List.of("close"));

            // a name no rule names: 403 with the reason, from a program that shows it
            String denied = raw(s, "GET http://denied.test:" + port + "/ HTTP/1.1\r\nHost: denied.test\r\n\r\n");
            assertThat(denied)
                    .startsWith("HTTP/1.1 403 Forbidden")
                    .contains("no rule allows denied.test port " + port + " (denied by default)");
            // wget fails on it
            ExecResult w = sh(s, "wget -q -O - http://denied.test:" + port + "/");
            assertThat(w.exitCode()).isNotZero();
            assertThat(w.stderr()).contains("403");

            // an allowed name on a port no rule names
            assertThat(raw(s, "CONNECT allowed.test:" + (port == 1 ? 2 : port - 1) + " HTTP/1.1\r\n\r\n"))
                    .startsWith("HTTP/1.1 403 Forbidden")
                    .contains("no rule allows allowed.test port");

            // CONNECT to an allowed name: a tunnel, what follows goes to the server as is
            String tunnel = raw(
                    s,
                    "CONNECT other.allowed.test:" + port + " HTTP/1.1\r\n\r\nGET /tunnelled HTTP/1.1\r\nHost: x\r\n"
                            + "Connection: close\r\n\r\n");
            assertThat(tunnel)
                    .startsWith("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK")
                    .endsWith("hello from the host, /tunnelled\n");

            // names that lead into the host's own network are refused although a domain rule names them
            assertThat(raw(s, "GET http://rebind.test:" + port + "/ HTTP/1.1\r\n\r\n"))
                    .startsWith("HTTP/1.1 403 Forbidden")
                    .contains("rebind.test resolves to 127.0.0.2, an internal address no cidr rule allows");
            assertThat(raw(s, "GET http://metadata.test/latest/meta-data/ HTTP/1.1\r\n\r\n"))
                    .startsWith("HTTP/1.1 403 Forbidden")
                    .contains("metadata.test resolves to 169.254.169.254, an internal address");
            // an address asked for by number needs a cidr rule: 127.0.0.1 on the server's port has one
            assertThat(raw(s, "GET http://127.0.0.1:" + port + "/bynumber HTTP/1.1\r\n\r\n"))
                    .startsWith("HTTP/1.1 200 OK")
                    .endsWith("hello from the host, /bynumber\n");
            assertThat(raw(s, "GET http://169.254.169.254/ HTTP/1.1\r\n\r\n"))
                    .startsWith("HTTP/1.1 403 Forbidden")
                    .contains("no cidr rule allows 169.254.169.254 port 80");

            // garbage gets a 400, and the proxy goes on serving
            assertThat(raw(s, "\\001\\002 nonsense\r\n\r\n")).startsWith("HTTP/1.1 400 Bad Request");
            assertThat(sh(s, "wget -q -O - http://allowed.test:" + port + "/after")
                            .stdout())
                    .isEqualTo("hello from the host, /after\n");

            // every decision counted, the latest kept with its rule or reason
            EgressReport report = s.network().report().block(WAIT);
            List<EgressDecision> decisions = report.decisions();
            assertThat(report.allowedConnections()).isEqualTo(4);
            assertThat(report.deniedConnections()).isEqualTo(6);
            assertThat(decisions)
                    .filteredOn(EgressDecision::allowed)
                    .extracting(EgressDecision::reason)
                    .containsExactly(
                            "domain allowed.test ports [" + port + "]",
                            "domain *.allowed.test ports [" + port + "]",
                            "cidr 127.0.0.1/32 ports [" + port + "]",
                            "domain allowed.test ports [" + port + "]");
            assertThat(decisions)
                    .filteredOn(d -> !d.allowed())
                    .extracting(EgressDecision::host)
                    .containsExactly(
                            "denied.test",
                            "denied.test",
                            "allowed.test",
                            "rebind.test",
                            "metadata.test",
                            "169.254.169.254");
            // another handle of the session, from the provider that runs its proxy, sees the same network
            SandboxSession again = provider(runtime).attach(s.id()).block(WAIT);
            assertThat(again.network().report().block(WAIT).allowedConnections())
                    .isEqualTo(4);
            assertThat(again.network().policy().block(WAIT)).isEqualTo(policy());
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"runc", "runsc"})
    void aConnectionThatBypassesTheProxyHasNoRouteAndTheSandboxStaysWithoutNetwork(String runtime) {
        SandboxSession s = provider(runtime)
                .create(support.sessionOptions().withNetwork(policy()))
                .block(WAIT);
        try {
            // 192.0.2.1 is TEST-NET-1: nothing there, and with no route nothing is even tried
            ExecResult direct = sh(s, "nc -w 3 192.0.2.1 " + port + " </dev/null; echo rc=$?");
            assertThat(direct.stdout()).contains("rc=1");
            // runc: "Network is unreachable"; gVisor: "No route to host"
            assertThat(direct.stderr()).containsPattern("(?i)unreachable|no route to host");
            assertThat(sh(s, "ls /sys/class/net").stdout().trim())
                    .as("loopback only")
                    .isEqualTo("lo");
            InspectContainerResponse c = support.docker
                    .inspectContainerCmd(support.container(s.id()).getId())
                    .exec();
            assertThat(c.getHostConfig().getNetworkMode()).isEqualTo("none");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    /**
     * A hostile sandbox floods its proxy: connections that send endless bytes without a head's end, again and again,
     * and 300 that send nothing (more than the proxy takes at once). The host's heap stays bounded, and another
     * session's proxy serves it meanwhile.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"runc"})
    void aFloodOfProxyConnectionsLeavesTheHostBoundedAndAnotherSessionServed(String runtime) throws Exception {
        SandboxSession hostile = provider(runtime)
                .create(support.sessionOptions().withNetwork(policy()))
                .block(WAIT);
        SandboxSession other = provider(runtime)
                .create(support.sessionOptions().withNetwork(policy()))
                .block(WAIT);
        try {
            long before = heapAfterGc();
            hostile.start(ExecOptions.shell("i=0; while [ $i -lt 8 ]; do (while true; do nc 127.0.0.1 3128"
                            + " < /dev/zero > /dev/null 2>&1; done) & i=$((i+1)); done;"
                            + " for j in $(seq 300); do (sleep 120 | nc 127.0.0.1 3128 > /dev/null 2>&1) & done; wait"))
                    .block(WAIT);
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            int served = 0;
            while (System.nanoTime() < deadline || served < 10) {
                assertThat(sh(other, "wget -q -O - http://allowed.test:" + port + "/other")
                                .stdout())
                        .isEqualTo("hello from the host, /other\n");
                served++;
                Thread.sleep(50); // a steady client, not a second flood
            }
            long growth = heapAfterGc() - before;
            System.out.printf(
                    "proxy flood: %d GETs served to another session, live heap growth %.1f MiB%n",
                    served, growth / (1024.0 * 1024));
            assertThat(growth).as("live heap growth under the flood").isLessThan(64L << 20);
            assertThat(other.network().report().block(WAIT).allowedConnections())
                    .isEqualTo(served);
        } finally {
            hostile.destroy().block(WAIT);
            other.destroy().block(WAIT);
        }
    }

    private static long heapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return java.lang.management.ManagementFactory.getMemoryMXBean()
                .getHeapMemoryUsage()
                .getUsed();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"runc"})
    void aPolicyChangedWhileTheSessionRunsDecidesTheNextConnection(String runtime) {
        SandboxSession s = provider(runtime)
                .create(support.sessionOptions()
                        .withNetwork(NetworkPolicy.allowlist().withResolver(resolver)))
                .block(WAIT);
        try {
            assertThat(sh(s, "wget -q -O - http://allowed.test:" + port + "/").exitCode())
                    .as("an empty allowlist denies everything")
                    .isNotZero();
            s.network().update(policy()).block(WAIT);
            assertThat(sh(s, "wget -q -O - http://allowed.test:" + port + "/now")
                            .stdout())
                    .isEqualTo("hello from the host, /now\n");
            s.network().update(NetworkPolicy.none().withResolver(resolver)).block(WAIT);
            assertThat(raw(s, "GET http://allowed.test:" + port + "/ HTTP/1.1\r\n\r\n"))
                    .startsWith("HTTP/1.1 403 Forbidden")
                    .contains("the session's network policy is none");
            assertThat(s.network().policy().block(WAIT).mode()).isEqualTo(NetworkPolicy.Mode.NONE);
            assertThatThrownBy(() ->
                            s.network().update(policy().withProxyPort(3129)).block(WAIT))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("proxyPort 3128 cannot become 3129");
        } finally {
            s.destroy().block(WAIT);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"runc"})
    void aSessionWithoutAPolicyHasNoProxyAndABridgeWithAnAllowlistIsRefused(String runtime) {
        SandboxSession s = provider(runtime).create(support.sessionOptions()).block(WAIT);
        try {
            assertThat(s.network().policy().block(WAIT)).isEqualTo(NetworkPolicy.none());
            assertThat(sh(s, "echo \"[$http_proxy]\"").stdout()).isEqualTo("[]\n");
            assertThatThrownBy(() -> s.network().update(policy()).block(WAIT))
                    .isInstanceOf(SandboxStateException.class)
                    .hasMessageContaining("create it with NetworkPolicy.allowlist()");
        } finally {
            s.destroy().block(WAIT);
        }
        DockerSandboxProvider bridged = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings().withNetwork(DockerSettings.Network.BRIDGE))
                .sweepInterval(null)
                .build();
        try {
            assertThatThrownBy(() -> bridged.create(support.sessionOptions().withNetwork(policy()))
                            .block(WAIT))
                    .isInstanceOf(InvalidArgumentException.class)
                    .hasMessageContaining("an egress allowlist needs the container on network NONE");
        } finally {
            bridged.close();
        }
    }
}
