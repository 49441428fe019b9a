package dev.sandbox.implementation.local;

import dev.sandbox.BackendException;
import dev.sandbox.ExecOptions;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionStatus;
import dev.sandbox.implementation.Version;
import dev.sandbox.implementation.exec.ExecRunner;
import dev.sandbox.implementation.ports.PortForwards;
import dev.sandbox.implementation.process.ProcessLauncher;
import dev.sandbox.implementation.process.ProcessSpec;
import dev.sandbox.implementation.process.SpawnedProcess;
import dev.sandbox.implementation.session.SessionTimers;
import dev.sandbox.local.LocalSandboxProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/** One local session, shared by every handle attached to it. Internal: not part of the public API. */
public final class LocalSessionState {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(LocalSessionState.class);

    /** The session's id. */
    public final String id;

    final Path workdir;
    final boolean ownsWorkdir;
    final Map<String, String> env;
    private volatile Map<String, String> labels;

    /**
     * Read with the first session (a create may block), not by the first status, which a caller may ask for on a
     * non-blocking thread (a pool's liveness check does): {@link Version} reads a resource.
     */
    private static final String SDK_VERSION = Version.get();

    private volatile String name;

    final Instant createdAt = Instant.now();
    final ExecRunner runner = new ExecRunner();
    final SessionRoot root;
    private final ProcessLauncher launcher;
    private final LocalWatcher watcher;
    private final Consumer<LocalSessionState> onEnd;
    private final long createdNanos = System.nanoTime();
    private volatile SessionEndReason endReason;
    /** Set while {@link #destroy} kills the processes, so that a caller who sees them die also sees why. */
    private volatile SessionEndReason ending;

    /** Lifetime and idle timeout. */
    public final SessionTimers timers;

    /** Pause and resume: {@code SIGSTOP} and {@code SIGCONT} of the session's marked processes. */
    public final dev.sandbox.implementation.session.PauseControl pauses;

    private final LocalFreezer freezer;

    /** The session's port forwards: to the host's loopback, where its commands' servers listen. */
    final PortForwards ports;

    private final Object destroyLock = new Object();

    /**
     * The state of a new session.
     *
     * @param id the session's id
     * @param workdir its workdir, as a real path
     * @param ownsWorkdir whether destroying the session deletes the workdir
     * @param env the environment every command starts with
     * @param labels its labels
     * @param launcher starts its processes
     * @param watcher the provider's file watcher
     * @param onEnd called once the session has ended
     */
    public LocalSessionState(
            String id,
            Path workdir,
            boolean ownsWorkdir,
            Map<String, String> env,
            Map<String, String> labels,
            ProcessLauncher launcher,
            LocalWatcher watcher,
            Consumer<LocalSessionState> onEnd) {
        this(id, workdir, ownsWorkdir, env, labels, launcher, watcher, onEnd, SessionTimers.Time.SYSTEM);
    }

    /**
     * Creates the state of a new session whose lifetime and idle timeout run on the given time (a test's virtual
     * time); otherwise as {@link #LocalSessionState(String, Path, boolean, Map, Map, ProcessLauncher, LocalWatcher,
     * Consumer)}.
     *
     * @param id the session id
     * @param workdir its working directory
     * @param ownsWorkdir whether destroying the session deletes the workdir
     * @param env the environment every command starts with
     * @param labels its labels
     * @param launcher starts its processes
     * @param watcher the provider's file watcher
     * @param onEnd called once the session has ended
     * @param time where the session's timers run and what they read the time from
     */
    public LocalSessionState(
            String id,
            Path workdir,
            boolean ownsWorkdir,
            Map<String, String> env,
            Map<String, String> labels,
            ProcessLauncher launcher,
            LocalWatcher watcher,
            Consumer<LocalSessionState> onEnd,
            SessionTimers.Time time) {
        this.id = id;
        this.workdir = workdir;
        this.ownsWorkdir = ownsWorkdir;
        this.env = env;
        this.labels = Map.copyOf(labels);
        this.launcher = launcher;
        this.watcher = watcher;
        this.onEnd = onEnd;
        this.root = new SessionRoot(workdir);
        // a command or a file operation under way is activity: the idle timeout must not end the session under it;
        this.ports = PortForwards.onHost("session " + id);
        // an open port connection is activity too, as a running command is
        this.timers = new SessionTimers(
                id, () -> runner.runningCount() + root.inFlight() + ports.openConnections(), this::destroy, time);
        root.onRelease(timers::touch);
        this.freezer = new LocalFreezer(id);
        this.pauses = new dev.sandbox.implementation.session.PauseControl(
                id,
                timers,
                () -> Mono.fromRunnable(freezer::freeze)
                        .subscribeOn(Schedulers.boundedElastic())
                        .then(),
                // signals only: it does not block, and a call that resumes the session runs on at once
                () -> Mono.fromRunnable(freezer::thaw));
    }

    /**
     * What a call must wait for before it reaches the session: {@code null} while it runs, its resume while it is
     * paused (with auto-resume), else a {@link dev.sandbox.SessionPausedException}.
     *
     * @return {@code null}, or what to wait for
     */
    Mono<Void> beforeCall() {
        return pauses.beforeCall();
    }

    /**
     * For a guard that cannot wait (a file operation, a port connection): fails when the session is paused without
     * auto-resume, else starts its resume (its processes are signalled at once when no pause is under way).
     */
    void wake() {
        if (!pauses.paused()) {
            return;
        }
        pauses.checkCallable();
        pauses.resume().subscribe(null, e -> LOG.warn("cannot resume local session {}: {}", id, e.toString()));
    }

    boolean destroyed() {
        return endReason != null;
    }

    /**
     * Why the session ended, or is ending right now.
     *
     * @return the reason, or {@code null} while it runs
     */
    public SessionEndReason endReason() {
        SessionEndReason ended = endReason;
        return ended != null ? ended : ending;
    }

    void touch() {
        timers.touch();
    }

    LocalFiles files(Runnable guard) {
        return new LocalFiles(root, guard, watcher);
    }

    /**
     * The session as {@link dev.sandbox.SandboxProvider#list} shows it.
     *
     * @return its info
     */
    public SessionInfo info() {
        return new SessionInfo(id, LocalSandboxProvider.NAME, labels, createdAt, java.util.Optional.ofNullable(name));
    }

    /**
     * The session's name.
     *
     * @return the name, or {@code null} for an unnamed session
     */
    public String name() {
        return name;
    }

    /**
     * Names the session; called by its provider once, before any handle sees it.
     *
     * @param name the name it holds
     */
    public void name(String name) {
        this.name = name;
    }

    /**
     * The session's labels, those added since its create included.
     *
     * @return an unmodifiable map
     */
    public Map<String, String> labels() {
        return labels;
    }

    /**
     * Adds labels (checked by the caller), replacing the values of keys it has.
     *
     * @param added the labels to add
     */
    public synchronized void addLabels(Map<String, String> added) {
        labels = dev.sandbox.implementation.session.LabelUpdate.merged(labels, added);
    }

    SessionStatus status() {
        return new SessionStatus(
                id,
                endReason != null ? "closed" : pauses.paused() ? "paused" : "running",
                SDK_VERSION,
                (System.nanoTime() - createdNanos) / 1_000_000,
                timers.lastActivity(),
                runner.runningCount(),
                runner.ptysRunning(),
                runner.ptysAttached(),
                LocalSandboxProvider.NAME,
                launcher.name(),
                timers.expiresAt(),
                timers.idleTimeout(),
                endReason);
    }

    /** Starts a process for validated options; runs on a thread that may block briefly. */
    SpawnedProcess spawn(ExecOptions options) {
        return launcher.spawn(spec(options));
    }

    private ProcessSpec spec(ExecOptions options) {
        Map<String, String> merged = new LinkedHashMap<>(env);
        merged.putAll(options.env());
        merged.put(SessionRecords.MARKER, id); // last: what finds the session's processes after a crash
        String cwd = options.cwd().orElse(workdir.toString());
        if (!Files.isDirectory(Path.of(cwd))) {
            throw new ProcessLaunchException("working directory does not exist: '" + cwd + "'", null);
        }
        String program = resolve(options.argv().get(0), merged.get("PATH"), cwd);
        return new ProcessSpec(
                program, options.argv(), cwd, merged, options.stdin().orElse(null));
    }

    /** Starts a process on a terminal for validated options; runs on a thread that may block briefly. */
    SpawnedProcess spawnPty(ExecOptions options, int cols, int rows) {
        ProcessSpec spec = spec(options);
        return launcher.spawnPty(spec, cols, rows);
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

    /**
     * Kills every process and deletes the workdir if the session made it. Blocking. When deleting fails the session
     * stays usable so the call can be retried.
     *
     * @param reason why it ends
     */
    public void destroy(SessionEndReason reason) {
        // a lock of its own: deleting a large workdir must not hold up the timer and status, which take 'this'
        synchronized (destroyLock) {
            if (endReason != null) {
                return;
            }
            ending = reason;
            try {
                runner.killAll(() -> new dev.sandbox.SessionClosedException(id, reason));
                // and what its commands left behind them (`server &` in a shell that exited): they carry its marker
                int left = SessionRecords.killMarked(java.util.Set.of(id)).getOrDefault(id, 0);
                if (left > 0) {
                    LOG.debug("session {}: killed {} processes its commands left running", id, left);
                }
                if (ownsWorkdir) {
                    deleteTree(workdir);
                }
            } catch (RuntimeException | Error e) {
                ending = null; // the handle stays open so the destroy can be retried
                throw e;
            }
            endReason = reason;
        }
        freezer.thaw(); // the pidfds of a paused session's processes, killed above
        root.close();
        timers.stop();
        ports.closeAll().subscribe(); // off this thread; the handle that destroys waits for it (LocalSession)
        onEnd.accept(this);
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
        // retryable: the destroy left the session open, and what kept a file is most often a process still dying
        throw new BackendException("cannot delete workdir '" + root + "'", last, true);
    }
}
