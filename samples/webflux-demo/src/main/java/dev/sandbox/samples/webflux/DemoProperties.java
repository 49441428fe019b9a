package dev.sandbox.samples.webflux;

import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The web server's own settings, under the prefix {@code sandbox.demo}. Which provider runs the commands, and how, is
 * the starter's {@code sandbox.*} (see {@code dev.sandbox.spring.boot.autoconfigure.SandboxProperties}).
 *
 * <pre>{@code
 * sandbox.demo.allowed-hosts=devbox.lan,localhost:9000
 * sandbox.demo.exec-timeout=10m
 * }</pre>
 *
 * @param allowedHosts names the server answers to besides {@code localhost}, {@code 127.0.0.1} and {@code [::1]}:
 *     a host name or IP address ({@code [...]} around IPv6) is allowed on the port the server listens on, and a
 *     {@code name:port} on that port only, as the browser sees it through a tunnel or a port forward. Every other
 *     {@code Host}, and every {@code Origin} that is not {@code http://} or {@code https://} one of these, gets a 403;
 *     see {@link RebindingGuard}
 * @param execTimeout how long one command may run before it is killed (exit code 124)
 */
@ConfigurationProperties("sandbox.demo")
public record DemoProperties(
        @DefaultValue List<String> allowedHosts,
        @DefaultValue("10m") Duration execTimeout) {}
