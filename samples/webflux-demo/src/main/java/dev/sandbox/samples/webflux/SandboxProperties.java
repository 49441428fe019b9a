package dev.sandbox.samples.webflux;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The demo's settings, under the prefix {@code sandbox}.
 *
 * <pre>{@code
 * sandbox.provider=local
 * sandbox.exec-timeout=10m
 * }</pre>
 *
 * @param provider which sandbox provider runs the commands; {@code local} (the default) runs them as host processes
 * @param execTimeout how long one command may run before it is killed (exit code 124)
 */
@ConfigurationProperties("sandbox")
public record SandboxProperties(
        @DefaultValue("local") String provider,
        @DefaultValue("10m") Duration execTimeout) {}
