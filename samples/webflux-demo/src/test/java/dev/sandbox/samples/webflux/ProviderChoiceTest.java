package dev.sandbox.samples.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.docker.RequiresDocker;
import dev.sandbox.kubernetes.RequiresKubernetes;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.server.SandboxServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The application on each provider {@code sandbox.provider} can choose: started on a loopback port as a user starts
 * it (command-line properties), asked which isolation is in effect ({@code GET /api/isolation}, what the page shows),
 * and made to run a command through its HTTP API, which must really run where the isolation says.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ProviderChoiceTest {
    private static final JsonMapper JSON = new JsonMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** A running application and its base URL. */
    private record App(ConfigurableApplicationContext context, String url) implements AutoCloseable {
        static App start(String... properties) {
            List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.main.banner-mode=off"));
            args.addAll(List.of(properties));
            ConfigurableApplicationContext context =
                    SpringApplication.run(WebfluxDemoApplication.class, args.toArray(String[]::new));
            String port = context.getEnvironment().getProperty("local.server.port");
            return new App(context, "http://127.0.0.1:" + port);
        }

        JsonNode isolation() throws Exception {
            HttpResponse<String> r = HTTP.send(
                    HttpRequest.newBuilder(URI.create(url + "/api/isolation"))
                            .header("Accept", "application/json")
                            .timeout(Duration.ofSeconds(30))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            return JSON.readTree(r.body());
        }

        /** Runs {@code sh -c line} through {@code POST /api/exec} and returns the event stream as text. */
        String exec(String line) throws Exception {
            String body = JSON.writeValueAsString(java.util.Map.of("command", List.of("sh", "-c", line)));
            HttpResponse<String> r = HTTP.send(
                    HttpRequest.newBuilder(URI.create(url + "/api/exec"))
                            .header("Content-Type", "application/json")
                            .header("Accept", "text/event-stream")
                            .timeout(Duration.ofSeconds(90))
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            return r.body();
        }

        @Override
        public void close() {
            context.close();
        }
    }

    @Test
    void localSaysItIsolatesNothingAndRunsOnThisMachine(@TempDir Path dir) throws Exception {
        try (App app = App.start("--sandbox.provider=local")) {
            JsonNode isolation = app.isolation();
            assertThat(isolation.get("provider").asString()).isEqualTo("local");
            assertThat(isolation.get("description").asString()).isEqualTo("local processes: no isolation");
            assertThat(isolation.get("isolated").asBoolean()).isFalse();

            // no isolation: the command writes a file of this machine
            Path marker = dir.resolve("written-by-the-command");
            String events = app.exec("echo local-ran > '" + marker + "'; echo done");
            assertThat(events)
                    .contains("event:stdout\ndata:{\"text\":\"done\"")
                    .contains("event:exit\ndata:{\"code\":0");
            assertThat(marker).hasContent("local-ran");
        }
    }

    @Test
    void remoteRunsOnTheServerItNames(@TempDir Path dir) throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, "webflux-remote-token-0123456789\n");
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server = SandboxServer.builder(local)
                        .port(0)
                        .token("webflux-remote-token-0123456789".toCharArray())
                        .start();
                App app = App.start(
                        "--sandbox.provider=remote",
                        "--sandbox.remote.url=" + server.baseUrl(),
                        "--sandbox.remote.token-file=" + token)) {
            JsonNode isolation = app.isolation();
            assertThat(isolation.get("provider").asString()).isEqualTo("remote");
            assertThat(isolation.get("description").asString()).contains(server.baseUrl());

            String events = app.exec("echo through-the-server");
            assertThat(events)
                    .contains("data:{\"text\":\"through-the-server\"")
                    .contains("event:exit\ndata:{\"code\":0");
        }
    }

    /** Kubernetes, on the cluster of KUBECONFIG: the command runs in a pod of the chosen namespace. */
    @Nested
    @RequiresKubernetes
    class OnKubernetes {
        @Test
        void kubernetesSaysItsNamespaceAndRunsInAPod() throws Exception {
            try (App app = App.start(
                    "--sandbox.provider=kubernetes",
                    "--sandbox.kubernetes.namespace=sandbox-test",
                    "--sandbox.kubernetes.image=sandbox-test:busybox",
                    "--sandbox.kubernetes.pull-policy=never")) {
                JsonNode isolation = app.isolation();
                assertThat(isolation.get("provider").asString()).isEqualTo("kubernetes");
                assertThat(isolation.get("description").asString())
                        .isEqualTo("Kubernetes pods in namespace sandbox-test");
                assertThat(isolation.get("isolated").asBoolean()).isTrue();

                // a session pod is named kube-<16 hex>, and its process 1 is the SDK's agent
                String events = app.exec("hostname; tr '\\0' ' ' < /proc/1/cmdline; echo");
                assertThat(events)
                        .containsPattern("data:\\{\"text\":\"kube-[0-9a-f]{16}\"")
                        .contains("data:{\"text\":\"/.dev-sandbox/")
                        .contains("event:exit\ndata:{\"code\":0");
            }
        }
    }

    /** Docker, on runc and on gVisor: the command runs in a container whose process 1 is the SDK's agent. */
    @Nested
    @RequiresDocker
    class OnDocker {
        @Test
        void dockerSaysDockerAndRunsInAContainer() throws Exception {
            try (App app = App.start(
                    "--sandbox.provider=docker",
                    "--sandbox.docker.image=sandbox-test:busybox",
                    "--sandbox.docker.pull=never")) {
                JsonNode isolation = app.isolation();
                assertThat(isolation.get("provider").asString()).isEqualTo("docker");
                assertThat(isolation.get("description").asString()).isEqualTo("Docker (runc)");
                assertThat(isolation.get("isolated").asBoolean()).isTrue();

                String events = app.exec("tr '\\0' ' ' < /proc/1/cmdline; echo");
                assertThat(events)
                        .contains("data:{\"text\":\"/.dev-sandbox/agent")
                        .contains("event:exit\ndata:{\"code\":0");
            }
        }

        @Test
        void gvisorSaysGvisorAndRunsUnderItsKernel() throws Exception {
            try (App app = App.start(
                    "--sandbox.provider=docker",
                    "--sandbox.docker.runtime=runsc",
                    "--sandbox.docker.image=sandbox-test:busybox",
                    "--sandbox.docker.pull=never")) {
                JsonNode isolation = app.isolation();
                assertThat(isolation.get("description").asString()).isEqualTo("Docker (gVisor)");
                assertThat(isolation.get("isolated").asBoolean()).isTrue();

                // gVisor's own kernel log; runc's containers may not read the host's (klogctl is refused)
                String events = app.exec("dmesg | head -1");
                assertThat(events).contains("Starting gVisor").contains("event:exit\ndata:{\"code\":0");
            }
        }
    }
}
