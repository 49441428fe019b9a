package dev.sandbox.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.sandbox.EgressDecision;
import dev.sandbox.EgressReport;
import dev.sandbox.EgressRule;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.SandboxSession;
import dev.sandbox.SandboxStateException;
import dev.sandbox.SessionInfo;
import dev.sandbox.UnsupportedFeatureException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Egress by policy ({@link NetworkPolicy}): a session has none by default; an allowlist is either enforced through
 * the provider's proxy (what it names reached, the rest refused with the reason, each decision counted) or refused with
 * {@link UnsupportedFeatureException} and nothing left behind. The destination is an HTTP server the kit starts on the
 * host's loopback, asked for by number.
 *
 * <pre>{@code
 * class MyProviderConformanceTest implements SandboxProviderConformance { ... } // includes these
 * }</pre>
 */
public interface EgressConformance extends ConformanceBase {

    /**
     * Whether the provider confines egress to an allowlist: the kit then requires it to work, and otherwise requires
     * the refusal. Docker does; the local provider cannot (its commands use the host's network).
     *
     * @return {@code false} unless overridden
     */
    default boolean supportsEgress() {
        return false;
    }

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
            int other = port == 65535 ? port - 1 : port + 1;
            // by number, so that the policy needs no resolver of the kit's (it would not travel to a server)
            NetworkPolicy policy =
                    NetworkPolicy.allowlist(EgressRule.cidr("127.0.0.1/32").ports(port));
            String mark = UUID.randomUUID().toString();
            SandboxSession s;
            try {
                s = provider()
                        .create(sessionOptions().withLabel("kit-egress", mark).withNetwork(policy))
                        .block(WAIT);
            } catch (UnsupportedFeatureException unsupported) {
                assertThat(supportsEgress())
                        .as("the provider says it confines egress, yet refused: %s", unsupported.getMessage())
                        .isFalse();
                assertThat(provider()
                                .list(Map.of("kit-egress", mark))
                                .map(SessionInfo::id)
                                .collectList()
                                .block(WAIT))
                        .as("nothing left by a refused create")
                        .isEmpty();
                return;
            }
            assertThat(supportsEgress())
                    .as("the provider accepted an allowlist: it confines egress, its test says it does")
                    .isTrue();
            try {
                // NO_PROXY names 127.0.0.1 for the sandbox's own loopback: cleared here to ask the proxy for it
                String get = "NO_PROXY= no_proxy= wget -q -O - http://127.0.0.1:";
                ExecResult ok = s.run(ExecOptions.shell(get + port + "/")).block(WAIT);
                assertThat(ok.stdout()).as(ok.stderr()).isEqualTo("kit egress ok\n");
                ExecResult no = s.run(ExecOptions.shell(get + other + "/")).block(WAIT);
                assertThat(no.exitCode()).isNotZero();
                EgressReport report = s.network().report().block(WAIT);
                assertThat(report.allowedConnections()).isEqualTo(1);
                assertThat(report.deniedConnections()).isEqualTo(1);
                assertThat(report.decisions())
                        .extracting(EgressDecision::host, EgressDecision::allowed)
                        .containsExactly(
                                org.assertj.core.groups.Tuple.tuple("127.0.0.1", true),
                                org.assertj.core.groups.Tuple.tuple("127.0.0.1", false));
                assertThat(report.decisions().get(0).reason()).isEqualTo("cidr 127.0.0.1/32 ports [" + port + "]");
                assertThat(report.decisions().get(1).reason())
                        .isEqualTo("no cidr rule allows 127.0.0.1 port " + other
                                + " (an address asked for by number needs one)");
                assertThat(s.network().policy().block(WAIT)).isEqualTo(policy);
            } finally {
                s.destroy().block(WAIT);
            }
        } finally {
            server.stop(0);
        }
    }
}
