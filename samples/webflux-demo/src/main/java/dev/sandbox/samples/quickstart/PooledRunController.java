package dev.sandbox.samples.quickstart;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.pool.Claim;
import dev.sandbox.pool.SandboxPool;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;

/**
 * A WebFlux handler that gives every request a warm sandbox from a {@link SandboxPool}, customised for the caller, and
 * streams the command's output lines back; the README's pool section shows it. Not part of the demo application (its
 * package is not scanned); {@code PooledRunControllerTest} runs it on a pool of the local provider.
 *
 * <pre>{@code
 * PooledRunController controller = new PooledRunController(pool);
 * controller.run("acme", "echo $TENANT").subscribe(System.out::println);
 * }</pre>
 */
// tag::pool[]
@RestController
public class PooledRunController {
    private final SandboxPool pool;

    /**
     * A handler on the application's pool.
     *
     * @param pool built once beside its provider
     */
    public PooledRunController(SandboxPool pool) {
        this.pool = pool;
    }

    /**
     * Runs a command in a sandbox of its own.
     *
     * @param tenant who asks
     * @param command what to run
     * @return the command's output lines
     */
    @PostMapping("/run")
    public Flux<String> run(@RequestParam String tenant, @RequestParam String command) {
        // a warm sandbox at once; given back (and destroyed) when the response ends or the client goes away
        return pool.withSession(
                        Claim.defaults().withEnv("TENANT", tenant), session -> session.exec(ExecOptions.shell(command)))
                .ofType(ExecEvent.Line.class)
                .map(ExecEvent.Line::text);
    }
}
// end::pool[]
