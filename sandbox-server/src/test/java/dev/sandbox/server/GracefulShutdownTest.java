package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/** Stopping the server: requests in flight finish, streams end within the timeout, its sessions are destroyed. */
class GracefulShutdownTest {
    private static final char[] TOKEN = "shutdown-token-0123456789".toCharArray();
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void stopLetsRequestsFinishThenEndsStreamsAndDestroysItsSessions() throws Exception {
        try (LocalSandboxProvider local = LocalSandboxProvider.create()) {
            SandboxServer server =
                    SandboxServer.builder(local).port(0).token(TOKEN).start();
            RemoteSandboxProvider remote = RemoteSandboxProvider.builder()
                    .baseUrl(server.baseUrl())
                    .token(TOKEN)
                    .reconnect(2, Duration.ofMillis(50))
                    .build();
            try {
                SandboxSession s = remote.create(SessionOptions.defaults()).block(WAIT);
                Path workdir = Path.of(
                        s.run(ExecOptions.of("pwd")).block(WAIT).stdout().trim());

                // a stream that would go on for a minute
                CopyOnWriteArrayList<ExecEvent> events = new CopyOnWriteArrayList<>();
                AtomicReference<Throwable> streamError = new AtomicReference<>();
                CompletableFuture<Void> streamEnded = new CompletableFuture<>();
                Disposable stream = s.exec(ExecOptions.shell("echo hi; sleep 60"))
                        .subscribe(
                                events::add,
                                e -> {
                                    streamError.set(e);
                                    streamEnded.complete(null);
                                },
                                () -> streamEnded.complete(null));
                Flux.interval(Duration.ofMillis(10))
                        .takeUntil(i -> !events.isEmpty())
                        .blockLast(WAIT);
                // a short request already running when the stop begins
                CompletableFuture<ExecResult> late =
                        s.run(ExecOptions.shell("sleep 0.7; echo late")).toFuture();
                Thread.sleep(200);

                long t0 = System.nanoTime();
                server.stop(Duration.ofSeconds(2));
                Duration took = Duration.ofNanos(System.nanoTime() - t0);

                assertThat(took).isLessThan(Duration.ofSeconds(15));
                assertThat(late.get(WAIT.toSeconds(), TimeUnit.SECONDS).stdout())
                        .as("a request in flight finishes")
                        .isEqualTo("late\n");
                streamEnded.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertThat(events).first().isEqualTo(new ExecEvent.Stdout("hi", 0, false, 3));
                assertThat(streamError.get()).isInstanceOf(BackendException.class);
                stream.dispose();
                assertThat(workdir).as("the server's session was destroyed").doesNotExist();
                assertThat(local.list(Map.of()).collectList().block(WAIT)).isEmpty();
                assertThatThrownBy(() -> remote.attach(s.id()).block(WAIT))
                        .as("the server no longer accepts connections")
                        .isInstanceOf(BackendException.class);
            } finally {
                remote.close();
                server.close(); // idempotent
            }
        }
    }
}
