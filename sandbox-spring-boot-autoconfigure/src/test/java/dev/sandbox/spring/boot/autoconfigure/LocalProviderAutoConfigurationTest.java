package dev.sandbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.local.LocalSandboxProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;

/**
 * The starter with {@code sandbox.provider=local} (the default), in a real application context: the beans it makes,
 * the settings they take, what a bad setting does, the user's own beans, and the shutdown that destroys the
 * application's sessions and only those.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LocalProviderAutoConfigurationTest {
    static final Duration WAIT = Duration.ofSeconds(20);

    static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(
                        AutoConfigurations.of(SandboxAutoConfiguration.class, SandboxHealthAutoConfiguration.class));
    }

    /** Runs {@code sh -c line} in the session and returns its stdout, checking it exited 0. */
    static String run(SandboxClient client, String line) {
        ExecResult result = client.process().run(ExecOptions.shell(line));
        assertThat(result.exitCode())
                .as("exit of %s: %s", line, result.stderr())
                .isZero();
        return result.stdout().strip();
    }

    /** The failure that stopped the context, with Spring's wrappers removed. */
    static Throwable cause(AssertableApplicationContext context) {
        Throwable failure = context.getStartupFailure();
        assertThat(failure).as("the context should have failed to start").isNotNull();
        return NestedExceptionUtils.getMostSpecificCause(failure);
    }

    static void assertRefused(AssertableApplicationContext context, String property, String... inMessage) {
        Throwable cause = cause(context);
        assertThat(cause).isInstanceOf(InvalidArgumentException.class).hasMessageContaining(property);
        assertThat(((InvalidArgumentException) cause).field()).isEqualTo(property);
        for (String text : inMessage) {
            assertThat(cause.getMessage()).contains(text);
        }
    }

    @Test
    void the_default_is_the_local_provider_with_a_client_factory_and_a_health_indicator_that_is_up() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            SandboxProvider provider = context.getBean(SandboxProvider.class);
            assertThat(provider).isInstanceOf(ManagedSandboxProvider.class);
            assertThat(((ManagedSandboxProvider) provider).delegate()).isInstanceOf(LocalSandboxProvider.class);
            assertThat(provider.name()).isEqualTo("local");
            assertThat(context).hasSingleBean(SandboxClientFactory.class).hasBean("sandboxHealthIndicator");

            SandboxHealthIndicator health = context.getBean(SandboxHealthIndicator.class);
            Health before = health.health().block(WAIT);
            assertThat(before.getStatus()).isEqualTo(Status.UP);
            assertThat(before.getDetails()).containsEntry("provider", "local").containsEntry("sessions", 0L);

            try (SandboxClient client =
                    context.getBean(SandboxClientFactory.class).create()) {
                assertThat(run(client, "echo hello; echo oops >&2")).isEqualTo("hello");
                assertThat(health.health().block(WAIT).getDetails()).containsEntry("sessions", 1L);
            }
            assertThat(health.health().block(WAIT).getDetails()).containsEntry("sessions", 0L);
        });
    }

    @Test
    void session_and_client_settings_take_effect(@TempDir Path root) throws Exception {
        Path tempRoot = Files.createDirectory(root.resolve("sessions"));
        runner().withPropertyValues(
                        "sandbox.local.temp-root=" + tempRoot,
                        "sandbox.session.lifetime=90s",
                        "sandbox.session.idle-timeout=45s",
                        "sandbox.session.labels.team=search",
                        "sandbox.client.timeout=17s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    SandboxClientFactory clients = context.getBean(SandboxClientFactory.class);
                    assertThat(clients.timeout()).isEqualTo(Duration.ofSeconds(17));
                    try (SandboxClient client = clients.create()) {
                        assertThat(client.defaultTimeout()).isEqualTo(Duration.ofSeconds(17));
                        Instant now = Instant.now();
                        var status = client.ping();
                        assertThat(status.expiresAt()).isBetween(now.plusSeconds(80), now.plusSeconds(91));
                        assertThat(status.idleTimeout()).isEqualTo(Duration.ofSeconds(45));
                        assertThat(Path.of(run(client, "pwd"))).startsWith(tempRoot);
                        SandboxProvider provider = context.getBean(SandboxProvider.class);
                        assertThat(provider.list(Map.of("team", "search"))
                                        .collectList()
                                        .block(WAIT))
                                .singleElement()
                                .satisfies(info -> assertThat(info.id()).isEqualTo(client.sessionId()));
                    }
                    // options that choose their own lifetime keep it
                    SandboxProvider provider = context.getBean(SandboxProvider.class);
                    SandboxSession chosen = provider.create(
                                    SessionOptions.defaults().withLifetime(Duration.ofHours(1)))
                            .block(WAIT);
                    try {
                        assertThat(chosen.ping().block(WAIT).expiresAt())
                                .isAfter(Instant.now().plus(Duration.ofMinutes(50)));
                    } finally {
                        chosen.destroy().block(WAIT);
                    }
                });
    }

    @Test
    void an_unknown_provider_is_refused_at_startup_naming_the_property() {
        runner().withPropertyValues("sandbox.provider=firecracker")
                .run(context -> assertRefused(
                        context, "sandbox.provider", "'firecracker'", "[docker, kubernetes, local, remote]"));
    }

    @Test
    void bad_values_are_refused_at_startup_naming_the_property(@TempDir Path dir) {
        runner().withPropertyValues("sandbox.local.temp-root=" + dir.resolve("missing"))
                .run(context -> assertRefused(context, "sandbox.local.temp-root", "missing"));
        runner().withPropertyValues("sandbox.session.lifetime=-5s")
                .run(context -> assertRefused(context, "sandbox.session.lifetime", "PT-5S"));
        runner().withPropertyValues("sandbox.shutdown-timeout=0s")
                .run(context -> assertRefused(context, "sandbox.shutdown-timeout"));
        runner().withPropertyValues("sandbox.client.stream-prefetch=0")
                .run(context -> assertRefused(context, "sandbox.client.stream-prefetch", "got 0"));
        runner().withPropertyValues("sandbox.session.labels[" + ManagedSandboxProvider.OWNER_LABEL + "]=mine")
                .run(context -> assertRefused(context, "sandbox.session.labels", ManagedSandboxProvider.OWNER_LABEL));
        runner().withPropertyValues("sandbox.session.egress-allow=pypi.org 443,bad_name.org")
                .run(context -> assertRefused(context, "sandbox.session.egress-allow", "'bad_name.org'"));
        runner().withPropertyValues("sandbox.session.egress-allow=10.0.0.0/8 http")
                .run(context -> assertRefused(context, "sandbox.session.egress-allow", "not a port: 'http'"));
    }

    @Test
    void docker_or_remote_without_their_module_say_which_dependency_to_add() {
        runner().withClassLoader(new FilteredClassLoader("dev.sandbox.docker."))
                .withPropertyValues("sandbox.provider=docker", "sandbox.docker.image=busybox")
                .run(context -> assertRefused(context, "sandbox.provider", "dev.sandbox:sandbox-docker"));
        runner().withClassLoader(new FilteredClassLoader("dev.sandbox.remote."))
                .withPropertyValues("sandbox.provider=remote")
                .run(context -> assertRefused(context, "sandbox.provider", "dev.sandbox:sandbox-remote"));
    }

    @Test
    void the_health_indicator_is_left_out_without_boot_health_or_when_disabled() {
        runner().withClassLoader(new FilteredClassLoader("org.springframework.boot.health."))
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .hasSingleBean(SandboxProvider.class)
                        .doesNotHaveBean("sandboxHealthIndicator"));
        runner().withPropertyValues("management.health.sandbox.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("sandboxHealthIndicator"));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnProvider {
        @Bean(destroyMethod = "close")
        SandboxProvider myProvider() {
            return LocalSandboxProvider.create();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnClientsAndHealth {
        @Bean
        SandboxClientFactory myClients(SandboxProvider provider) {
            return new SandboxClientFactory(provider, Duration.ofSeconds(3), 8);
        }

        @Bean
        SandboxHealthIndicator sandboxHealthIndicator(SandboxProvider provider) {
            return new SandboxHealthIndicator(provider, Duration.ofMillis(1234));
        }
    }

    @Test
    void the_applications_own_beans_win() {
        runner().withUserConfiguration(OwnProvider.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(SandboxProvider.class);
            SandboxProvider provider = context.getBean(SandboxProvider.class);
            assertThat(provider).isSameAs(context.getBean("myProvider")).isNotInstanceOf(ManagedSandboxProvider.class);
            // the starter's other beans use it
            assertThat(context.getBean(SandboxClientFactory.class).provider()).isSameAs(provider);
            Health health =
                    context.getBean(SandboxHealthIndicator.class).health().block(WAIT);
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(health.getDetails()).containsEntry("provider", "local").doesNotContainKey("sessions");
        });
        runner().withUserConfiguration(OwnClientsAndHealth.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(SandboxClientFactory.class);
            assertThat(context.getBean(SandboxClientFactory.class).timeout()).isEqualTo(Duration.ofSeconds(3));
            assertThat(context).getBeans(SandboxHealthIndicator.class).hasSize(1);
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Decorated {
        @Bean
        SandboxProviderDecorator renaming() {
            return provider -> new ForwardingProvider(provider) {
                @Override
                public String name() {
                    return "decorated-" + provider.name();
                }
            };
        }
    }

    @Test
    void decorators_wrap_the_provider_inside_the_managed_one() {
        runner().withUserConfiguration(Decorated.class).run(context -> {
            assertThat(context).hasNotFailed();
            ManagedSandboxProvider provider = context.getBean(ManagedSandboxProvider.class);
            assertThat(provider.delegate()).isInstanceOf(ForwardingProvider.class);
            assertThat(provider.name()).isEqualTo("decorated-local");
        });
    }

    @Test
    void a_provider_that_does_not_answer_in_time_or_is_closed_is_down() {
        LocalSandboxProvider local = LocalSandboxProvider.create();
        try {
            SandboxProvider silent = new ForwardingProvider(local) {
                @Override
                public reactor.core.publisher.Flux<dev.sandbox.SessionInfo> list(Map<String, String> labels) {
                    return reactor.core.publisher.Flux.never();
                }
            };
            Health slow = new SandboxHealthIndicator(silent, Duration.ofMillis(200))
                    .health()
                    .block(WAIT);
            assertThat(slow.getStatus()).isEqualTo(Status.DOWN);
            assertThat(slow.getDetails())
                    .containsEntry("provider", "local")
                    .containsEntry("error", "the provider did not answer within PT0.2S");

        } finally {
            local.close();
        }
        Health closed = new SandboxHealthIndicator(local, WAIT).health().block(WAIT);
        assertThat(closed.getStatus()).isEqualTo(Status.DOWN);
        assertThat(closed.getDetails().get("error").toString()).contains("ProviderClosedException");
    }

    @Test
    void closing_the_context_destroys_the_sessions_the_application_made_and_no_others() throws Exception {
        try (LocalSandboxProvider outside = LocalSandboxProvider.create()) {
            SandboxSession other = outside.create(SessionOptions.defaults()).block(WAIT);
            Path otherDir = Path.of(
                    other.run(ExecOptions.of("pwd")).block(WAIT).stdout().strip());
            Path[] ownDirs = new Path[2];
            runner().run(context -> {
                SandboxProvider provider = context.getBean(SandboxProvider.class);
                // one made through the reactive bean and one through a blocking client, neither ended by the app
                SandboxSession session =
                        provider.create(SessionOptions.defaults()).block(WAIT);
                ownDirs[0] = Path.of(
                        session.run(ExecOptions.of("pwd")).block(WAIT).stdout().strip());
                SandboxClient client =
                        context.getBean(SandboxClientFactory.class).create();
                ownDirs[1] = Path.of(run(client, "pwd"));
                assertThat(ownDirs).allSatisfy(dir -> assertThat(dir).isDirectory());
            });
            assertThat(ownDirs).allSatisfy(dir -> assertThat(dir).doesNotExist());
            assertThat(otherDir).isDirectory();
            assertThat(other.run(ExecOptions.of("true")).block(WAIT).exitCode()).isZero();
        }
    }
}
