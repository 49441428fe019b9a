package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.ProviderClosedException;
import dev.sandbox.SessionOptions;
import dev.sandbox.implementation.docker.DockerErrors;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * Whether a retry can help, for daemons that are not there or not well: no Docker daemon is needed. A fake daemon is a
 * reactor-netty server on loopback that answers every request with one status, as a daemon behind a proxy or in
 * trouble would.
 */
class DockerUnreachableDaemonTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private DockerSandboxProvider provider(String dockerHost) {
        return DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .dockerHost(dockerHost)
                .sweepInterval(null)
                .build();
    }

    @Test
    void aSocketWhereNoDaemonListensIsRetryable() {
        String host = "unix://" + tmp.resolve("no-daemon.sock");
        try (DockerSandboxProvider docker = provider(host)) {
            assertThatThrownBy(() -> docker.create(SessionOptions.defaults()).block(WAIT))
                    .isInstanceOfSatisfying(BackendException.class, e -> {
                        assertThat(e.isRetryable()).as("a daemon may come up").isTrue();
                        assertThat(e).hasMessageContaining("not reachable").hasMessageContaining(host);
                    });
            assertThatThrownBy(() -> docker.list(Map.of()).collectList().block(WAIT))
                    .isInstanceOfSatisfying(
                            BackendException.class,
                            e -> assertThat(e.isRetryable()).isTrue());
            assertThatThrownBy(() -> docker.attach("docker-0011223344556677").block(WAIT))
                    .isInstanceOfSatisfying(
                            BackendException.class,
                            e -> assertThat(e.isRetryable()).isTrue());
        }
    }

    @Test
    void anUnreachableDaemonIsNamedInAUsersWordsWithWhatToCheck() throws Exception {
        String socket = "unix://" + tmp.resolve("no-daemon.sock");
        try (DockerSandboxProvider docker = provider(socket)) {
            assertThatThrownBy(() -> docker.create(SessionOptions.defaults()).block(WAIT))
                    .isInstanceOf(BackendException.class)
                    .hasMessageContaining("the daemon at " + socket + " is not reachable (no such socket)")
                    .hasMessageContaining("DOCKER_HOST")
                    .satisfies(DockerUnreachableDaemonTest::noClassNames);
        }
        // a bound socket that does not listen: connections to its port are refused
        try (java.net.Socket reserved = new java.net.Socket()) {
            reserved.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            String tcp = "tcp://127.0.0.1:" + reserved.getLocalPort();
            try (DockerSandboxProvider docker = provider(tcp)) {
                assertThatThrownBy(
                                () -> docker.create(SessionOptions.defaults()).block(WAIT))
                        .isInstanceOf(BackendException.class)
                        .hasMessageContaining("the daemon at " + tcp + " is not reachable (connection refused)")
                        .hasMessageContaining("DOCKER_HOST")
                        .satisfies(DockerUnreachableDaemonTest::noClassNames);
            }
        }
    }

    /** The message is for a person: no Java or library class names. */
    static void noClassNames(Throwable e) {
        assertThat(e.getMessage())
                .doesNotContainPattern("[a-z]+\\.[a-z]+\\.[A-Za-z.$]*(Exception|Error)")
                .doesNotContain("dockerjava")
                .doesNotContain("io.netty");
    }

    @Test
    void aDaemonAnswering503IsRetryableAnd500IsNot() {
        AtomicInteger status = new AtomicInteger(503);
        DisposableServer daemon = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle((req, res) -> res.status(HttpResponseStatus.valueOf(status.get()))
                        .header("Content-Type", "application/json")
                        .sendString(Mono.just("{\"message\":\"the daemon is busy restarting\"}")))
                .bindNow();
        try (DockerSandboxProvider docker = provider("tcp://127.0.0.1:" + daemon.port())) {
            assertThatThrownBy(() -> docker.create(SessionOptions.defaults()).block(WAIT))
                    .isInstanceOfSatisfying(BackendException.class, e -> {
                        assertThat(e.isRetryable()).isTrue();
                        assertThat(e).hasMessageContaining("HTTP 503").hasMessageContaining("busy restarting");
                    });
            status.set(500);
            assertThatThrownBy(() -> docker.create(SessionOptions.defaults()).block(WAIT))
                    .isInstanceOfSatisfying(BackendException.class, e -> {
                        assertThat(e.isRetryable())
                                .as("a daemon's 500 says what it could not do")
                                .isFalse();
                        assertThat(e).hasMessageContaining("HTTP 500");
                    });
        } finally {
            daemon.disposeNow();
        }
    }

    @Test
    void daemonStatusesMapToRetryableOrNot() {
        assertThat(DockerErrors.retryableStatus(429)).isTrue();
        assertThat(DockerErrors.retryableStatus(502)).isTrue();
        assertThat(DockerErrors.retryableStatus(503)).isTrue();
        assertThat(DockerErrors.retryableStatus(504)).isTrue();
        assertThat(DockerErrors.retryableStatus(400)).isFalse();
        assertThat(DockerErrors.retryableStatus(404)).isFalse();
        assertThat(DockerErrors.retryableStatus(409)).isFalse();
        assertThat(DockerErrors.retryableStatus(500)).isFalse();
        assertThat(DockerErrors.execStart("docker-1", 0, "the daemon closed the connection before answering"))
                .isInstanceOfSatisfying(
                        BackendException.class, e -> assertThat(e.isRetryable()).isTrue());
        assertThat(DockerErrors.execStart("docker-1", -1, "the daemon answered with 'garbage'"))
                .isInstanceOfSatisfying(
                        BackendException.class, e -> assertThat(e.isRetryable()).isFalse());
    }

    @Test
    void closeAsyncFromAnEventLoopDoesNotBlockAndAClosedProviderRefusesWork() {
        DockerSandboxProvider docker = provider("unix://" + tmp.resolve("no-daemon.sock"));
        AtomicBoolean onEventLoop = new AtomicBoolean();
        Mono.delay(Duration.ofMillis(1))
                .flatMap(x -> {
                    onEventLoop.set(Schedulers.isInNonBlockingThread());
                    return docker.closeAsync();
                })
                .block(WAIT);
        assertThat(onEventLoop).isTrue();
        assertThatThrownBy(() -> docker.create(SessionOptions.defaults()).block(WAIT))
                .isInstanceOfSatisfying(ProviderClosedException.class, e -> {
                    assertThat(e.provider()).isEqualTo("docker");
                    assertThat(e.isRetryable()).isFalse();
                });
        docker.closeAsync().block(WAIT);
        docker.close();
    }
}
