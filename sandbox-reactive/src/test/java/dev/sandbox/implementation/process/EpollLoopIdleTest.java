package dev.sandbox.implementation.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The native launcher's I/O thread runs only while it watches something: a thread left in {@code epoll_wait} is in
 * native code, and {@code System.exit} waits up to 300 ms for such threads, so every program that had used the local
 * provider paid that on exit. Once idle the thread ends, and the next command starts one again, also when commands
 * come and go at once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EpollLoopIdleTest {

    @Test
    void theLoopEndsWhenNothingIsWatchedAndTheNextCommandStartsItAgain() throws Exception {
        NativeLauncher launcher = NativeLauncher.create();
        assertThat(launcher.loopRunning()).as("before any command").isFalse();
        for (int round = 0; round < 3; round++) {
            assertThat(run(launcher, "echo round " + round).get(10, TimeUnit.SECONDS))
                    .isEqualTo("round " + round + "\n");
            awaitIdle(launcher);
        }
    }

    @Test
    void commandsThatComeAndGoAtOnceAllFinish() throws Exception {
        NativeLauncher launcher = NativeLauncher.create();
        // short commands started at random moments, so that some start while the loop is about to end
        List<CompletableFuture<String>> outputs = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            outputs.add(run(launcher, "echo " + i));
            Thread.sleep(ThreadLocalRandom.current().nextInt(3));
        }
        for (int i = 0; i < outputs.size(); i++) {
            assertThat(outputs.get(i).get(20, TimeUnit.SECONDS)).isEqualTo(i + "\n");
        }
        awaitIdle(launcher);
    }

    /** Waits (bounded) for the loop's thread to end, as it does once the last command's descriptors are closed. */
    private static void awaitIdle(NativeLauncher launcher) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (launcher.loopRunning() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(launcher.loopRunning())
                .as("the loop's thread after the last command ended")
                .isFalse();
    }

    /** Runs {@code sh -c script}; completes with its stdout once it has exited 0. */
    private static CompletableFuture<String> run(NativeLauncher launcher, String script) {
        SpawnedProcess p = launcher.spawn(new ProcessSpec(
                "/bin/sh",
                List.of("sh", "-c", script),
                System.getProperty("java.io.tmpdir"),
                Map.of("PATH", "/usr/bin:/bin"),
                null));
        CompletableFuture<String> done = new CompletableFuture<>();
        StringBuilder out = new StringBuilder();
        p.events()
                .subscribe(
                        e -> {
                            if (e instanceof RawEvent.Chunk c) {
                                out.append(new String(c.bytes(), StandardCharsets.UTF_8));
                            } else if (e instanceof RawEvent.Exited x) {
                                if (x.status() == 0 && !x.signaled()) {
                                    done.complete(out.toString());
                                } else {
                                    done.completeExceptionally(new AssertionError(script + " ended " + x));
                                }
                            }
                        },
                        done::completeExceptionally);
        return done;
    }
}
