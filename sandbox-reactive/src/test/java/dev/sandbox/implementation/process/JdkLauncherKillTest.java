package dev.sandbox.implementation.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A kill through the portable launcher ends the whole tree of a command that keeps forking: no child forked while the
 * kill runs survives to hold the command's output pipe open (which kept its stream from ever ending).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JdkLauncherKillTest {

    @Test
    void aKillLeavesNoChildOfAForkingCommandAlive() throws Exception {
        for (int run = 0; run < 5; run++) {
            SpawnedProcess p = ProcessLauncher.jdk()
                    .spawn(new ProcessSpec(
                            "/bin/sh",
                            List.of("sh", "-c", "echo go; while :; do sleep 30 & done"),
                            System.getProperty("java.io.tmpdir"),
                            Map.of("PATH", "/usr/bin:/bin"),
                            null));
            CompletableFuture<Void> go = new CompletableFuture<>();
            CompletableFuture<RawEvent.Exited> end = new CompletableFuture<>();
            StringBuilder out = new StringBuilder();
            p.events()
                    .subscribe(
                            e -> {
                                if (e instanceof RawEvent.Chunk c) {
                                    out.append(new String(c.bytes(), StandardCharsets.UTF_8));
                                    if (out.indexOf("go") >= 0) {
                                        go.complete(null);
                                    }
                                } else if (e instanceof RawEvent.Exited x) {
                                    end.complete(x);
                                }
                            },
                            end::completeExceptionally);
            go.get(10, TimeUnit.SECONDS);
            p.kill();
            // the stream ends only once every holder of the output pipe is gone: a sleep that escaped keeps it 30 s
            RawEvent.Exited exited = end.get(Duration.ofSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
            assertThat(exited.signaled()).as("run %d", run).isTrue();
            assertThat(exited.status()).isEqualTo(9);
        }
    }
}
