package dev.sandbox.local;

import dev.sandbox.BackendException;
import dev.sandbox.ExecOptions;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionStatus;
import dev.sandbox.implementation.Version;
import dev.sandbox.implementation.exec.ExecRunner;
import dev.sandbox.implementation.process.ProcessLauncher;
import dev.sandbox.implementation.process.ProcessSpec;
import dev.sandbox.implementation.process.SpawnedProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;

/** One local session, shared by every handle attached to it. */
final class LocalSessionState {
    final String id;
    final Path workdir;
    final boolean ownsWorkdir;
    final Map<String, String> env;
    final Map<String, String> labels;
    final Instant createdAt = Instant.now();
    final ExecRunner runner = new ExecRunner();
    private final ProcessLauncher launcher;
    private final long createdNanos = System.nanoTime();
    private volatile Instant lastActivity = createdAt;
    private volatile boolean destroyed;
    private volatile boolean ending;

    LocalSessionState(
            String id,
            Path workdir,
            boolean ownsWorkdir,
            Map<String, String> env,
            Map<String, String> labels,
            ProcessLauncher launcher) {
        this.id = id;
        this.workdir = workdir;
        this.ownsWorkdir = ownsWorkdir;
        this.env = env;
        this.labels = Map.copyOf(labels);
        this.launcher = launcher;
    }

    boolean destroyed() {
        return destroyed;
    }

    /** Destroyed, or a destroy has been subscribed and not failed: no new handle may be given out. */
    boolean ending() {
        return ending || destroyed;
    }

    void ending(boolean on) {
        ending = on;
    }

    void touch() {
        lastActivity = Instant.now();
    }

    SessionInfo info() {
        return new SessionInfo(id, LocalSandboxProvider.NAME, labels, createdAt);
    }

    SessionStatus status(boolean handleClosed) {
        return new SessionStatus(
                id,
                handleClosed || destroyed ? "closed" : "running",
                Version.get(),
                (System.nanoTime() - createdNanos) / 1_000_000,
                lastActivity,
                runner.runningCount(),
                0,
                0,
                LocalSandboxProvider.NAME,
                launcher.name());
    }

    /** Starts a process for validated options; runs on a thread that may block briefly. */
    SpawnedProcess spawn(ExecOptions options) {
        Map<String, String> merged = new LinkedHashMap<>(env);
        merged.putAll(options.env());
        String cwd = options.cwd().orElse(workdir.toString());
        if (!Files.isDirectory(Path.of(cwd))) {
            throw new ProcessLaunchException("working directory does not exist: '" + cwd + "'", null);
        }
        String program = resolve(options.argv().get(0), merged.get("PATH"), cwd);
        return launcher.spawn(new ProcessSpec(
                program, options.argv(), cwd, merged, options.stdin().orElse(null)));
    }

    /** Finds a program the way a shell does: a name with a slash is a path, anything else is looked up on PATH. */
    static String resolve(String name, String path, String cwd) {
        if (name.indexOf('/') >= 0) {
            Path p = Path.of(cwd).resolve(name);
            if (!Files.isRegularFile(p)) {
                throw new ProcessLaunchException("program not found: '" + name + "'", null);
            }
            if (!Files.isExecutable(p)) {
                throw new ProcessLaunchException("program is not executable: '" + name + "'", null);
            }
            return p.toString();
        }
        if (path != null) {
            for (String dir : path.split(":")) {
                Path candidate = Path.of(cwd).resolve(dir.isEmpty() ? "." : dir).resolve(name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate.toString();
                }
            }
        }
        throw new ProcessLaunchException("program not found on PATH: '" + name + "' (PATH=" + path + ")", null);
    }

    /** Kills every process and deletes the workdir if the session made it. Blocking. */
    void destroy() {
        if (destroyed) {
            return;
        }
        runner.killAll();
        if (ownsWorkdir) {
            deleteTree(workdir);
        }
        destroyed = true;
    }

    private static void deleteTree(Path root) {
        IOException last = null;
        // a process killed a moment ago may still be creating files: a few tries
        for (int attempt = 0; attempt < 5; attempt++) {
            if (!Files.exists(root)) {
                return;
            }
            try (Stream<Path> walk = Files.walk(root)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                    try {
                        Files.deleteIfExists(p);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
                return;
            } catch (NoSuchFileException e) {
                return;
            } catch (UncheckedIOException e) {
                last = e.getCause();
            } catch (IOException e) {
                last = e;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new BackendException("cannot delete workdir '" + root + "'", last);
    }
}
