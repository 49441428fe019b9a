package dev.sandbox.samples.webflux;

import dev.sandbox.SandboxProvider;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /api/isolation}: which provider runs the commands and what isolation that gives, for the page to show:
 *
 * <pre>{@code
 * {"provider":"docker","description":"Docker (gVisor)","isolated":true}
 * }</pre>
 */
@RestController
public class IsolationController {
    private final Isolation isolation;

    /**
     * Creates the controller.
     *
     * @param provider the provider the starter configured from {@code sandbox.*}
     */
    public IsolationController(SandboxProvider provider) {
        this.isolation = Isolation.of(provider);
    }

    /**
     * The isolation in effect.
     *
     * @return the provider's name, a description and whether the commands are isolated from this server
     */
    @GetMapping(path = "/api/isolation", produces = MediaType.APPLICATION_JSON_VALUE)
    public Isolation isolation() {
        return isolation;
    }
}
