package dev.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Egress rules and policies: what they match, and bad input refused naming the field and the value. */
class EgressRuleTest {

    @Test
    void aDomainRuleMatchesItsNameOrItsSubdomainsWithoutCaseOrTrailingDot() {
        EgressRule exact = EgressRule.domain("API.Example.com.");
        assertThat(exact.pattern()).isEqualTo("api.example.com");
        assertThat(exact.matches("api.example.com", 443)).isTrue();
        assertThat(exact.matches("API.EXAMPLE.COM.", 80)).isTrue();
        assertThat(exact.matches("x.api.example.com", 443)).isFalse();
        assertThat(exact.matches("example.com", 443)).isFalse();

        EgressRule sub = EgressRule.domain("*.example.com").ports(443);
        assertThat(sub.matches("a.example.com", 443)).isTrue();
        assertThat(sub.matches("a.b.example.com", 443)).isTrue();
        assertThat(sub.matches("example.com", 443)).as("not the suffix itself").isFalse();
        assertThat(sub.matches("badexample.com", 443)).isFalse();
        assertThat(sub.matches("a.example.com", 80)).as("another port").isFalse();
        assertThat(sub.matches(addr("93.184.216.34"), 443))
                .as("a domain rule holds no address")
                .isFalse();
        assertThat(sub).hasToString("domain *.example.com ports [443]");
    }

    @Test
    void aCidrRuleMatchesTheAddressesOfItsBlock() {
        EgressRule net = EgressRule.cidr("10.20.30.40/16");
        assertThat(net.pattern()).isEqualTo("10.20.0.0/16");
        assertThat(net.matches(addr("10.20.255.1"), 1)).isTrue();
        assertThat(net.matches(addr("10.21.0.1"), 1)).isFalse();
        assertThat(net.matches(addr("::ffff:10.20.0.1"), 1))
                .as("a mapped address is IPv4")
                .isTrue();
        assertThat(net.matches("10.20.0.1", 1))
                .as("a cidr rule matches no name")
                .isFalse();
        EgressRule one = EgressRule.cidr("127.0.0.1").ports(8080);
        assertThat(one).hasToString("cidr 127.0.0.1/32 ports [8080]");
        assertThat(one.matches(addr("127.0.0.1"), 8080)).isTrue();
        assertThat(one.matches(addr("127.0.0.2"), 8080)).isFalse();
        assertThat(one.matches(addr("127.0.0.1"), 8081)).isFalse();
        EgressRule v6 = EgressRule.cidr("fd00::/8");
        assertThat(v6.matches(addr("fd12::1"), 1)).isTrue();
        assertThat(v6.matches(addr("fe80::1"), 1)).isFalse();
        assertThat(v6.matches(addr("10.0.0.1"), 1)).isFalse();
        assertThat(EgressRule.cidr("0.0.0.0/0").matches(addr("8.8.8.8"), 1)).isTrue();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "*",
                "*.",
                "a..b",
                "-a.com",
                "a-.com",
                "1.2.3.4",
                "exa mple.com",
                "a/b",
                "*.*.com",
                "ex*ample.com",
                "a_b.com"
            })
    void aBadDomainIsRefusedNamingIt(String bad) {
        assertThatThrownBy(() -> EgressRule.domain(bad))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("domain"))
                .hasMessageContaining("'" + bad + "'");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "10.0.0.0/33",
                "10.0.0.0/-1",
                "10.0.0/8x",
                "example.com/8",
                "::1/129",
                "1.2.3.4.5",
                "zz::1",
                "10.0.0.0/"
            })
    void aBadCidrIsRefusedNamingIt(String bad) {
        assertThatThrownBy(() -> EgressRule.cidr(bad))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("cidr"))
                .hasMessageContaining("'" + bad + "'");
    }

    @Test
    void aRuleWrittenAsTextIsADomainOrABlockWithItsPorts() {
        assertThat(EgressRule.parse("*.pythonhosted.org 443"))
                .isEqualTo(EgressRule.domain("*.pythonhosted.org").ports(443));
        assertThat(EgressRule.parse("  10.1.0.0/16   5432 5433 ")).hasToString("cidr 10.1.0.0/16 ports [5432, 5433]");
        assertThat(EgressRule.parse("fd00::/8")).isEqualTo(EgressRule.cidr("fd00::/8"));
        assertThat(EgressRule.parse("127.0.0.1")).isEqualTo(EgressRule.cidr("127.0.0.1/32"));
        assertThatThrownBy(() -> EgressRule.parse("pypi.org https"))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("ports"))
                .hasMessageContaining("not a port: 'https'");
        assertThatThrownBy(() -> EgressRule.parse("bad_name.org"))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("domain"));
    }

    @Test
    void portsAndProxyPortsOutOfRangeAreRefused() {
        assertThatThrownBy(() -> EgressRule.domain("a.com").ports(0))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("ports must be within 1..65535, got 0");
        assertThatThrownBy(() -> EgressRule.domain("a.com").ports())
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("ports");
        assertThatThrownBy(() -> NetworkPolicy.allowlist().withProxyPort(70000))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("proxyPort must be within 1..65535, got 70000");
    }

    @Test
    void aHeaderIsNamedNeverShownAndOnlyForDomainRules() {
        EgressRule r = EgressRule.domain("api.example.com").ports(443).withHeader("Authorization", "Bearer top-secret");
        assertThat(r.headers()).containsEntry("Authorization", "Bearer top-secret");
        assertThat(r).hasToString("domain api.example.com ports [443] headers [Authorization]");
        assertThat(NetworkPolicy.allowlist(r).toString()).doesNotContain("top-secret");
        assertThat(r.withHeader("authorization", "other").headers())
                .as("one value per name, any case")
                .containsExactly(java.util.Map.entry("authorization", "other"));
        assertThatThrownBy(() -> EgressRule.cidr("10.0.0.0/8").withHeader("Authorization", "x"))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("headers"))
                .hasMessageContaining("headers need a domain rule");
        assertThatThrownBy(() -> r.withHeader("Bad Name", "x"))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("HTTP token");
        assertThatThrownBy(() -> r.withHeader("X-Evil", "a\r\nHost: elsewhere"))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("without control characters")
                .hasMessageNotContaining("elsewhere");
    }

    @Test
    void internalAddressesAreTheOnesANameMayNotLeadToWithoutACidrRule() {
        for (String internal : new String[] {
            "127.0.0.1",
            "127.9.9.9",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "224.0.0.1",
            "255.255.255.255",
            "::"
        }) {
            assertThat(EgressRule.isInternal(addr(internal))).as(internal).isTrue();
        }
        for (String external : new String[] {"8.8.8.8", "93.184.216.34", "2606:4700::1111", "100.128.0.1"}) {
            assertThat(EgressRule.isInternal(addr(external))).as(external).isFalse();
        }
    }

    @Test
    void policiesCompareByWhatTheyAllow() {
        NetworkPolicy a = NetworkPolicy.allowlist(EgressRule.domain("a.com"));
        assertThat(a).isEqualTo(NetworkPolicy.allowlist().withRule(EgressRule.domain("A.com")));
        assertThat(a).isNotEqualTo(a.withProxyPort(8888));
        assertThat(NetworkPolicy.none().withRule(EgressRule.domain("a.com")).mode())
                .isEqualTo(NetworkPolicy.Mode.ALLOWLIST);
        assertThat(SessionOptions.defaults().network()).isEqualTo(NetworkPolicy.none());
        assertThat(SessionOptions.defaults().withNetwork(a).withEnv("X", "1").network())
                .isEqualTo(a);
    }

    private static InetAddress addr(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
