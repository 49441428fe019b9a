package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.RequiresDocker;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A CLI or server JVM killed with SIGKILL runs no cleanup at all: its Docker sessions without a lifetime must still
 * end, about a lease after the last renewal, through the reaper.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DockerLeaseCliIT {
    private static final String LEASE = "3s";
    /** The lease, a reaper round, the removal and a margin for a loaded machine. */
    private static final Duration GONE_WITHIN = Duration.ofSeconds(20);

    private DockerClient docker;

    @TempDir
    Path tmp;

    @BeforeAll
    void connect() {
        DefaultDockerClientConfig config =
                DefaultDockerClientConfig.createDefaultConfigBuilder().build();
        docker = DockerClientImpl.getInstance(
                config,
                new ZerodepDockerHttpClient.Builder()
                        .dockerHost(config.getDockerHost())
                        .build());
    }

    @AfterAll
    void close() throws IOException {
        docker.close();
    }

    private Set<String> sessions() {
        Set<String> ids = new HashSet<>();
        docker.listContainersCmd()
                .withShowAll(true)
                .withLabelFilter(List.of("dev.sandbox.session"))
                .exec()
                .forEach(c -> ids.add(c.getLabels().get("dev.sandbox.session")));
        return ids;
    }

    private boolean goneWithin(String sessionId, Duration limit) throws InterruptedException {
        Instant until = Instant.now().plus(limit);
        while (Instant.now().isBefore(until)) {
            if (!sessions().contains(sessionId)) {
                return true;
            }
            Thread.sleep(250);
        }
        return !sessions().contains(sessionId);
    }

    @Test
    void aOneShotExecKilledWithSigkillLeavesNoContainerPastItsLease() throws Exception {
        Set<String> before = sessions();
        Process cli = new ProcessBuilder(JarCli.command(
                        "exec",
                        "--provider",
                        "docker",
                        "--pull",
                        "never",
                        "--container-lease",
                        LEASE,
                        "--",
                        "sleep",
                        "600"))
                .directory(tmp.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String session = null;
        try {
            Instant until = Instant.now().plusSeconds(60);
            while (session == null && Instant.now().isBefore(until) && cli.isAlive()) {
                Set<String> now = sessions();
                now.removeAll(before);
                session = now.stream().findFirst().orElse(null);
                Thread.sleep(100);
            }
            assertThat(session).as("the one-shot exec's session").isNotNull();
            // the command runs in it: the container is there for as long as the CLI lives
            Thread.sleep(1000);
            assertThat(cli.isAlive()).isTrue();
        } finally {
            cli.destroyForcibly(); // SIGKILL: no shutdown hook, no destroy
            assertThat(cli.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(goneWithin(session, GONE_WITHIN))
                .as("the killed CLI's container is removed once its lease runs out")
                .isTrue();
    }

    @Test
    void aServerKilledWithSigkillLeavesNoDockerSessionPastItsLease() throws Exception {
        Path tokenFile = tmp.resolve("token");
        String token = UUID.randomUUID().toString();
        JarCli.tokenFile(tokenFile, token);
        Process server = new ProcessBuilder(JarCli.command(
                        "serve",
                        "--provider",
                        "docker",
                        "--pull",
                        "never",
                        "--container-lease",
                        LEASE,
                        "--port",
                        "0",
                        "--token-file",
                        tokenFile.toString()))
                .directory(tmp.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String session;
        try {
            BufferedReader lines =
                    new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
            String first = lines.readLine();
            assertThat(first).as("serve's first line").contains("serving docker sessions on http://127.0.0.1:");
            String url = first.substring(first.indexOf("http://"));
            try (RemoteSandboxProvider client = RemoteSandboxProvider.builder()
                    .baseUrl(url)
                    .token(token.toCharArray())
                    .build()) {
                SandboxSession s = client.create(SessionOptions.defaults()).block(Duration.ofSeconds(60));
                session = s.id();
                assertThat(sessions()).contains(session);
            }
        } finally {
            server.destroyForcibly(); // SIGKILL
            assertThat(server.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(goneWithin(session, GONE_WITHIN))
                .as("the killed server's session is removed once its lease runs out")
                .isTrue();
    }
}
