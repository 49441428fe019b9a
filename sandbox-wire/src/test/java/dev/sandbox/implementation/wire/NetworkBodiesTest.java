package dev.sandbox.implementation.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.EgressDecision;
import dev.sandbox.EgressReport;
import dev.sandbox.EgressRule;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.SessionOptions;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A session's network on the wire: policies and reports both ways, bad ones refused naming the field. */
class NetworkBodiesTest {

    private static byte[] json(Object body) throws Exception {
        return WireJson.MAPPER.writeValueAsBytes(body);
    }

    @Test
    void aPolicyTravelsWholeInACreateAndOnItsOwn() throws Exception {
        NetworkPolicy p = NetworkPolicy.allowlist(
                        EgressRule.domain("*.pypi.org").ports(443, 80), EgressRule.cidr("10.1.2.3/8"))
                .withProxyPort(3130);
        byte[] body = json(NetworkBodies.PolicyBody.of(p));
        assertThat(new String(body, StandardCharsets.UTF_8))
                .isEqualTo("{\"mode\":\"allowlist\",\"rules\":[{\"domain\":\"*.pypi.org\",\"ports\":[80,443]},"
                        + "{\"cidr\":\"10.0.0.0/8\"}],\"proxyPort\":3130}");
        assertThat(NetworkBodies.PolicyBody.policyOf(WireJson.parse(body))).isEqualTo(p);
        SessionOptions o = RequestBodies.read(
                        WireJson.parse(json(RequestBodies.SessionBody.of(
                                SessionOptions.defaults().withNetwork(p)))),
                        RequestBodies.SessionBody.class)
                .options();
        assertThat(o.network()).isEqualTo(p);
        assertThat(new String(json(RequestBodies.SessionBody.of(SessionOptions.defaults())), StandardCharsets.UTF_8))
                .as("no policy, no field")
                .doesNotContain("network");
    }

    @Test
    void aRulesHeadersTravelWithItAndAreNeverPrinted() throws Exception {
        NetworkPolicy p = NetworkPolicy.allowlist(
                EgressRule.domain("api.test").ports(443).withHeader("Authorization", "Bearer wire-secret"));
        NetworkBodies.PolicyBody body = NetworkBodies.PolicyBody.of(p);
        assertThat(NetworkBodies.PolicyBody.policyOf(WireJson.parse(json(body))))
                .isEqualTo(p);
        assertThat(body.toString()).doesNotContain("wire-secret").contains("Authorization");
        assertThat(RequestBodies.SessionBody.of(SessionOptions.defaults()
                                .withSecret("TOKEN", "env-secret")
                                .withNetwork(p))
                        .toString())
                .contains("TOKEN", "Authorization")
                .doesNotContain("env-secret", "wire-secret");
        assertThatThrownBy(() -> RequestBodies.read(
                                WireJson.parse(("{\"mode\":\"allowlist\",\"rules\":[{\"cidr\":\"10.0.0.0/8\","
                                                + "\"headers\":{\"A\":\"b\"}}]}")
                                        .getBytes(StandardCharsets.UTF_8)),
                                NetworkBodies.PolicyBody.class)
                        .policy())
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("headers"));
    }

    @Test
    void aPolicyWithItsOwnResolverCannotBeSent() {
        NetworkPolicy p = NetworkPolicy.allowlist().withResolver(host -> List.of(InetAddress.getLoopbackAddress()));
        assertThatThrownBy(() -> NetworkBodies.PolicyBody.of(p))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("resolver"));
    }

    @Test
    void aPolicyWithItsOwnCertificatesCannotBeSent() throws Exception {
        javax.net.ssl.TrustManagerFactory f =
                javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
        f.init((java.security.KeyStore) null);
        java.security.cert.X509Certificate any =
                ((javax.net.ssl.X509TrustManager) f.getTrustManagers()[0]).getAcceptedIssuers()[0];
        assertThatThrownBy(() ->
                        NetworkBodies.PolicyBody.of(NetworkPolicy.allowlist().withTrustedCertificates(any)))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("trustedCertificates"));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"mode\":\"open\"}|mode",
                "{}|mode",
                "{\"mode\":\"none\",\"rules\":[{\"domain\":\"a.com\"}]}|rules",
                "{\"mode\":\"allowlist\",\"rules\":[{}]}|rules",
                "{\"mode\":\"allowlist\",\"rules\":[{\"domain\":\"a.com\",\"cidr\":\"10.0.0.0/8\"}]}|rules",
                "{\"mode\":\"allowlist\",\"rules\":[{\"domain\":\"-bad-\"}]}|domain",
                "{\"mode\":\"allowlist\",\"rules\":[{\"cidr\":\"10.0.0.0/40\"}]}|cidr",
                "{\"mode\":\"allowlist\",\"rules\":[{\"domain\":\"a.com\",\"ports\":[0]}]}|ports",
                "{\"mode\":\"allowlist\",\"rules\":[{\"domain\":\"a.com\",\"ports\":[]}]}|ports",
                "{\"mode\":\"allowlist\",\"proxyPort\":0}|proxyPort"
            })
    void aBadPolicyFromAClientIsRefusedNamingTheField(String caseAndField) {
        String[] parts = caseAndField.split("\\|");
        assertThatThrownBy(() -> RequestBodies.read(
                                WireJson.parse(parts[0].getBytes(StandardCharsets.UTF_8)),
                                NetworkBodies.PolicyBody.class)
                        .policy())
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo(parts[1]));
    }

    @Test
    void aReportTravelsWholeAndABadOneFromAServerIsABackendError() throws Exception {
        EgressReport r = new EgressReport(
                3,
                1,
                List.of(new EgressDecision(Instant.parse("2026-12-06T11:00:00Z"), "a.com", 443, false, "no rule")));
        assertThat(NetworkBodies.ReportBody.reportOf(WireJson.parse(json(NetworkBodies.ReportBody.of(r)))))
                .isEqualTo(r);
        assertThatThrownBy(() -> NetworkBodies.ReportBody.reportOf(WireJson.parse(
                        "{\"allowedConnections\":1,\"deniedConnections\":0,\"decisions\":[{\"time\":\"yesterday\"}]}"
                                .getBytes(StandardCharsets.UTF_8))))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("a report that cannot be read");
        assertThatThrownBy(() -> NetworkBodies.PolicyBody.policyOf(
                        WireJson.parse("{\"mode\":\"everything\"}".getBytes(StandardCharsets.UTF_8))))
                .isInstanceOf(BackendException.class)
                .hasMessageContaining("a policy that cannot be read");
    }
}
