package dev.sandbox.samples.webflux;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Creates the {@link SandboxProvider} named by {@code sandbox.provider} ({@code local}, {@code docker} or {@code
 * remote}, with the settings under {@code sandbox.docker} and {@code sandbox.remote}), and the {@link Isolation} the
 * page shows. The application context closes the provider on shutdown, which ends every sandbox it still runs. A
 * setting that cannot be used stops the application with an {@link InvalidArgumentException} naming the property.
 *
 * <pre>{@code
 * java -jar webflux-demo.jar --sandbox.provider=docker --sandbox.docker.runtime=runsc
 * }</pre>
 */
@Configuration(proxyBeanMethods = false)
public class SandboxConfiguration {
    private static final List<String> PROVIDERS =
            List.of(LocalSandboxProvider.NAME, DockerSandboxProvider.NAME, RemoteSandboxProvider.NAME);

    /** Created by Spring. */
    public SandboxConfiguration() {}

    /**
     * What separates the commands from this machine, as the page tells its user.
     *
     * <pre>{@code
     * new Isolation("docker", "Docker (gVisor)", true)
     * }</pre>
     *
     * @param provider the provider's name: {@code local}, {@code docker} or {@code remote}
     * @param description a short text: {@code local processes: no isolation}, {@code Docker (runc)}, {@code Docker
     *     (gVisor)} or {@code remote server http://...}
     * @param isolated whether the commands run apart from this server's own user and files
     */
    public record Isolation(String provider, String description, boolean isolated) {}

    /**
     * The isolation of the chosen provider and settings.
     *
     * @param properties the demo's settings
     * @return what the page shows
     * @throws InvalidArgumentException when a setting cannot be used
     */
    @Bean
    public Isolation isolation(SandboxProperties properties) {
        return switch (providerName(properties)) {
            case LocalSandboxProvider.NAME ->
                new Isolation(LocalSandboxProvider.NAME, "local processes: no isolation", false);
            case DockerSandboxProvider.NAME -> {
                DockerSettings.Runtime runtime =
                        dockerSettings(properties.docker()).runtime();
                yield new Isolation(
                        DockerSandboxProvider.NAME,
                        runtime == DockerSettings.Runtime.RUNSC ? "Docker (gVisor)" : "Docker (runc)",
                        true);
            }
            default ->
                new Isolation(
                        RemoteSandboxProvider.NAME,
                        "remote server " + remoteUrl(properties.remote()) + ": its provider decides",
                        true);
        };
    }

    /**
     * The provider chosen by configuration.
     *
     * @param properties the demo's settings
     * @return the provider
     * @throws InvalidArgumentException when {@code sandbox.provider} names a provider this build does not have, or a
     *     setting of the chosen one cannot be used
     */
    @Bean(destroyMethod = "close")
    public SandboxProvider sandboxProvider(SandboxProperties properties) {
        return switch (providerName(properties)) {
            case LocalSandboxProvider.NAME -> LocalSandboxProvider.create();
            case DockerSandboxProvider.NAME -> DockerSandboxProvider.create(dockerSettings(properties.docker()));
            default -> {
                SandboxProperties.Remote remote = properties.remote();
                yield RemoteSandboxProvider.builder()
                        .baseUrl(remoteUrl(remote))
                        .token(token(remote.tokenFile()))
                        .build();
            }
        };
    }

    private static String providerName(SandboxProperties properties) {
        String name = properties.provider().trim();
        if (!PROVIDERS.contains(name)) {
            throw new InvalidArgumentException(
                    "sandbox.provider", "sandbox.provider must be one of " + PROVIDERS + ", got '" + name + "'");
        }
        return name;
    }

    private static DockerSettings dockerSettings(SandboxProperties.Docker docker) {
        DockerSettings settings = DockerSettings.of(docker.image())
                .withRuntime(word(DockerSettings.Runtime.class, "sandbox.docker.runtime", docker.runtime()))
                .withPullPolicy(word(DockerSettings.PullPolicy.class, "sandbox.docker.pull", docker.pull()));
        try {
            return settings.validate();
        } catch (InvalidArgumentException e) {
            throw new InvalidArgumentException("sandbox.docker." + e.field(), e.getMessage());
        }
    }

    /** An enum constant from its lower-case, dashed name: {@code runsc}, {@code if-not-present}. */
    private static <E extends Enum<E>> E word(Class<E> type, String property, String text) {
        String name = text.trim().toUpperCase(Locale.ROOT).replace('-', '_');
        for (E e : type.getEnumConstants()) {
            if (e.name().equals(name)) {
                return e;
            }
        }
        List<String> allowed = Arrays.stream(type.getEnumConstants())
                .map(e -> e.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                .toList();
        throw new InvalidArgumentException(property, property + " must be one of " + allowed + ", got '" + text + "'");
    }

    private static String remoteUrl(SandboxProperties.Remote remote) {
        if (remote.url() == null || remote.url().isBlank()) {
            throw new InvalidArgumentException(
                    "sandbox.remote.url",
                    "sandbox.provider=remote needs sandbox.remote.url, such as http://127.0.0.1:7070");
        }
        return remote.url().trim();
    }

    /** The token in the file: its content without surrounding whitespace. */
    private static char[] token(Path file) {
        if (file == null) {
            throw new InvalidArgumentException(
                    "sandbox.remote.token-file", "sandbox.provider=remote needs sandbox.remote.token-file");
        }
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new InvalidArgumentException(
                    "sandbox.remote.token-file", "cannot read sandbox.remote.token-file '" + file + "': " + e);
        }
        CharBuffer text = StandardCharsets.UTF_8.decode(ByteBuffer.wrap(bytes));
        Arrays.fill(bytes, (byte) 0);
        String token = text.toString().strip();
        Arrays.fill(text.array(), '\0');
        if (token.isEmpty()) {
            throw new InvalidArgumentException(
                    "sandbox.remote.token-file", "sandbox.remote.token-file '" + file + "' is empty");
        }
        return token.toCharArray();
    }
}
