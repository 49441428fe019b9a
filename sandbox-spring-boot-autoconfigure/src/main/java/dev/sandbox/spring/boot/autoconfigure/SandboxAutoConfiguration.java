package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.pool.SandboxPool;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of the Sandbox SDK: the {@link SandboxProvider} chosen by {@code sandbox.provider} (wrapped in a
 * {@link ManagedSandboxProvider}, which destroys the application's sessions on shutdown), a {@link
 * SandboxClientFactory} of blocking clients over it, and the {@link SandboxProviderFactory}s of the provider kinds on
 * the class path. Every bean backs off when the application defines its own of the same type (or, for the factories,
 * name).
 *
 * <pre>{@code
 * @Service
 * class Grader {
 *     private final SandboxProvider sandboxes;
 *
 *     Grader(SandboxProvider sandboxes) {
 *         this.sandboxes = sandboxes;
 *     }
 *
 *     Mono<ExecResult> grade(String script) {
 *         return sandboxes.withSession(SessionOptions.defaults(), s -> s.run(ExecOptions.shell(script))).next();
 *     }
 * }
 * }</pre>
 */
@AutoConfiguration
@EnableConfigurationProperties(SandboxProperties.class)
public final class SandboxAutoConfiguration {

    /** Created by Spring. */
    public SandboxAutoConfiguration() {}

    /**
     * The factory of {@code sandbox.provider=local}.
     *
     * @return the factory
     */
    @Bean
    @ConditionalOnMissingBean(name = "localSandboxProviderFactory")
    public SandboxProviderFactory localSandboxProviderFactory() {
        return new LocalProviderFactory();
    }

    /**
     * The application's provider: the one {@code sandbox.provider} names, made by its {@link SandboxProviderFactory},
     * wrapped by every {@link SandboxProviderDecorator} in order, then by a {@link ManagedSandboxProvider} with the
     * {@code sandbox.session.*} defaults and {@code sandbox.shutdown-timeout}. The context closes it on shutdown.
     *
     * @param properties the {@code sandbox.*} settings
     * @param factories the provider kinds available
     * @param decorators what wraps the provider
     * @return the provider
     * @throws InvalidArgumentException naming the property when a setting cannot be used
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(SandboxProvider.class)
    public ManagedSandboxProvider sandboxProvider(
            SandboxProperties properties,
            List<SandboxProviderFactory> factories,
            ObjectProvider<SandboxProviderDecorator> decorators) {
        SandboxProperties.Session session = properties.session();
        ManagedSandboxProvider.Builder managed;
        SandboxProvider provider = factory(properties.provider(), factories).create(properties);
        try {
            for (SandboxProviderDecorator decorator : decorators.orderedStream().toList()) {
                provider = decorator.decorate(provider);
            }
            managed = ManagedSandboxProvider.builder(provider)
                    .lifetime(Settings.positiveOrNull("sandbox.session.lifetime", session.lifetime()))
                    .idleTimeout(Settings.positiveOrNull("sandbox.session.idle-timeout", session.idleTimeout()))
                    .shutdownTimeout(Settings.positive("sandbox.shutdown-timeout", properties.shutdownTimeout()))
                    .network(Settings.egress("sandbox.session.egress-allow", session.egressAllow()));
            for (Map.Entry<String, String> label : session.labels().entrySet()) {
                try {
                    managed.label(label.getKey(), label.getValue());
                } catch (InvalidArgumentException e) {
                    throw new InvalidArgumentException(
                            "sandbox.session.labels", "sandbox.session.labels: " + e.getMessage());
                }
            }
        } catch (RuntimeException e) {
            provider.close();
            throw e;
        }
        return managed.build();
    }

    /**
     * A warm pool over the application's provider, when {@code sandbox.pool.enabled=true}; closed before the provider
     * on shutdown.
     *
     * @param provider the application's provider
     * @param properties the {@code sandbox.pool.*} settings
     * @return the pool
     * @throws InvalidArgumentException naming the property when a setting cannot be used
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @ConditionalOnProperty(prefix = "sandbox.pool", name = "enabled", havingValue = "true")
    public SandboxPool sandboxPool(SandboxProvider provider, SandboxProperties properties) {
        SandboxProperties.Pool pool = properties.pool();
        try {
            SandboxPool.Builder builder = SandboxPool.builder(provider)
                    .warm(pool.warm())
                    .maxCreatesInFlight(pool.maxCreatesInFlight())
                    .maxWaiting(pool.maxWaiting())
                    .acquireTimeout(pool.acquireTimeout())
                    .refillPerSecond(pool.refillPerSecond());
            if (pool.maxSessions() != null) {
                builder.maxSessions(pool.maxSessions());
            }
            return builder.build();
        } catch (InvalidArgumentException e) {
            throw Settings.renamed("sandbox.pool.", e);
        }
    }

    /**
     * Blocking clients over the application's provider.
     *
     * @param provider the application's provider
     * @param properties the {@code sandbox.client.*} settings
     * @return the factory
     * @throws InvalidArgumentException naming the property when a setting cannot be used
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnClass(SandboxClient.class)
    public SandboxClientFactory sandboxClientFactory(SandboxProvider provider, SandboxProperties properties) {
        SandboxProperties.Client client = properties.client();
        Settings.positive("sandbox.client.timeout", client.timeout());
        if (client.streamPrefetch() < 1) {
            throw new InvalidArgumentException(
                    "sandbox.client.stream-prefetch",
                    "sandbox.client.stream-prefetch must be at least 1, got " + client.streamPrefetch());
        }
        return new SandboxClientFactory(provider, client.timeout(), client.streamPrefetch());
    }

    /** The factory named by {@code sandbox.provider}. */
    private static SandboxProviderFactory factory(String name, List<SandboxProviderFactory> factories) {
        Map<String, SandboxProviderFactory> byName = new TreeMap<>();
        for (SandboxProviderFactory factory : factories) {
            byName.putIfAbsent(factory.name(), factory);
        }
        String wanted = name == null ? "" : name.trim();
        SandboxProviderFactory factory = byName.get(wanted);
        if (factory != null) {
            return factory;
        }
        String missing = switch (wanted) {
            case "docker" -> ": add the dependency dev.sandbox:sandbox-docker to use it";
            case "kubernetes" -> ": add the dependency dev.sandbox:sandbox-kubernetes to use it";
            case "remote" -> ": add the dependency dev.sandbox:sandbox-remote to use it";
            default -> "";
        };
        throw new InvalidArgumentException(
                "sandbox.provider",
                "sandbox.provider must be one of " + byName.keySet() + ", got '" + name + "'" + missing);
    }

    /** {@code sandbox.provider=docker}, when {@code sandbox-docker} is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.sandbox.docker.DockerSandboxProvider")
    static class DockerConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "dockerSandboxProviderFactory")
        SandboxProviderFactory dockerSandboxProviderFactory() {
            return new DockerProviderFactory();
        }
    }

    /** {@code sandbox.provider=kubernetes}, when {@code sandbox-kubernetes} is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.sandbox.kubernetes.KubernetesSandboxProvider")
    static class KubernetesConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "kubernetesSandboxProviderFactory")
        SandboxProviderFactory kubernetesSandboxProviderFactory() {
            return new KubernetesProviderFactory();
        }
    }

    /** {@code sandbox.provider=remote}, when {@code sandbox-remote} is on the class path. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.sandbox.remote.RemoteSandboxProvider")
    static class RemoteConfiguration {
        @Bean
        @ConditionalOnMissingBean(name = "remoteSandboxProviderFactory")
        SandboxProviderFactory remoteSandboxProviderFactory() {
            return new RemoteProviderFactory();
        }
    }
}
