package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sandbox serve --pool 2} as a real process of the CLI (its main class on this test's class path) with a
 * temporary directory of its own, where the local provider makes each session's workdir: a client's plain create over
 * HTTP takes a warm session ({@code GET /pool} counts it, and no new workdir is made for it) labelled as asked, a
 * fresh one takes its place, the destroy removes the session and the pool replaces it, a create with a secret is cold,
 * and SIGTERM leaves no session's workdir behind.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ServePoolCliTest {
    private static final String TOKEN = "serve-pool-token-0123456789abcdef";
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    /** The session workdirs the local provider made in the server's temporary directory. */
    private static List<String> workdirs(Path tmp) throws IOException {
        try (Stream<Path> list = Files.list(tmp)) {
            return list.map(p -> p.getFileName().toString())
                    .filter(name -> name.startsWith("sandbox-") && !name.startsWith("sandbox-server-workdirs-"))
                    .sorted()
                    .toList();
        }
    }

    @Test
    void servePoolServesPlainCreatesFromWarmSessionsAndLeavesNothingAfterSigterm() throws Exception {
        Path tmp = Files.createDirectory(dir.resolve("tmp"));
        Path token = JarCli.tokenFile(dir.resolve("token"), TOKEN);
        List<String> command = McpCliTest.cli(
                "serve", "--port", "0", "--pool", "2", "--mcp-max-sessions", "0", "--token-file", token.toString());
        command.add(1, "-Djava.io.tmpdir=" + tmp);
        ServedPool serve = ServedPool.start(command, TOKEN, dir.resolve("stderr"));
        String url = serve.url();
        try {
            serve.await("two warm sessions", c -> c.get("warm").asInt() == 2);
            List<String> warm = workdirs(tmp);
            assertThat(warm).as("the warm sessions' workdirs").hasSize(2);

            try (RemoteSandboxProvider client = RemoteSandboxProvider.builder()
                    .baseUrl(url)
                    .token(TOKEN.toCharArray())
                    .build()) {
                SandboxSession s = client.create(SessionOptions.defaults()
                                .withEnv("TENANT", "acme")
                                .withLabel("tenant", "acme"))
                        .block(WAIT);
                String workdir =
                        s.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim();
                assertThat(warm)
                        .as("the session is one of the warm ones")
                        .contains(Path.of(workdir).getFileName().toString());
                assertThat(s.run(ExecOptions.shell("echo $TENANT")).block(WAIT).stdout())
                        .isEqualTo("acme\n");
                JsonNode taken = serve.counts();
                assertThat(taken.get("acquired").asInt()).isEqualTo(1);
                assertThat(taken.get("coldAcquires").asInt()).isZero();
                serve.await(
                        "refilled",
                        c -> c.get("warm").asInt() == 2 && c.get("inUse").asInt() == 1);
                assertThat(workdirs(tmp)).hasSize(3);
                assertThat(client.list(Map.of())
                                .map(SessionInfo::id)
                                .collectList()
                                .block(WAIT))
                        .containsExactly(s.id());

                assertThat(client.list(Map.of("tenant", "acme"))
                                .map(SessionInfo::id)
                                .collectList()
                                .block(WAIT))
                        .containsExactly(s.id());
                SandboxSession cold = client.create(SessionOptions.defaults().withSecret("KEY", "cold"))
                        .block(WAIT);
                assertThat(serve.counts().get("acquired").asInt())
                        .as("a secret: a cold create")
                        .isEqualTo(1);
                cold.destroy().block(WAIT);

                s.destroy().block(WAIT);
                assertThat(Path.of(workdir))
                        .as("the destroyed session's workdir")
                        .doesNotExist();
                serve.await(
                        "replaced",
                        c -> c.get("warm").asInt() == 2
                                && c.get("inUse").asInt() == 0
                                && c.get("destroying").asInt() == 0);
                assertThat(workdirs(tmp)).hasSize(2);
            }

            serve.stop(); // SIGTERM
            assertThat(workdirs(tmp))
                    .as("what serve left; stderr: %s", serve.err())
                    .isEmpty();
        } finally {
            serve.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
