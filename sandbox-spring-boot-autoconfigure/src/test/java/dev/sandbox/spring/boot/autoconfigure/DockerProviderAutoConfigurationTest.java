package dev.sandbox.spring.boot.autoconfigure;

import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.WAIT;
import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.assertRefused;
import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.run;
import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.runner;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import dev.sandbox.docker.RequiresDocker;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.Exceptions;

/** The starter with {@code sandbox.provider=docker} on the real daemon, with the test image and runc. */
@RequiresDocker
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DockerProviderAutoConfigurationTest {
    private static final String IMAGE = "sandbox-test:busybox";

    private static ApplicationContextRunner docker() {
        return runner().withPropertyValues(
                        "sandbox.provider=docker",
                        "sandbox.docker.image=" + IMAGE,
                        "sandbox.docker.pull=never",
                        "sandbox.docker.runtime=runc");
    }

    @Test
    void the_provider_runs_containers_with_the_bound_profile_and_is_healthy() {
        docker().withPropertyValues(
                        "sandbox.docker.memory-limit=64MB",
                        "sandbox.docker.user=1234:2345",
                        "sandbox.docker.workdir=/tmp/starter-work")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    ManagedSandboxProvider provider = context.getBean(ManagedSandboxProvider.class);
                    DockerSandboxProvider docker = (DockerSandboxProvider) provider.delegate();
                    assertThat(docker.settings().image()).isEqualTo(IMAGE);
                    assertThat(docker.settings().runtime()).isEqualTo(DockerSettings.Runtime.RUNC);

                    Health health = context.getBean(SandboxHealthIndicator.class)
                            .health()
                            .block(WAIT);
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails()).containsEntry("provider", "docker");

                    try (SandboxClient client =
                            context.getBean(SandboxClientFactory.class).create()) {
                        // process 1 is the SDK's agent: a container, with the user, workdir and network the properties
                        // say
                        assertThat(run(client, "tr '\\0' ' ' < /proc/1/cmdline"))
                                .startsWith("/.dev-sandbox/agent");
                        assertThat(run(client, "id -u; id -g; pwd; ls /sys/class/net"))
                                .isEqualTo("1234\n2345\n/tmp/starter-work\nlo");
                        assertThat(docker.settings().memoryLimit()).hasValue(64L * 1024 * 1024);
                    }
                });
    }

    @Test
    void an_egress_allowlist_in_the_properties_is_the_policy_of_sessions_that_set_none() throws Exception {
        com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", x -> {
            byte[] body = "reached from the starter's session\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, body.length);
            x.getResponseBody().write(body);
            x.close();
        });
        server.start();
        int port = server.getAddress().getPort();
        try {
            docker().withPropertyValues("sandbox.session.egress-allow=127.0.0.1/32 " + port + ",pypi.org 443")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        try (SandboxClient client =
                                context.getBean(SandboxClientFactory.class).create()) {
                            assertThat(client.network().policy())
                                    .isEqualTo(dev.sandbox.NetworkPolicy.allowlist(
                                            dev.sandbox.EgressRule.cidr("127.0.0.1/32")
                                                    .ports(port),
                                            dev.sandbox.EgressRule.domain("pypi.org")
                                                    .ports(443)));
                            assertThat(run(client, "NO_PROXY= no_proxy= wget -q -O - http://127.0.0.1:" + port + "/"))
                                    .isEqualTo("reached from the starter's session");
                            assertThat(client.network().report().allowedConnections())
                                    .isEqualTo(1);
                        }
                    });
        } finally {
            server.stop(0);
        }
    }

    @Test
    void the_bound_image_is_the_one_sessions_start_from() {
        docker().withPropertyValues("sandbox.docker.image=sandbox-test:no-such-tag")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    SandboxProvider provider = context.getBean(SandboxProvider.class);
                    assertThatThrownBy(() ->
                                    provider.create(SessionOptions.defaults()).block(WAIT))
                            .isInstanceOf(InvalidArgumentException.class)
                            .hasMessageContaining("sandbox-test:no-such-tag");
                });
    }

    @Test
    void closing_the_context_removes_the_applications_containers_and_no_others() {
        try (DockerSandboxProvider outside = DockerSandboxProvider.create(
                DockerSettings.of(IMAGE).withPullPolicy(DockerSettings.PullPolicy.NEVER))) {
            SandboxSession other = outside.create(SessionOptions.defaults()).block(WAIT);
            try {
                String[] own = new String[1];
                docker().run(context -> {
                    assertThat(context).hasNotFailed();
                    own[0] = context.getBean(SandboxProvider.class)
                            .create(SessionOptions.defaults())
                            .block(WAIT)
                            .id();
                    assertThat(outside.attach(own[0]).block(WAIT).id()).isEqualTo(own[0]);
                });
                // removed at shutdown, not a lease later
                assertThatThrownBy(() -> outside.attach(own[0]).block(WAIT))
                        .satisfies(e -> assertThat(Exceptions.unwrap(e)).isInstanceOf(SessionNotFoundException.class));
                assertThat(other.run(ExecOptions.of("true")).block(WAIT).exitCode())
                        .isZero();
            } finally {
                other.destroy().block(WAIT);
            }
        }
    }

    @Test
    void bad_docker_settings_are_refused_at_startup_naming_the_property() {
        docker().withPropertyValues("sandbox.docker.runtime=foo")
                .run(context -> assertRefused(context, "sandbox.docker.runtime", "[runc, runsc]", "'foo'"));
        docker().withPropertyValues("sandbox.docker.pull=sometimes")
                .run(context -> assertRefused(context, "sandbox.docker.pull", "'sometimes'"));
        docker().withPropertyValues("sandbox.docker.memory-limit=1MB")
                .run(context -> assertRefused(context, "sandbox.docker.memory-limit", "6 MiB"));
        docker().withPropertyValues("sandbox.docker.capabilities=CHOWN,NOT_A_CAP")
                .run(context -> assertRefused(context, "sandbox.docker.capabilities", "NOT_A_CAP"));
        docker().withPropertyValues("sandbox.docker.lease=1s")
                .run(context -> assertRefused(context, "sandbox.docker.lease"));
        runner().withPropertyValues("sandbox.provider=docker")
                .run(context -> assertRefused(context, "sandbox.docker.image", "needs sandbox.docker.image"));
    }
}
