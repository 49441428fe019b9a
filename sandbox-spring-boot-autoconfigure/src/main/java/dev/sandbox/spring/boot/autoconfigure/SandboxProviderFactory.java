package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;

/**
 * Makes the provider that {@code sandbox.provider} names. The starter registers one for {@code local}, one for {@code
 * docker} when {@code sandbox-docker} is on the class path, one for {@code kubernetes} when {@code sandbox-kubernetes}
 * is and one for {@code remote} when {@code sandbox-remote} is;
 * an application or a library adds a provider kind of its own by declaring a bean of this type.
 *
 * <pre>{@code
 * @Bean
 * SandboxProviderFactory firecrackerSandboxProviderFactory() {
 *     return new SandboxProviderFactory() {
 *         public String name() { return "firecracker"; }
 *         public SandboxProvider create(SandboxProperties properties) { return new MyFirecrackerProvider(); }
 *     };
 * }
 * }</pre>
 */
public interface SandboxProviderFactory {

    /**
     * The value of {@code sandbox.provider} that selects this factory.
     *
     * @return a name such as {@code local}
     */
    String name();

    /**
     * Makes the provider from the settings.
     *
     * @param properties the {@code sandbox.*} settings
     * @return a new provider, closed by the application context on shutdown
     * @throws InvalidArgumentException naming the property ({@code sandbox.docker.image}, ...) when a setting cannot be
     *     used
     */
    SandboxProvider create(SandboxProperties properties);
}
