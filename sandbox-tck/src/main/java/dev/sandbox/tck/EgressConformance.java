package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.sandbox.EgressDecision;
import dev.sandbox.EgressReport;
import dev.sandbox.EgressRule;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.NameResolver;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.SandboxSession;
import dev.sandbox.SandboxStateException;
import dev.sandbox.SessionInfo;
import dev.sandbox.UnsupportedFeatureException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Egress by policy ({@link NetworkPolicy}): a session has none by default; an allowlist is either enforced through
 * the provider's proxy (what it names reached, the rest refused with the reason, each decision counted) or refused with
 * {@link UnsupportedFeatureException} and nothing left behind. The destination is an HTTP server the kit starts on the
 * host's loopback; its name resolves through a resolver the kit sets.
 *
 * <pre>{@code
 * class MyProviderConformanceTest implements SandboxProviderConformance { ... } // includes these
 * }</pre>
 */
public interface EgressConformance extends ConformanceBase {

    /** Required: no egress and no proxy by default; such a session cannot be given an allowlist later. */
    @Test
    default void aSessionHasNoEgressByDefault() {
        inSession(s -> {
            assertThat(s.network().policy().block(WAIT)).isEqualTo(NetworkPolicy.none());
            assertThat(s.network().report().block(WAIT).decisions()).isEmpty();
            s.network().update(NetworkPolicy.none()).block(WAIT);
            assertThatThrownBy(() -> s.network()
                            .update(NetworkPolicy.allowlist(EgressRule.domain("example.com")))
                            .block(WAIT))
                    .isInstanceOf(SandboxStateException.class);
        });
    }

    /**
     * Required: an allowlist reaches what it names and refuses the rest, or is refused as unsupported.
     *
     * @throws IOException when the kit's server cannot start
     */
    @Test
    default void anAllowlistIsEnforcedThroughTheProxyOrRefusedWithNothingLeft() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", x -> {
            byte[] body = "kit egress ok\n".getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, body.length);
            x.getResponseBody().write(body);
            x.close();
        });
        server.start();
        try {
            int port = server.getAddress().getPort();
            NameResolver resolver = host -> {
                if (host.equals("kit-allowed.test") || host.equals("kit-denied.test")) {
                    return List.of(InetAddress.getLoopbackAddress());
                }
                throw new UnknownHostException(host);
            };
            NetworkPolicy policy = NetworkPolicy.allowlist(
                            EgressRule.domain("kit-allowed.test").ports(port),
                            EgressRule.cidr("127.0.0.1/32").ports(port))
                    .withResolver(resolver);
            String mark = UUID.randomUUID().toString();
            SandboxSession s;
            try {
                s = provider()
                        .create(sessionOptions().withLabel("kit-egress", mark).withNetwork(policy))
                        .block(WAIT);
            } catch (UnsupportedFeatureException unsupported) {
                assertThat(provider()
                                .list(Map.of("kit-egress", mark))
                                .map(SessionInfo::id)
                                .collectList()
                                .block(WAIT))
                        .as("nothing left by a refused create")
                        .isEmpty();
                return;
            }
            try {
                ExecResult ok = s.run(ExecOptions.shell("wget -q -O - http://kit-allowed.test:" + port + "/"))
                        .block(WAIT);
                assertThat(ok.stdout()).as(ok.stderr()).isEqualTo("kit egress ok\n");
                ExecResult no = s.run(ExecOptions.shell("wget -q -O - http://kit-denied.test:" + port + "/"))
                        .block(WAIT);
                assertThat(no.exitCode()).isNotZero();
                EgressReport report = s.network().report().block(WAIT);
                assertThat(report.allowedConnections()).isEqualTo(1);
                assertThat(report.deniedConnections()).isEqualTo(1);
                assertThat(report.decisions())
                        .extracting(EgressDecision::host, EgressDecision::allowed)
                        .containsExactly(
                                org.assertj.core.groups.Tuple.tuple("kit-allowed.test", true),
                                org.assertj.core.groups.Tuple.tuple("kit-denied.test", false));
                assertThat(report.decisions().get(1).reason())
                        .isEqualTo("no rule allows kit-denied.test port " + port + " (denied by default)");
            } finally {
                s.destroy().block(WAIT);
            }
        } finally {
            server.stop(0);
        }
    }
}
