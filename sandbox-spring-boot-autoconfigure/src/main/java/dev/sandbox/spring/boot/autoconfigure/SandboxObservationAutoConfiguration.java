package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.micrometer.SandboxObservations;
import dev.sandbox.micrometer.SandboxPoolMetrics;
import dev.sandbox.pool.SandboxPool;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Observes the application's sandbox sessions with Micrometer when the application has {@code sandbox-micrometer} on
 * its class path: a {@link SandboxProviderDecorator} that wraps the provider with {@link
 * SandboxObservations#observe(dev.sandbox.SandboxProvider, ObservationRegistry, MeterRegistry)}, using the
 * application's {@link ObservationRegistry} and {@link MeterRegistry} (Spring Boot's actuator makes both). Without
 * them the provider is left as it is, so nothing is recorded and nothing costs. A bean named {@code
 * sandboxObservationDecorator} of the application's own replaces this one.
 *
 * <pre>{@code
 * <dependency>
 *   <groupId>dev.sandbox</groupId>
 *   <artifactId>sandbox-micrometer</artifactId>
 * </dependency>
 * }</pre>
 */
@AutoConfiguration(before = SandboxAutoConfiguration.class)
@ConditionalOnClass({SandboxObservations.class, ObservationRegistry.class, MeterRegistry.class})
public final class SandboxObservationAutoConfiguration {

    /** Created by Spring. */
    public SandboxObservationAutoConfiguration() {}

    /**
     * The decorator that observes the provider, looking up the registries when the provider is made.
     *
     * @param observations the application's observation registry, if it has one
     * @param meters the application's meter registry, if it has one
     * @return the decorator
     */
    @Bean
    @ConditionalOnMissingBean(name = "sandboxObservationDecorator")
    public SandboxProviderDecorator sandboxObservationDecorator(
            ObjectProvider<ObservationRegistry> observations, ObjectProvider<MeterRegistry> meters) {
        return provider -> SandboxObservations.observe(
                provider, observations.getIfAvailable(() -> ObservationRegistry.NOOP), meters.getIfAvailable());
    }

    /**
     * Publishes the application's pool ({@code sandbox.pool.enabled=true}) as meters tagged {@code pool=default}, see
     * {@link SandboxPoolMetrics}; binds nothing without one.
     *
     * @param pool the application's pool, if it has one
     * @return the binder Spring Boot's actuator applies to its registry
     */
    @Bean
    @ConditionalOnMissingBean(name = "sandboxPoolMeterBinder")
    public MeterBinder sandboxPoolMeterBinder(ObjectProvider<SandboxPool> pool) {
        return registry -> pool.ifAvailable(p -> SandboxPoolMetrics.bind(p, "default", registry));
    }
}
