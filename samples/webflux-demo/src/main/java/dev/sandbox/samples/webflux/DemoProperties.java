package dev.sandbox.samples.webflux;

import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The web server's own settings, under the prefix {@code sandbox.demo}.
 *
 * <pre>{@code
 * sandbox.demo.allowed-hosts=devbox.lan,localhost:9000
 * }</pre>
 *
 * @param allowedHosts names the server answers to besides {@code localhost}, {@code 127.0.0.1} and {@code [::1]}:
 *     a host name or IP address ({@code [...]} around IPv6) is allowed on the port the server listens on, and a
 *     {@code name:port} on that port only, as the browser sees it through a tunnel or a port forward. Every other
 *     {@code Host}, and every {@code Origin} that is not {@code http://} or {@code https://} one of these, gets a 403;
 *     see {@link RebindingGuard}
 */
@ConfigurationProperties("sandbox.demo")
public record DemoProperties(@DefaultValue List<String> allowedHosts) {}
