package dev.sandbox.samples.webflux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * A Spring Boot WebFlux application that runs a command in a sandbox and streams its output to a web page as it is
 * written. {@code GET /} serves the page; {@code POST /api/exec} answers with server-sent events.
 *
 * <pre>{@code
 * java -jar samples/target/webflux-demo.jar --server.port=8080
 * curl -N -H 'Accept: text/event-stream' -H 'Content-Type: application/json' \
 *      -d '{"command":["sh","-c","echo hi; echo oops >&2; exit 3"]}' http://127.0.0.1:8080/api/exec
 * }</pre>
 *
 * <p>The server listens on {@code 127.0.0.1} unless {@code --server.address} says otherwise: with the local
 * provider, whoever reaches the page runs commands as the JVM's user. It answers only requests addressed to its own
 * names, so that a web page cannot reach it through DNS rebinding (see {@link RebindingGuard}); {@code
 * --sandbox.demo.allowed-hosts} adds names.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class WebfluxDemoApplication {

    /** Created by Spring; start the application with {@link #main}. */
    public WebfluxDemoApplication() {}

    /**
     * Starts the application.
     *
     * @param args Spring Boot arguments, such as {@code --server.port=8080} or {@code --sandbox.provider=local}
     */
    public static void main(String[] args) {
        SpringApplication.run(WebfluxDemoApplication.class, args);
    }
}
