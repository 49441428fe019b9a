package dev.sandbox.samples.webflux;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.local.LocalSandboxProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Creates the {@link SandboxProvider} named by {@code sandbox.provider}; the application context closes it on
 * shutdown, which ends every sandbox it still runs.
 *
 * <pre>{@code
 * java -jar webflux-demo.jar --sandbox.provider=local
 * }</pre>
 */
@Configuration(proxyBeanMethods = false)
public class SandboxConfiguration {

    /** Created by Spring. */
    public SandboxConfiguration() {}

    /**
     * The provider chosen by configuration.
     *
     * @param properties the demo's settings
     * @return the provider
     * @throws InvalidArgumentException when {@code sandbox.provider} names a provider this build does not have
     */
    @Bean(destroyMethod = "close")
    public SandboxProvider sandboxProvider(SandboxProperties properties) {
        String name = properties.provider().trim();
        if (name.equals(LocalSandboxProvider.NAME)) {
            return LocalSandboxProvider.create();
        }
        throw new InvalidArgumentException(
                "sandbox.provider",
                "sandbox.provider must be one of [" + LocalSandboxProvider.NAME + "], got '" + name + "'");
    }
}
