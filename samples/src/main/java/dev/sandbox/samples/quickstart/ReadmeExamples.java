package dev.sandbox.samples.quickstart;

import dev.sandbox.EgressDecision;
import dev.sandbox.EgressRule;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.PortForward;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import dev.sandbox.kubernetes.KubernetesSettings;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import dev.sandbox.server.SandboxServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * The README's examples that are not quick starts of their own, each a whole program between its tags: the README
 * shows each region with the imports it needs, and a test checks that what it shows is this code, compiles on its own
 * and names nothing it does not define.
 *
 * <pre>{@code
 * java -cp samples/target/sandbox.jar dev.sandbox.samples.quickstart.ReadmeExamples retry
 * }</pre>
 */
public final class ReadmeExamples {
    private ReadmeExamples() {}

    /**
     * The Docker provider: a session on gVisor with limits, a command, a snapshot, the end of the session, and the
     * snapshot's deletion.
     *
     * @throws Exception when Docker cannot run it
     */
    public static void docker() throws Exception {
        // tag::docker[]
        // a public image, pulled on first use (the default pull policy, IF_NOT_PRESENT)
        try (DockerSandboxProvider docker = DockerSandboxProvider.create(DockerSettings.of("python:3.12-slim")
                .withMemoryLimit(256L << 20)
                .withPidsLimit(128)
                .withRuntime(DockerSettings.Runtime.RUNSC))) {
            SandboxSession session = docker.create(SessionOptions.defaults()
                            .withLabel("team", "search")
                            .withLifetime(Duration.ofMinutes(30)))
                    .block(Duration.ofSeconds(30));
            session.exec(ExecOptions.shell("for i in 1 2 3; do echo $i; sleep 1; done"))
                    .doOnNext(System.out::println)
                    .blockLast(Duration.ofSeconds(10));
            String snapshot = docker.snapshot(session.id()).block(Duration.ofMinutes(1));
            System.out.println("saved as " + snapshot);
            session.destroy().block(Duration.ofSeconds(30));
            // a snapshot is an image that outlives its session: delete it once nothing restores from it
            docker.deleteSnapshot(snapshot).block(Duration.ofSeconds(30));
        }
        // end::docker[]
    }

    /**
     * The Kubernetes provider: pods in a namespace, the agent image from your registry.
     *
     * @throws Exception when no cluster answers
     */
    public static void kubernetes() throws Exception {
        // tag::kubernetes[]
        try (KubernetesSandboxProvider kubernetes = KubernetesSandboxProvider.builder()
                .namespace("sandboxes") // default: the kubeconfig context's namespace
                .settings(KubernetesSettings.of("python:3.12-slim")
                        .withAgentImage("registry.example.com/dev.sandbox/sandbox-agent:0.1.0")
                        .withRuntimeClassName("gvisor")
                        .withMemoryLimit(512L << 20))
                .build()) {
            String answer = kubernetes
                    .withSession(
                            SessionOptions.defaults().withLabel("team", "search"),
                            session -> session.run(ExecOptions.of("python3", "-c", "print(6 * 7)")))
                    .map(ExecResult::stdout)
                    .blockLast(Duration.ofMinutes(2));
            System.out.println(answer); // 42
        }
        // end::kubernetes[]
    }

    /**
     * Retrying only what may pass.
     *
     * @throws Exception never, for the local provider
     */
    public static void retry() throws Exception {
        // tag::retry[]
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            SessionOptions options = SessionOptions.defaults().withLabel("job", "nightly");
            SandboxSession session = provider.create(options)
                    .retryWhen(Retry.backoff(3, Duration.ofMillis(200))
                            .filter(e -> e instanceof SandboxException s && s.isRetryable()))
                    .block(Duration.ofSeconds(30));
            System.out.println("session " + session.id());
        }
        // end::retry[]
    }

    /**
     * A session's resource use while a program holds 100 MiB: four samples half a second apart.
     *
     * @throws Exception never, for the local provider
     */
    public static void stats() throws Exception {
        // tag::stats[]
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            SandboxSession session = provider.create(SessionOptions.defaults()).block(Duration.ofSeconds(30));
            session.start(ExecOptions.shell("(head -c 104857600 /dev/zero; sleep 5) | tail"))
                    .block(Duration.ofSeconds(30));
            session.stats(Duration.ofMillis(500))
                    .take(4)
                    .doOnNext(s -> System.out.printf(
                            "cpu %d ms, memory %d MiB (peak %d MiB), %d processes%n",
                            s.cpuTime().toMillis(), s.memoryBytes() >> 20, s.memoryPeakBytes() >> 20, s.pids()))
                    .blockLast(Duration.ofSeconds(30));
            session.destroy().block(Duration.ofSeconds(30));
        }
        // end::stats[]
    }

    /**
     * Closing a provider without blocking the calling thread.
     *
     * @throws Exception never
     */
    public static void closeAsync() throws Exception {
        // tag::close-async[]
        Logger log = LoggerFactory.getLogger("sandbox-example");
        LocalSandboxProvider provider = LocalSandboxProvider.create();
        provider.closeAsync()
                .timeout(Duration.ofSeconds(30))
                .subscribe(null, e -> log.warn("the provider did not close cleanly", e));
        // end::close-async[]
    }

    /**
     * A server over the local provider on port 7070, and the remote provider reaching it with the token in the file
     * {@code token}.
     *
     * @throws Exception when the token file cannot be read or the port is taken
     */
    public static void server() throws Exception {
        // tag::server[]
        char[] token = Files.readString(Path.of("token")).strip().toCharArray(); // the file `sandbox serve` reads
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server =
                        SandboxServer.builder(local).port(7070).token(token).start();
                RemoteSandboxProvider remote = RemoteSandboxProvider.builder()
                        .baseUrl(server.baseUrl())
                        .token(token)
                        .build()) {
            remote.withSession(SessionOptions.defaults(), s -> s.exec(ExecOptions.of("seq", "1", "3")))
                    .doOnNext(System.out::println)
                    .blockLast(Duration.ofSeconds(30));
        }
        // end::server[]
    }

    /**
     * A web server in a Docker sandbox without network, read from the host through a port forward.
     *
     * @throws Exception when Docker cannot run it
     */
    public static void ports() throws Exception {
        // tag::ports[]
        try (DockerSandboxProvider docker = DockerSandboxProvider.create(DockerSettings.of("busybox"))) {
            SandboxSession session = docker.create(SessionOptions.defaults()).block(Duration.ofSeconds(30));
            session.run(ExecOptions.shell("mkdir -p www && echo hello > www/index.html"))
                    .block(Duration.ofSeconds(10));
            session.start(ExecOptions.shell("exec httpd -f -p 127.0.0.1:8080 -h \"$PWD/www\""))
                    .block(Duration.ofSeconds(10));
            PortForward web = session.ports().forward(8080).block(Duration.ofSeconds(10));
            HttpRequest get = HttpRequest.newBuilder(URI.create("http://" + web.hostString() + "/index.html"))
                    .build();
            try (HttpClient http = HttpClient.newHttpClient()) {
                // a server that has not started yet answers nothing: the forward closes that connection
                String page = Mono.fromCallable(() -> http.send(get, HttpResponse.BodyHandlers.ofString())
                                .body())
                        .retryWhen(Retry.fixedDelay(50, Duration.ofMillis(100)))
                        .block(Duration.ofSeconds(10));
                System.out.println(page); // hello
            }
            session.destroy().block(Duration.ofSeconds(30)); // closes the forward too
        }
        // end::ports[]
    }

    /** Egress through the session's proxy to what an allowlist names, and the decisions it made. */
    static void egress() {
        // tag::egress[]
        NetworkPolicy policy = NetworkPolicy.allowlist(
                EgressRule.domain("pypi.org").ports(443),
                EgressRule.domain("*.pythonhosted.org").ports(443));
        try (DockerSandboxProvider docker = DockerSandboxProvider.create(DockerSettings.of("python:3.12-slim"))) {
            SandboxSession session =
                    docker.create(SessionOptions.defaults().withNetwork(policy)).block(Duration.ofSeconds(30));
            // pip finds the proxy in HTTPS_PROXY; the sandbox itself still has no network
            ExecResult pip = session.run(ExecOptions.shell("pip download --no-deps -d /tmp/wheels requests"))
                    .block(Duration.ofMinutes(2));
            System.out.println(pip.exitCode()); // 0
            ExecResult other = session.run(ExecOptions.shell(
                            "python -c \"import urllib.request as u; u.urlopen('http://example.com/')\""))
                    .block(Duration.ofSeconds(30));
            System.out.println(other.stderr()); // ... HTTP Error 403: Forbidden
            for (EgressDecision d :
                    session.network().report().block(Duration.ofSeconds(10)).decisions()) {
                System.out.println(d.host() + ":" + d.port() + " " + (d.allowed() ? "allowed by " : "denied: ")
                        + d.reason()); // example.com:80 denied: no rule allows example.com port 80 (...)
            }
            // new connections follow the new policy at once
            session.network()
                    .update(policy.withRule(EgressRule.domain("example.com").ports(80)))
                    .block(Duration.ofSeconds(10));
            session.destroy().block(Duration.ofSeconds(30)); // the proxy ends with the session
        }
        // end::egress[]
    }

    /**
     * Runs one example: {@code docker}, {@code retry}, {@code close-async}, {@code server}, {@code ports}, {@code egress}
     * or {@code stats}.
     *
     * @param args the example's name
     * @throws Exception what the example throws
     */
    public static void main(String[] args) throws Exception {
        switch (args.length == 0 ? "" : args[0]) {
            case "docker" -> docker();
            case "retry" -> retry();
            case "close-async" -> closeAsync();
            case "server" -> server();
            case "ports" -> ports();
            case "egress" -> egress();
            case "stats" -> stats();
            default -> System.err.println("usage: ReadmeExamples docker|retry|close-async|server|ports|egress|stats");
        }
    }
}
