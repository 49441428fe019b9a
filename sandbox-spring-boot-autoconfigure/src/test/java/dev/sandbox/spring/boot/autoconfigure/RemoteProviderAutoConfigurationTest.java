package dev.sandbox.spring.boot.autoconfigure;

import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.WAIT;
import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.assertRefused;
import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.run;
import static dev.sandbox.spring.boot.autoconfigure.LocalProviderAutoConfigurationTest.runner;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import dev.sandbox.server.SandboxServer;
import dev.sandbox.testsupport.TestCertificate;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The starter with {@code sandbox.provider=remote}, against a real {@link SandboxServer} on loopback that serves a
 * local provider, with the token in a file as an operator would deploy it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteProviderAutoConfigurationTest {
    private static final String TOKEN = "starter-remote-token-0123456789";

    @TempDir
    Path dir;

    private LocalSandboxProvider backend;
    private SandboxServer server;
    private Path tokenFile;

    @BeforeEach
    void startServer() throws IOException {
        backend = LocalSandboxProvider.create();
        server = SandboxServer.builder(backend)
                .port(0)
                .token(TOKEN.toCharArray())
                .start();
        tokenFile = Files.writeString(dir.resolve("token"), TOKEN + "\n");
    }

    @AfterEach
    void stopServer() {
        server.close();
        backend.close();
    }

    private ApplicationContextRunner remote() {
        return runner().withPropertyValues(
                        "sandbox.provider=remote",
                        "sandbox.remote.url=" + server.baseUrl(),
                        "sandbox.remote.token-file=" + tokenFile);
    }

    @Test
    void the_provider_talks_to_the_server_and_is_healthy() {
        remote().withPropertyValues("sandbox.session.lifetime=2m").run(context -> {
            assertThat(context).hasNotFailed();
            ManagedSandboxProvider provider = context.getBean(ManagedSandboxProvider.class);
            assertThat(provider.delegate()).isInstanceOf(RemoteSandboxProvider.class);
            assertThat(((RemoteSandboxProvider) provider.delegate()).baseUrl()).isEqualTo(server.baseUrl());

            Health health =
                    context.getBean(SandboxHealthIndicator.class).health().block(WAIT);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("provider", "remote");

            try (SandboxClient client =
                    context.getBean(SandboxClientFactory.class).create()) {
                assertThat(run(client, "echo through-the-server")).isEqualTo("through-the-server");
                // the session lives on the server's provider, with the lifetime the property set
                SandboxSession onServer = backend.attach(client.sessionId()).block(WAIT);
                assertThat(onServer.labels()).containsEntry(ManagedSandboxProvider.OWNER_LABEL, provider.owner());
                assertThat(Duration.between(
                                java.time.Instant.now(),
                                onServer.ping().block(WAIT).expiresAt()))
                        .isBetween(Duration.ofSeconds(100), Duration.ofSeconds(121));
            }
        });
    }

    /** The server's count of commands that came over its command channel, from its ping. */
    private long channelCommands() throws Exception {
        java.net.http.HttpResponse<String> ping = java.net.http.HttpClient.newHttpClient()
                .send(
                        java.net.http.HttpRequest.newBuilder(java.net.URI.create(server.baseUrl() + "/v1/ping"))
                                .header("Authorization", "Bearer " + TOKEN)
                                .timeout(WAIT)
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString());
        java.util.regex.Matcher m =
                java.util.regex.Pattern.compile("\"channelCommands\":(\\d+)").matcher(ping.body());
        assertThat(m.find()).as(ping.body()).isTrue();
        return Long.parseLong(m.group(1));
    }

    @Test
    void commands_go_over_the_command_channel_unless_the_property_turns_it_off() throws Exception {
        remote().withPropertyValues("sandbox.remote.command-channel=false").run(context -> {
            try (SandboxClient client =
                    context.getBean(SandboxClientFactory.class).create()) {
                assertThat(run(client, "echo over-rest")).isEqualTo("over-rest");
            }
        });
        assertThat(channelCommands())
                .as("commands over the channel with it off")
                .isZero();
        remote().run(context -> {
            try (SandboxClient client =
                    context.getBean(SandboxClientFactory.class).create()) {
                assertThat(run(client, "echo over-the-channel")).isEqualTo("over-the-channel");
            }
        });
        assertThat(channelCommands()).as("commands over the channel by default").isPositive();
    }

    @Test
    void closing_the_context_destroys_the_applications_sessions_on_the_server_and_no_others() throws Exception {
        try (RemoteSandboxProvider otherClient = RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(TOKEN.toCharArray())
                .build()) {
            SandboxSession other = otherClient.create(SessionOptions.defaults()).block(WAIT);
            String[] own = new String[2];
            remote().run(context -> {
                assertThat(context).hasNotFailed();
                SandboxProvider provider = context.getBean(SandboxProvider.class);
                own[0] = provider.create(SessionOptions.defaults()).block(WAIT).id();
                own[1] = context.getBean(SandboxClientFactory.class).create().sessionId();
                for (String id : own) {
                    assertThat(backend.attach(id).block(WAIT).id()).isEqualTo(id);
                }
            });
            // gone at once, not a lease later: shutdown destroyed them before the client closed
            for (String id : own) {
                assertThatThrownBy(() -> backend.attach(id).block(WAIT)).isInstanceOf(SessionNotFoundException.class);
            }
            assertThat(other.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
            assertThat(backend.attach(other.id()).block(WAIT).id()).isEqualTo(other.id());
        }
    }

    @Test
    void a_server_that_does_not_answer_makes_the_health_down_with_the_reason() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        runner().withPropertyValues(
                        "sandbox.provider=remote",
                        "sandbox.remote.url=http://127.0.0.1:" + closedPort,
                        "sandbox.remote.token-file=" + tokenFile,
                        "sandbox.health-timeout=5s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Health health = context.getBean(SandboxHealthIndicator.class)
                            .health()
                            .block(WAIT);
                    assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                    assertThat(health.getDetails()).containsEntry("provider", "remote");
                    assertThat(health.getDetails().get("error").toString()).containsIgnoringCase("refused");
                });
    }

    @Test
    void an_https_server_is_reached_with_the_trusted_certificates_property() throws Exception {
        TestCertificate cert = TestCertificate.make(dir, "server", "ip:127.0.0.1");
        try (SandboxServer tls = SandboxServer.builder(backend)
                .port(0)
                .token(TOKEN.toCharArray())
                .tls(cert.certificate(), cert.privateKey())
                .start()) {
            runner().withPropertyValues(
                            "sandbox.provider=remote",
                            "sandbox.remote.url=" + tls.baseUrl(),
                            "sandbox.remote.token-file=" + tokenFile,
                            "sandbox.remote.trusted-certificates=" + cert.certificate())
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        try (SandboxClient client =
                                context.getBean(SandboxClientFactory.class).create()) {
                            assertThat(run(client, "echo over-https")).isEqualTo("over-https");
                        }
                    });
            runner().withPropertyValues(
                            "sandbox.provider=remote",
                            "sandbox.remote.url=" + tls.baseUrl(),
                            "sandbox.remote.token-file=" + tokenFile,
                            "sandbox.remote.trusted-certificates=" + dir.resolve("absent.pem"))
                    .run(context ->
                            assertRefused(context, "sandbox.remote.trusted-certificates", "absent.pem' was not found"));
        }
    }

    @Test
    void missing_or_bad_remote_settings_are_refused_at_startup_naming_the_property() throws IOException {
        runner().withPropertyValues("sandbox.provider=remote", "sandbox.remote.token-file=" + tokenFile)
                .run(context -> assertRefused(context, "sandbox.remote.url", "needs sandbox.remote.url"));
        runner().withPropertyValues("sandbox.provider=remote", "sandbox.remote.url=" + server.baseUrl())
                .run(context -> assertRefused(context, "sandbox.remote.token-file", "needs"));
        runner().withPropertyValues(
                        "sandbox.provider=remote",
                        "sandbox.remote.url=" + server.baseUrl(),
                        "sandbox.remote.token-file=" + dir.resolve("absent"))
                .run(context -> assertRefused(
                        context,
                        "sandbox.remote.token-file",
                        "token-file '" + dir.resolve("absent") + "' was not found"));
        Path empty = Files.writeString(dir.resolve("empty"), "  \n");
        runner().withPropertyValues(
                        "sandbox.provider=remote",
                        "sandbox.remote.url=" + server.baseUrl(),
                        "sandbox.remote.token-file=" + empty)
                .run(context -> assertRefused(context, "sandbox.remote.token-file", "is empty"));
        runner().withPropertyValues(
                        "sandbox.provider=remote",
                        "sandbox.remote.url=ftp://example.com",
                        "sandbox.remote.token-file=" + tokenFile)
                .run(context -> assertRefused(context, "sandbox.remote.url", "ftp://example.com"));
    }
}
