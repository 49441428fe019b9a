package dev.sandbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * The metadata the jar carries for IDEs and for Boot: the configuration processor's {@code sandbox.*} properties with
 * their descriptions, defaults and the value hints, and the auto-configuration processor's conditions that let Boot
 * skip the health auto-configuration without loading it. Both processors run only when the build names them, so a
 * build change that drops them fails here.
 */
class ConfigurationMetadataTest {

    private static String resource(String name) throws IOException {
        try (InputStream in = ConfigurationMetadataTest.class.getClassLoader().getResourceAsStream(name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void every_setting_is_described_with_its_default_and_the_words_have_hints() throws IOException {
        String json = resource("META-INF/spring-configuration-metadata.json");
        List<Map<String, Object>> properties = JsonPath.read(json, "$.properties[*]");
        assertThat(properties)
                .extracting(p -> p.get("name"))
                .contains(
                        "sandbox.provider",
                        "sandbox.local.temp-root",
                        "sandbox.docker.image",
                        "sandbox.docker.runtime",
                        "sandbox.docker.memory-limit",
                        "sandbox.kubernetes.namespace",
                        "sandbox.kubernetes.context",
                        "sandbox.kubernetes.kubeconfig",
                        "sandbox.kubernetes.image",
                        "sandbox.kubernetes.agent-image",
                        "sandbox.kubernetes.pull-policy",
                        "sandbox.kubernetes.runtime-class-name",
                        "sandbox.kubernetes.lease",
                        "sandbox.kubernetes.max-lifetime",
                        "sandbox.remote.url",
                        "sandbox.remote.token-file",
                        "sandbox.session.lifetime",
                        "sandbox.session.labels",
                        "sandbox.client.timeout",
                        "sandbox.shutdown-timeout",
                        "sandbox.health-timeout");
        assertThat(properties)
                .allSatisfy(p -> assertThat((String) p.get("description"))
                        .as("description of %s", p.get("name"))
                        .isNotBlank()
                        .doesNotContain("{@"));
        assertThat(JsonPath.<List<Object>>read(json, "$.properties[?(@.name == 'sandbox.provider')].defaultValue"))
                .containsExactly("local");
        assertThat(JsonPath.<List<Object>>read(json, "$.hints[?(@.name == 'sandbox.provider')].values[*].value"))
                .containsExactly("local", "docker", "kubernetes", "remote");
        assertThat(JsonPath.<List<Object>>read(
                        json, "$.hints[?(@.name == 'sandbox.kubernetes.pull-policy')].values[*].value"))
                .containsExactly("if-not-present", "always", "never");
        assertThat(JsonPath.<List<Object>>read(json, "$.hints[?(@.name == 'sandbox.docker.runtime')].values[*].value"))
                .containsExactly("runc", "runsc");
    }

    @Test
    void boot_can_filter_the_auto_configurations_before_loading_them() throws IOException {
        Properties conditions = new Properties();
        conditions.load(new java.io.StringReader(resource("META-INF/spring-autoconfigure-metadata.properties")));
        assertThat(conditions)
                .containsEntry(
                        SandboxHealthAutoConfiguration.class.getName() + ".ConditionalOnClass",
                        "org.springframework.boot.health.contributor.ReactiveHealthIndicator")
                .containsEntry(
                        SandboxObservationAutoConfiguration.class.getName() + ".ConditionalOnClass",
                        "dev.sandbox.micrometer.SandboxObservations,io.micrometer.core.instrument.MeterRegistry,"
                                + "io.micrometer.observation.ObservationRegistry");
        assertThat(resource("META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports")
                        .lines()
                        .toList())
                .containsExactly(
                        SandboxAutoConfiguration.class.getName(),
                        SandboxHealthAutoConfiguration.class.getName(),
                        SandboxObservationAutoConfiguration.class.getName());
    }
}
