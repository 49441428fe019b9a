package dev.sandbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.micrometer.SandboxObservationNames;
import dev.sandbox.micrometer.SandboxObservations;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * With {@code sandbox-micrometer} on the class path, the starter's provider is observed through the application's
 * registries; without it, or without registries, it is not.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ObservationAutoConfigurationTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(
                        SandboxAutoConfiguration.class, SandboxObservationAutoConfiguration.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class Registries {
        @Bean
        TestObservationRegistry observationRegistry() {
            return TestObservationRegistry.create();
        }

        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    private static ExecResult runIn(SandboxProvider provider, String line) {
        SandboxSession session = provider.create(SessionOptions.defaults()).block(WAIT);
        try {
            return session.run(ExecOptions.shell(line)).block(WAIT);
        } finally {
            session.destroy().block(WAIT);
        }
    }

    @Test
    void theApplicationsRegistriesRecordItsSessionsOperations() {
        runner().withUserConfiguration(Registries.class).run(context -> {
            assertThat(context).hasNotFailed().hasBean("sandboxObservationDecorator");
            ExecResult result = runIn(context.getBean(SandboxProvider.class), "echo hello; exit 3");
            assertThat(result.exitCode()).isEqualTo(3);

            TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
                    .hasObservationWithNameEqualTo(SandboxObservationNames.RUN)
                    .that()
                    .hasLowCardinalityKeyValue(SandboxObservationNames.PROVIDER, "local")
                    .hasLowCardinalityKeyValue(SandboxObservationNames.EXIT_CODE, "3")
                    .hasBeenStarted()
                    .hasBeenStopped();
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(meters.get(SandboxObservationNames.OUTPUT_BYTES)
                            .tag(SandboxObservationNames.OPERATION, "run")
                            .tag(SandboxObservationNames.STREAM, "stdout")
                            .counter()
                            .count())
                    .isEqualTo("hello\n".length());
        });
    }

    @Test
    void aMeterRegistryAloneGetsTimersAndCounters() {
        runner().withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new).run(context -> {
            runIn(context.getBean(SandboxProvider.class), "echo hi");
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(meters.get(SandboxObservationNames.OUTPUT_BYTES)
                            .tag(SandboxObservationNames.OPERATION, "run")
                            .tag(SandboxObservationNames.STREAM, "stdout")
                            .counter()
                            .count())
                    .isEqualTo(3.0);
        });
    }

    @Test
    void theApplicationsPoolIsPublishedByTheBinderTheActuatorApplies() {
        runner().withBean(SimpleMeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("sandbox.pool.enabled=true", "sandbox.pool.warm=1")
                .run(context -> {
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    context.getBean("sandboxPoolMeterBinder", io.micrometer.core.instrument.binder.MeterBinder.class)
                            .bindTo(meters);
                    assertThat(meters.get("sandbox.pool.sessions")
                                    .tags("pool", "default", "state", "in_use")
                                    .gauge()
                                    .value())
                            .isZero();
                });
    }

    @Test
    void withoutRegistriesTheProviderIsNotWrapped() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            SandboxProviderDecorator decorator = context.getBean(SandboxProviderDecorator.class);
            SandboxProvider plain = context.getBean(ManagedSandboxProvider.class);
            assertThat(SandboxObservations.isObserved(decorator.decorate(plain)))
                    .isFalse();
            assertThat(runIn(context.getBean(SandboxProvider.class), "true").exitCode())
                    .isZero();
        });
    }

    @Test
    void withoutSandboxMicrometerThereIsNoDecorator() {
        runner().withUserConfiguration(Registries.class)
                .withClassLoader(new FilteredClassLoader(SandboxObservations.class))
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean("sandboxObservationDecorator");
                    runIn(context.getBean(SandboxProvider.class), "true");
                    TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
                            .doesNotHaveAnyObservation();
                });
    }

    @Test
    void theApplicationsOwnDecoratorWins() {
        runner().withUserConfiguration(Registries.class)
                .withBean("sandboxObservationDecorator", SandboxProviderDecorator.class, () -> provider -> provider)
                .run(context -> {
                    runIn(context.getBean(SandboxProvider.class), "true");
                    TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
                            .doesNotHaveAnyObservation();
                    assertThat(context.getBean(MeterRegistry.class)
                                    .find(SandboxObservationNames.RUN)
                                    .timer())
                            .as("no %s timer", SandboxObservationNames.RUN)
                            .isNull();
                });
    }
}
