package dev.sandbox.spring.boot.autoconfigure.readme;

// tag::starter[]
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SessionOptions;
import dev.sandbox.blocking.SandboxClient;
import dev.sandbox.spring.boot.autoconfigure.SandboxClientFactory;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Flux;

@Service
public class Grader {
    private final SandboxProvider sandboxes; // sandbox.provider=local|docker|remote chooses it
    private final SandboxClientFactory clients; // blocking clients over the same provider

    public Grader(SandboxProvider sandboxes, SandboxClientFactory clients) {
        this.sandboxes = sandboxes;
        this.clients = clients;
    }

    /** Reactive: the output as it is written, in a session destroyed when the stream ends. */
    public Flux<ExecEvent> stream(String script) {
        return sandboxes.withSession(SessionOptions.defaults(), session -> session.exec(ExecOptions.shell(script)));
    }

    /** Blocking: one session for a few calls, destroyed by close(). */
    public String grade(String script) {
        try (SandboxClient client = clients.create()) {
            client.files().write("answer.sh", script.getBytes());
            ExecResult result = client.process().run(ExecOptions.of("sh", "answer.sh"));
            return result.exitCode() == 0 ? "passed: " + result.stdout().strip() : "failed: " + result.stderr();
        }
    }
}
// end::starter[]
