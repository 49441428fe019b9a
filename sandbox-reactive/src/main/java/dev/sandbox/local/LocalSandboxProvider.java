package dev.sandbox.local;

import dev.sandbox.BackendException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.SandboxProvider;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionEndReason;
import dev.sandbox.SessionInfo;
import dev.sandbox.SessionNameInUseException;
import dev.sandbox.SessionNotFoundException;
import dev.sandbox.SessionOptions;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.implementation.ProviderCloser;
import dev.sandbox.implementation.local.LocalSession;
import dev.sandbox.implementation.local.LocalSessionState;
import dev.sandbox.implementation.local.LocalWatcher;
import dev.sandbox.implementation.local.SessionRecords;
import dev.sandbox.implementation.process.ProcessLauncher;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The embedded provider: sessions are directories on this host and commands are host processes. It needs nothing
 * installed, and it does <b>not</b> isolate anything: a command can read and write whatever the JVM's user can. Use
 * it for trusted code, development and tests; use the Docker provider for untrusted code.
 *
 * <p>Each session gets a fresh temporary workdir (deleted on destroy) unless {@link SessionOptions#workdir()} names
 * an existing directory (kept on destroy). Commands see a small base environment: {@code PATH} (the usual system
 * directories), {@code HOME} (the workdir) and {@code LANG=C.UTF-8}, then the session's env and secrets, then the
 * command's env. Each command runs in its own process group, so a kill reaches its children too.
 *
 * <p>Sessions live as long as this provider: {@link #close()} and {@link #closeAsync()} destroy every session it
 * still has. Each session also ends by itself at the end of its lifetime ({@link SessionOptions#DEFAULT_LIFETIME}
 * unless set) or after its idle timeout.
 *
 * <p>The files API of a local session is confined to its workdir: relative paths resolve against it, and a path that
 * leaves it (by {@code ..}, an absolute path elsewhere, or a symbolic link pointing out) is an {@link
 * InvalidArgumentException}. Commands themselves are not confined.
 *
 * <p><b>Symbolic links swapped in.</b> A command of the session can swap a file or directory for a symbolic link at
 * any moment, so no path is checked and then opened again: the session holds its workdir open, and every file
 * operation resolves the path from that descriptor with {@code openat2(2)} and {@code RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS} (on kernels before 5.6, one {@code openat(..., O_PATH | O_NOFOLLOW)} per component, links
 * read and followed by hand under the same rule), then acts on the last component relative to its directory's
 * descriptor ({@code statx}, {@code mkdirat}, {@code unlinkat}, {@code renameat2}; a write's temporary file is made
 * with {@code O_EXCL} beside the target and renamed over it with {@code renameat}). Symbolic links inside the workdir
 * still work as long as they are relative and stay inside; an absolute one is refused even if it names a file inside
 * the workdir. Reads, listings, stats, directory creation, removal, moves, watches, uploads and downloads all go this
 * way. Measured, it costs no more than the check-then-open it replaced (which resolved the real path on each call);
 * the fallback walk costs about a third more.
 *
 * <p><b>Hard links.</b> A command may hard-link a file from outside into the workdir when the file system lets it.
 * The files API does not read a regular file with more than one hard link ({@link
 * dev.sandbox.FileOperationException.Reason#PERMISSION_DENIED}, naming the path), nor a FIFO, socket or device. It
 * does write such a path: a write replaces the directory entry with a new file, and the other names keep their
 * content. Stat, list, move and remove act on the entry and are allowed.
 *
 * <p><b>A JVM that dies.</b> When the JVM dies without closing its provider (SIGKILL, a crash), its sessions'
 * processes would run on and their workdirs stay. Each session therefore writes a small record in a per-user state
 * directory ({@code $XDG_RUNTIME_DIR/dev.sandbox/local}, else {@code ${java.io.tmpdir}/dev.sandbox-<uid>/local}, mode
 * 0700; a directory that is not the user's alone disables the records, with a warning), naming its owner (the JVM's
 * pid and its start time, so a reused pid does not pass for it) and the workdir the provider made, and every command
 * carries {@code DEV_SANDBOX_SESSION=<session id>} in its environment. The next local provider of the same user, at
 * start and on a thread of its own, ends the sessions whose owner is gone: it kills every process whose environment
 * carries their marker (with its process group when it leads one), deletes the workdirs it made and the records, and
 * logs each at INFO. This never fails or delays the provider's creation. A process that rewrote its environment or
 * left the process group escapes it. {@code PR_SET_PDEATHSIG} is not used: it needs code between fork and exec,
 * which {@code posix_spawn} does not run, it fires when the spawning <em>thread</em> ends (a pooled thread ending
 * would kill live sessions), and it never reaches a daemonised grandchild.
 *
 * <pre>{@code
 * try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
 *     SandboxSession session = provider.create(SessionOptions.defaults()).block(Duration.ofSeconds(5));
 *     ExecResult result = session.run(ExecOptions.shell("echo hello")).block(Duration.ofSeconds(5));
 * }
 * }</pre>
 */
public final class LocalSandboxProvider implements SandboxProvider {
    /** The provider's name. */
    public static final String NAME = "local";

    /** The {@code PATH} every local command starts with. */
    public static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private static final Logger LOG = LoggerFactory.getLogger(LocalSandboxProvider.class);
    private static final AtomicBoolean WARNED = new AtomicBoolean();
    /** How long {@link #close()} waits for the sessions' processes to die and their workdirs to be deleted. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofMinutes(2);

    private final ProcessLauncher launcher;
    private final Path tempRoot;
    private final Map<String, LocalSessionState> sessions = new ConcurrentHashMap<>();
    /** Each name's holder: a session, or {@link #RESERVED} while the session that took it is being made. */
    private final Map<String, Object> names = new ConcurrentHashMap<>();

    private static final Object RESERVED = new Object();
    private final ProviderCloser closer = new ProviderCloser(NAME, this::release);
    private final LocalWatcher watcher = new LocalWatcher();
    private final SessionRecords records;
    private final CompletableFuture<Integer> reaped;

    private LocalSandboxProvider(ProcessLauncher launcher, Path tempRoot, Path stateDir) {
        this.launcher = launcher;
        this.tempRoot = tempRoot;
        this.records = new SessionRecords(stateDir);
        this.reaped = records.reapInBackground();
        if (WARNED.compareAndSet(false, true)) {
            LOG.warn("the local sandbox provider runs commands as host processes with no isolation;"
                    + " use the docker provider for untrusted code");
        }
    }

    /**
     * A provider with the best process launcher for this platform and workdirs under {@code java.io.tmpdir}.
     *
     * @return a new provider
     */
    public static LocalSandboxProvider create() {
        return new LocalSandboxProvider(
                ProcessLauncher.best(), Path.of(System.getProperty("java.io.tmpdir")), SessionRecords.defaultDir());
    }

    /**
     * A provider whose fresh session workdirs are made under {@code tempRoot}.
     *
     * @param tempRoot an existing directory
     * @return a new provider
     */
    public static LocalSandboxProvider create(Path tempRoot) {
        return new LocalSandboxProvider(
                ProcessLauncher.best(), Objects.requireNonNull(tempRoot, "tempRoot"), SessionRecords.defaultDir());
    }

    /** A provider with a chosen launcher; for tests of the portable fallback. */
    static LocalSandboxProvider create(ProcessLauncher launcher, Path tempRoot) {
        return new LocalSandboxProvider(launcher, tempRoot, SessionRecords.defaultDir());
    }

    /** A provider with its own state directory for the records of its sessions; for tests of the crash cleanup. */
    static LocalSandboxProvider create(ProcessLauncher launcher, Path tempRoot, Path stateDir) {
        return new LocalSandboxProvider(launcher, tempRoot, stateDir);
    }

    /** Completes once the start-up cleanup of crashed JVMs' sessions is over, with how many it cleaned up. */
    CompletableFuture<Integer> reaped() {
        return reaped;
    }

    /**
     * How this provider starts processes: {@code native-epoll} on Linux, {@code jdk-process} elsewhere.
     *
     * @return the launcher's name
     */
    public String processLauncher() {
        return launcher.name();
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Mono<SandboxSession> create(SessionOptions options) {
        return Mono.fromCallable(() -> {
                    closer.ensureOpen();
                    options.validate();
                    if (options.network().mode() != NetworkPolicy.Mode.NONE) {
                        // its commands use the host's network: a proxy could be offered, nothing could be confined
                        throw new UnsupportedFeatureException(
                                NAME,
                                "egress policies (its commands run on the host's"
                                        + " network, which it cannot confine)");
                    }
                    String name = options.name().orElse(null);
                    if (name != null) {
                        // the one atomic step that takes the name: a racing create finds it held
                        Object holder = names.putIfAbsent(name, RESERVED);
                        if (holder != null) {
                            throw new SessionNameInUseException(
                                    name, holder instanceof LocalSessionState s && s.endReason() != null);
                        }
                    }
                    try {
                        return make(options, name);
                    } catch (RuntimeException | Error e) {
                        if (name != null) {
                            names.remove(name, RESERVED);
                        }
                        throw e;
                    }
                })
                .subscribeOn(Schedulers.boundedElastic());
    }

    private SandboxSession make(SessionOptions options, @Nullable String name) {
        String id = "local-" + UUID.randomUUID();
        Path workdir;
        boolean owns;
        if (options.workdir().isPresent()) {
            workdir = Path.of(options.workdir().get());
            if (!Files.isDirectory(workdir)) {
                throw new InvalidArgumentException(
                        "workdir", "workdir must be an existing directory, got '" + workdir + "'");
            }
            owns = false;
        } else {
            try {
                workdir = Files.createTempDirectory(tempRoot, "sandbox-").toRealPath();
            } catch (IOException e) {
                throw new BackendException("cannot create a workdir under '" + tempRoot + "'", e);
            }
            owns = true;
        }
        Map<String, String> env = new LinkedHashMap<>();
        env.put("PATH", DEFAULT_PATH);
        env.put("HOME", workdir.toString());
        env.put("LANG", "C.UTF-8");
        env.putAll(options.env());
        env.putAll(options.secrets());
        LocalSessionState state =
                new LocalSessionState(id, workdir, owns, Map.copyOf(env), options.labels(), launcher, watcher, s -> {
                    sessions.remove(s.id, s);
                    records.remove(s.id);
                    if (s.name() != null) {
                        names.remove(s.name(), s); // free once the session is gone
                    }
                });
        state.pauses.autoResume(options.autoResume());
        records.write(id, owns ? workdir : null);
        if (name != null) {
            state.name(name);
            names.put(name, state);
        }
        sessions.put(id, state);
        if (closer.isClosed()) { // closed while this one was being made: the close may not have seen it
            state.destroy(SessionEndReason.PROVIDER_CLOSED);
            closer.ensureOpen();
        }
        state.timers.setLifetime(options.lifetime().orElse(null));
        options.idleTimeout().ifPresent(state.timers::setIdleTimeout);
        LOG.debug("created local session {} in {}", id, workdir);
        return new LocalSession(state);
    }

    @Override
    public Mono<SandboxSession> attach(String sessionId) {
        return Mono.fromCallable(() -> {
            closer.ensureOpen();
            LocalSessionState state = sessions.get(sessionId);
            if (state == null || state.endReason() != null) { // ended, or ending right now
                throw new SessionNotFoundException(sessionId);
            }
            return new LocalSession(state);
        });
    }

    /**
     * {@inheritDoc}
     *
     * <p>Names are this provider's own: another local provider (in this JVM or another) has its own.
     */
    @Override
    public Mono<SandboxSession> attachByName(String name) {
        return Mono.fromCallable(() -> {
            closer.ensureOpen();
            SessionOptions.validateName(name);
            if (!(names.get(name) instanceof LocalSessionState state) || state.endReason() != null) {
                throw SessionNotFoundException.named(name); // none, still being made, or ending
            }
            return new LocalSession(state);
        });
    }

    @Override
    public Flux<SessionInfo> list(Map<String, String> labels) {
        return Flux.defer(() -> {
            closer.ensureOpen();
            return Flux.fromIterable(sessions.values())
                    .filter(s -> s.endReason() == null && s.labels().entrySet().containsAll(labels.entrySet()))
                    .map(LocalSessionState::info);
        });
    }

    /**
     * Destroys every session this provider still has and stops its file watcher. Blocks while processes are killed
     * and workdirs deleted, for at most two minutes (then {@link dev.sandbox.SandboxTimeoutException}; the rest goes
     * on in the background). See {@link #closeAsync()}.
     */
    @Override
    public void close() {
        closer.close(CLOSE_TIMEOUT);
    }

    /**
     * Destroys every session this provider still has, killing their processes and deleting the workdirs it made,
     * and stops its file watcher, all on {@link Schedulers#boundedElastic()}: nothing blocks the subscribing thread.
     * Sessions are destroyed in parallel; one that cannot be destroyed is logged and the rest go on. Handles of its
     * sessions then fail with {@link dev.sandbox.SessionClosedException} ({@code PROVIDER_CLOSED}).
     *
     * @return completes once every session is gone and the watcher stopped
     */
    @Override
    public Mono<Void> closeAsync() {
        return closer.closeAsync();
    }

    private Mono<Void> release() {
        return Flux.fromIterable(List.copyOf(sessions.values()))
                .flatMap(state -> Mono.fromRunnable(() -> state.destroy(SessionEndReason.PROVIDER_CLOSED))
                        .subscribeOn(Schedulers.boundedElastic())
                        .onErrorResume(e -> {
                            LOG.warn("could not destroy local session {}: {}", state.id, e.toString());
                            return Mono.empty();
                        }))
                .then(Mono.<Void>fromRunnable(watcher::close).subscribeOn(Schedulers.boundedElastic()));
    }
}
