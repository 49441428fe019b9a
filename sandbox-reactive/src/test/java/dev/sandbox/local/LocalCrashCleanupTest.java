package dev.sandbox.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.implementation.process.ProcessLauncher;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A JVM killed with SIGKILL leaves its local sessions running; the next local provider ends them. */
class LocalCrashCleanupTest {

    @Test
    void theNextProviderEndsTheSessionsOfAKilledJvm(@TempDir Path dir) throws Exception {
        Path temp = Files.createDirectory(dir.resolve("work"));
        Path state = dir.resolve("state").resolve("local");
        String java = ProcessHandle.current().info().command().orElse("java");
        Process owner = new ProcessBuilder(
                        java,
                        "--enable-native-access=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        CrashingOwner.class.getName(),
                        temp.toString(),
                        state.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        List<Long> pids = new ArrayList<>();
        Path workdir = null;
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(owner.getInputStream(), StandardCharsets.UTF_8))) {
            // bounded: the reader ends when the child exits, and the child's own waits are bounded
            CompletableFuture<Void> ready = new CompletableFuture<>();
            List<String> lines = new ArrayList<>();
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    for (String line; (line = out.readLine()) != null; ) {
                        synchronized (lines) {
                            lines.add(line);
                        }
                        if (line.equals("ready")) {
                            ready.complete(null);
                        }
                    }
                    ready.completeExceptionally(new IllegalStateException("the child ended early: " + lines));
                } catch (Exception e) {
                    ready.completeExceptionally(e);
                }
            });
            ready.get(60, TimeUnit.SECONDS);
            synchronized (lines) {
                for (String line : lines) {
                    if (line.startsWith("pid ")) {
                        pids.add(Long.parseLong(line.substring(4)));
                    } else if (line.startsWith("workdir ")) {
                        workdir = Path.of(line.substring(8));
                    }
                }
            }
            assertThat(pids).hasSize(2);
            assertThat(workdir).isDirectory();
            for (long pid : pids) {
                assertThat(ProcessHandle.of(pid))
                        .as("process %d before the kill", pid)
                        .isPresent();
            }
            owner.destroyForcibly(); // SIGKILL: no shutdown hook, no close
            assertThat(owner.waitFor(30, TimeUnit.SECONDS)).isTrue();
            for (long pid : pids) {
                assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive))
                        .as("process %d outlives the killed JVM (the leak being fixed)", pid)
                        .contains(true);
            }
            try (Stream<Path> records = Files.list(state)) {
                assertThat(records.count())
                        .as("records of the dead JVM's sessions")
                        .isEqualTo(1);
            }

            try (LocalSandboxProvider next = LocalSandboxProvider.create(ProcessLauncher.best(), temp, state)) {
                assertThat(next.reaped().get(30, TimeUnit.SECONDS))
                        .as("sessions cleaned up")
                        .isEqualTo(1);
            }
            for (long pid : pids) {
                Optional<ProcessHandle> p = ProcessHandle.of(pid);
                if (p.isPresent()) {
                    // a killed orphan is reaped by init in its own time: wait for that, bounded
                    p.get().onExit().get(10, TimeUnit.SECONDS);
                }
                assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                        .as("process %d after the cleanup", pid)
                        .isFalse();
            }
            assertThat(workdir).doesNotExist();
            try (Stream<Path> records = Files.list(state)) {
                assertThat(records.toList()).as("records left").isEmpty();
            }
        } finally {
            owner.destroyForcibly();
            for (long pid : pids) { // when the cleanup failed: the processes and their children
                ProcessHandle.of(pid).ifPresent(p -> {
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                });
            }
        }
    }
}
