package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox.BackendException;
import dev.sandbox.ExecOptions;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.ProviderClosedException;
import dev.sandbox.SandboxException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.util.retry.Retry;

/**
 * The remote provider says whether a retry can help, from real servers on loopback: a sandbox server, one that was
 * stopped, and a plain reactor-netty server answering as a proxy or a server in trouble would. It closes without
 * blocking.
 */
class RemoteRetryAndCloseTest {
    private static final char[] TOKEN = "retry-token-0123456789".toCharArray();
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path tmp;

    private static RemoteSandboxProvider remote(String baseUrl) {
        return RemoteSandboxProvider.builder()
                .baseUrl(baseUrl)
                .token(TOKEN)
                .connectTimeout(Duration.ofSeconds(2))
                .reconnect(1, Duration.ofMillis(20))
                .build();
    }

    private static BackendException backendFailure(Mono<?> call) {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        assertThatThrownBy(() -> call.doOnError(failure::set).block(WAIT)).isInstanceOf(BackendException.class);
        return (BackendException) failure.get();
    }

    /**
     * A program that cancels a command and closes its provider at once (a CLI on Ctrl-C) gets the command killed:
     * the cancel's release reaches the server before the connections close; without it the server would keep the
     * command for a client that might resume its stream.
     */
    @Test
    void aCommandCancelledJustBeforeTheProviderClosesIsKilled() throws Exception {
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server =
                        SandboxServer.builder(local).port(0).token(TOKEN).start()) {
            RemoteSandboxProvider remote = remote(server.baseUrl());
            SandboxSession session = remote.create(SessionOptions.defaults()).block(WAIT);
            Path pidFile = tmp.resolve("pid");
            // silent after its first line: the server learns of the cancel from the release alone
            String started = session.exec(
                            ExecOptions.shell("echo $$ > '" + pidFile + "'; echo started; exec sleep 300"))
                    .map(Object::toString)
                    .blockFirst(WAIT); // takes the first event and cancels the stream
            assertThat(started).contains("started");
            long pid = Long.parseLong(java.nio.file.Files.readString(pidFile).strip());
            remote.close();

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                    .as("the cancelled command after the provider closed")
                    .isFalse();
        }
    }

    @Test
    void aStoppedServerIsRetryable() {
        try (LocalSandboxProvider local = LocalSandboxProvider.create()) {
            SandboxServer server =
                    SandboxServer.builder(local).port(0).token(TOKEN).start();
            try (RemoteSandboxProvider remote = remote(server.baseUrl())) {
                remote.create(SessionOptions.defaults())
                        .flatMap(SandboxSession::destroy)
                        .block(WAIT);
                server.close();
                BackendException e = backendFailure(remote.create(SessionOptions.defaults()));
                assertThat(e.isRetryable()).as("the server may come back").isTrue();
                assertThat(e).hasMessageContaining(server.baseUrl());
            } finally {
                server.close();
            }
        }
    }

    @Test
    void a503IsRetryableAndNamesTheStatusWhileTheServersOwnFlagWins() {
        AtomicReference<HttpResponseStatus> status = new AtomicReference<>(HttpResponseStatus.SERVICE_UNAVAILABLE);
        AtomicReference<String> body = new AtomicReference<>("<html>Service Unavailable</html>");
        DisposableServer proxy = HttpServer.create()
                .host("127.0.0.1")
                .port(0)
                .handle((req, res) -> req.receive()
                        .then()
                        .then(res.status(status.get())
                                .header("Content-Type", body.get().startsWith("{") ? "application/json" : "text/html")
                                .sendString(Mono.just(body.get()))
                                .then()))
                .bindNow();
        try (RemoteSandboxProvider remote = remote("http://127.0.0.1:" + proxy.port())) {
            // a proxy's error page: judged by its status
            BackendException unavailable = backendFailure(remote.create(SessionOptions.defaults()));
            assertThat(unavailable.isRetryable()).isTrue();
            assertThat(unavailable).hasMessageContaining("HTTP 503");

            status.set(HttpResponseStatus.TOO_MANY_REQUESTS);
            assertThat(backendFailure(remote.attach("s-1")).isRetryable()).isTrue();

            // an error object without the flag (an older server): judged by its status too
            status.set(HttpResponseStatus.SERVICE_UNAVAILABLE);
            body.set("{\"error\":{\"type\":\"ShuttingDown\",\"message\":\"the server is shutting down\"}}");
            BackendException shuttingDown = backendFailure(remote.create(SessionOptions.defaults()));
            assertThat(shuttingDown.isRetryable()).isTrue();
            assertThat(shuttingDown).hasMessageContaining("503").hasMessageContaining("ShuttingDown");

            // the server's own flag wins over the status
            status.set(HttpResponseStatus.BAD_GATEWAY);
            body.set("{\"error\":{\"type\":\"BackendException\",\"message\":\"image gone\",\"retryable\":false}}");
            assertThat(backendFailure(remote.create(SessionOptions.defaults())).isRetryable())
                    .isFalse();
            status.set(HttpResponseStatus.INTERNAL_SERVER_ERROR);
            body.set("{\"error\":{\"type\":\"BackendException\",\"message\":\"busy\",\"retryable\":true}}");
            assertThat(backendFailure(remote.create(SessionOptions.defaults())).isRetryable())
                    .isTrue();

            status.set(HttpResponseStatus.NOT_FOUND);
            body.set("{\"error\":{\"type\":\"SessionNotFoundException\",\"message\":\"session not found: s-1\","
                    + "\"sessionId\":\"s-1\",\"retryable\":false}}");
            assertThatThrownBy(() -> remote.attach("s-1").block(WAIT))
                    .isInstanceOfSatisfying(
                            SessionNotFoundException.class,
                            e -> assertThat(e.isRetryable()).isFalse());
        } finally {
            proxy.disposeNow();
        }
    }

    @Test
    void theServerSaysWhatIsRetryableAndTheClientKeepsIt() throws Exception {
        // a server over a Docker provider whose daemon is not there: its backend failure is passing
        try (DockerSandboxProvider docker = DockerSandboxProvider.builder()
                        .settings(DockerSettings.of("sandbox-test:busybox"))
                        .dockerHost("unix://" + tmp.resolve("no-daemon.sock"))
                        .sweepInterval(null)
                        .build();
                SandboxServer server =
                        SandboxServer.builder(docker).port(0).token(TOKEN).start();
                RemoteSandboxProvider remote = remote(server.baseUrl())) {
            JsonNode answer = post(server.baseUrl() + "/v1/sessions", "{}");
            assertThat(answer.path("error").path("type").asText()).isEqualTo("BackendException");
            assertThat(answer.path("error").path("retryable").asBoolean()).isTrue();
            BackendException e = backendFailure(remote.create(SessionOptions.defaults()));
            assertThat(e.isRetryable()).isTrue();
            assertThat(e).hasMessageContaining("not reachable");
        }
        // a server over the local provider: its lasting failures are not
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server = SandboxServer.builder(local)
                        .port(0)
                        .token(TOKEN)
                        .maxSessions(1)
                        .start();
                RemoteSandboxProvider remote = remote(server.baseUrl())) {
            JsonNode missing = post(server.baseUrl() + "/v1/sessions/nope/run", "{\"argv\":[\"true\"]}")
                    .path("error");
            assertThat(missing.path("type").asText()).isEqualTo("SessionNotFoundException");
            assertThat(missing.path("retryable").isBoolean()).isTrue();
            assertThat(missing.path("retryable").booleanValue()).isFalse();
            assertThatThrownBy(() -> remote.attach("nope").block(WAIT))
                    .isInstanceOfSatisfying(
                            SessionNotFoundException.class,
                            x -> assertThat(x.isRetryable()).isFalse());
            SandboxSession s = remote.create(SessionOptions.defaults()).block(WAIT);
            assertThatThrownBy(
                            () -> s.run(ExecOptions.of("no-such-program-here")).block(WAIT))
                    .isInstanceOfSatisfying(
                            ProcessLaunchException.class,
                            x -> assertThat(x.isRetryable()).isFalse());
            // too many sessions (429) passes once one ends
            BackendException tooMany = backendFailure(remote.create(SessionOptions.defaults()));
            assertThat(tooMany.isRetryable()).isTrue();
            assertThat(tooMany).hasMessageContaining("429").hasMessageContaining("TooManySessions");
            s.destroy().block(WAIT);
            remote.create(SessionOptions.defaults())
                    .flatMap(SandboxSession::destroy)
                    .block(WAIT);
        }
    }

    private static JsonNode post(String url, String body) throws Exception {
        try (HttpClient http = HttpClient.newHttpClient()) {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .header("Authorization", "Bearer " + new String(TOKEN))
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(r.body());
        }
    }

    @Test
    void closeAsyncFromAnEventLoopLeavesTheSessionsOnTheServerAndRefusesWork() {
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server =
                        SandboxServer.builder(local).port(0).token(TOKEN).start()) {
            RemoteSandboxProvider remote = remote(server.baseUrl());
            SandboxSession s = remote.create(SessionOptions.defaults()).block(WAIT);
            AtomicBoolean onEventLoop = new AtomicBoolean();

            // subscribed on a parallel thread, where BlockHound fails any blocking call
            Mono.delay(Duration.ofMillis(1))
                    .flatMap(x -> {
                        onEventLoop.set(Schedulers.isInNonBlockingThread());
                        return remote.closeAsync();
                    })
                    .block(WAIT);

            assertThat(onEventLoop).isTrue();
            assertThatThrownBy(() -> remote.create(SessionOptions.defaults()).block(WAIT))
                    .isInstanceOfSatisfying(ProviderClosedException.class, e -> {
                        assertThat(e.provider()).isEqualTo("remote");
                        assertThat(e.isRetryable()).isFalse();
                    });
            assertThatThrownBy(() -> s.run(ExecOptions.of("true")).block(WAIT))
                    .isInstanceOf(ProviderClosedException.class);
            assertThat(local.list(Map.of()).map(SessionInfo::id).collectList().block(WAIT))
                    .as("sessions stay on the server")
                    .contains(s.id());
            remote.closeAsync().block(WAIT); // idempotent
            remote.close();

            try (RemoteSandboxProvider again = remote(server.baseUrl())) {
                again.attach(s.id()).flatMap(SandboxSession::destroy).block(WAIT);
            }
        }
    }

    @Test
    void retryingOnlyWhatMayPassReachesAServerThatComesUp() {
        try (LocalSandboxProvider local = LocalSandboxProvider.create()) {
            AtomicReference<SandboxServer> server = new AtomicReference<>();
            int port;
            try (ServerSocket probe = new ServerSocket(0)) {
                port = probe.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            try (RemoteSandboxProvider remote = remote("http://127.0.0.1:" + port)) {
                Schedulers.boundedElastic()
                        .schedule(
                                () -> server.set(SandboxServer.builder(local)
                                        .port(port)
                                        .token(TOKEN)
                                        .start()),
                                300,
                                TimeUnit.MILLISECONDS);
                SandboxSession s = remote.create(SessionOptions.defaults())
                        .retryWhen(Retry.backoff(10, Duration.ofMillis(100))
                                .filter(e -> e instanceof SandboxException x && x.isRetryable()))
                        .block(WAIT);
                s.destroy().block(WAIT);
            } finally {
                if (server.get() != null) {
                    server.get().close();
                }
            }
        }
    }
}
