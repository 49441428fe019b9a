package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.SandboxProvider;

/**
 * Wraps the provider the starter made before the application sees it: the place for cross-cutting concerns such as
 * observations (an {@code ObservationRegistry} from Micrometer), tracing or auditing. Every bean of this type is
 * applied, in {@link org.springframework.core.annotation.Order order}, to the provider that {@code sandbox.provider}
 * chose; the result is then wrapped in the {@link ManagedSandboxProvider} that tracks the application's sessions, so a
 * decorator also sees the sessions shutdown destroys. Closing the result must close the provider it was given.
 *
 * <pre>{@code
 * @Bean
 * SandboxProviderDecorator auditing(AuditLog log) {
 *     return provider -> new AuditingSandboxProvider(provider, log);
 * }
 * }</pre>
 */
@FunctionalInterface
public interface SandboxProviderDecorator {

    /**
     * Wraps the provider.
     *
     * @param provider the provider made so far
     * @return the provider to use instead; {@code provider} itself to leave it as it is
     */
    SandboxProvider decorate(SandboxProvider provider);
}
