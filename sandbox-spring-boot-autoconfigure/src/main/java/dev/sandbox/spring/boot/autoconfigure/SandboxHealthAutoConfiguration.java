package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.SandboxProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code sandbox} health component ({@link SandboxHealthIndicator}), when the application has Boot's health
 * support ({@code spring-boot-starter-actuator}) and a {@link SandboxProvider}; off with {@code
 * management.health.sandbox.enabled=false}.
 *
 * <pre>{@code
 * curl http://localhost:8080/actuator/health/sandbox
 * {"status":"UP","details":{"provider":"local","sessions":0}}
 * }</pre>
 */
@AutoConfiguration(after = SandboxAutoConfiguration.class)
@ConditionalOnClass(ReactiveHealthIndicator.class)
@ConditionalOnBean(SandboxProvider.class)
public final class SandboxHealthAutoConfiguration {

    /** Created by Spring. */
    public SandboxHealthAutoConfiguration() {}

    /**
     * The health indicator.
     *
     * @param provider the application's provider
     * @param properties the {@code sandbox.health-timeout} setting
     * @return the indicator
     * @throws dev.sandbox.InvalidArgumentException when {@code sandbox.health-timeout} is not positive
     */
    @Bean
    @ConditionalOnMissingBean(name = "sandboxHealthIndicator")
    // on the method, so that its condition class is looked at only once the class condition above has passed
    @ConditionalOnEnabledHealthIndicator("sandbox")
    public SandboxHealthIndicator sandboxHealthIndicator(SandboxProvider provider, SandboxProperties properties) {
        return new SandboxHealthIndicator(
                provider, Settings.positive("sandbox.health-timeout", properties.healthTimeout()));
    }
}
