package dev.sandbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.ExecEvent;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.spring.boot.autoconfigure.readme.Grader;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.actuate.endpoint.HealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

/**
 * A Spring Boot application as a user writes it: {@code @EnableAutoConfiguration} finds the starter through its
 * {@code AutoConfiguration.imports}, the actuator's health endpoint reports the {@code sandbox} component, the
 * README's service runs, and a bad setting stops the start with Boot's failure report naming it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ExtendWith(OutputCaptureExtension.class)
class StarterApplicationTest {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(Grader.class)
    static class App {}

    private static ConfigurableApplicationContext start(String... args) {
        return new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties("spring.main.banner-mode=off")
                .run(args);
    }

    @Test
    void the_starter_is_auto_configured_and_its_health_reported_by_the_actuator() {
        try (ConfigurableApplicationContext context = start()) {
            assertThat(context.getBean(SandboxProvider.class)).isInstanceOf(ManagedSandboxProvider.class);
            HealthDescriptor sandbox = context.getBean(HealthEndpoint.class).healthForPath("sandbox");
            assertThat(sandbox).isNotNull();
            assertThat(sandbox.getStatus()).isEqualTo(Status.UP);
        }
    }

    @Test
    void the_readme_service_runs_reactive_and_blocking() {
        try (ConfigurableApplicationContext context = start()) {
            Grader grader = context.getBean(Grader.class);
            assertThat(grader.grade("echo $((6 * 7))")).isEqualTo("passed: 42");
            assertThat(grader.grade("echo no >&2; exit 1")).isEqualTo("failed: no\n");
            List<ExecEvent> events =
                    grader.stream("echo one; echo two").collectList().block(Duration.ofSeconds(20));
            assertThat(events)
                    .filteredOn(e -> e instanceof ExecEvent.Stdout)
                    .extracting(e -> ((ExecEvent.Stdout) e).text())
                    .containsExactly("one", "two");
            assertThat(events.getLast()).isInstanceOf(ExecEvent.Exit.class);
        }
    }

    @Test
    void a_bad_setting_stops_the_start_with_a_report_naming_it(CapturedOutput output) {
        assertThatThrownBy(() -> start("--sandbox.provider=firecracker").close())
                .hasRootCauseInstanceOf(InvalidArgumentException.class);
        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains("The value of 'sandbox.provider' cannot be used: sandbox.provider must be one of"
                        + " [docker, kubernetes, local, remote], got 'firecracker'")
                .contains("Change 'sandbox.provider' in the application's configuration")
                .contains("SANDBOX_PROVIDER");
    }

    @Test
    void a_bad_docker_setting_is_reported_under_its_property(CapturedOutput output) {
        assertThatThrownBy(() -> start(
                                "--sandbox.provider=docker",
                                "--sandbox.docker.image=busybox",
                                "--sandbox.docker.runtime=foo")
                        .close())
                .hasRootCauseInstanceOf(InvalidArgumentException.class);
        assertThat(output.getOut() + output.getErr())
                .contains("APPLICATION FAILED TO START")
                .contains("The value of 'sandbox.docker.runtime' cannot be used")
                .contains("got 'foo'")
                .contains("SANDBOX_DOCKER_RUNTIME");
    }
}
