package dev.sandbox.implementation.docker;

import dev.sandbox.BackendException;
import dev.sandbox.ExecOptions;
import dev.sandbox.SessionTerminatedException;
import dev.sandbox.implementation.process.RawEvent;
import dev.sandbox.implementation.process.SpawnedProcess;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * Runs commands in one session's container: creates execs (control plane), streams them (data plane), kills them
 * inside the container, and tells an out-of-memory kill from other exits.
 *
 * <p>Docker has no call to kill an exec. Each command gets a unique marker in its environment ({@value #MARKER}); a
 * kill is a second, short exec (as root) that finds every process carrying that marker in {@code /proc/PID/environ}
 * ({@code grep -z}, as environ entries end in NUL) and sends SIGKILL to it and to its process group (an exec's process leads its own group, so children that cleared
 * their environment go too).
 */
public final class ContainerExecutor {
    /** The environment variable that marks the processes of one command. */
    public static final String MARKER = "DEV_SANDBOX_EXEC";

    /** Where the keep-alive reads the session's current deadline and idle timeout (written by root, readable by the keep-alive whatever its user). */
    public static final String TIMERS_FILE = "/.dev-sandbox/timers";

    /**
     * The keep-alive command of a session container: {@code $1} deadline (epoch seconds; 0 means none), {@code $2}
     * idle timeout (seconds; 0 means none). Each round it first reads {@value #TIMERS_FILE} ({@code deadline idle
     * deadlineMillis idleMillis}, the last two for clients that attach later), which {@link #setTimers} rewrites when
     * the session's lifetime or idle timeout changes.
     *
     * <p>It never forks in its loop: a fork that fails (a container at its memory or pids limit) would end the shell
     * and with it the container. It waits with {@code read -t} on the container's stdin, a pipe that stays open and
     * empty (the container is created with an open stdin), and falls back to {@code sleep} only if that read returns
     * early. Time comes from {@code /proc/uptime} (centiseconds read as {@code 1cc - 100}: a sandbox's own uptime, as
     * gVisor gives, starts at 0, and {@code 0.08} must not become the invalid octal {@code 008}). Activity is any process in the container besides init and this
     * shell, or a new pid since the last round ({@code /proc/loadavg}'s last field, where the runtime fills it in).
     */
    public static final String KEEP_ALIVE = "deadline=$1; idle=$2; f=" + TIMERS_FILE + "; last=\n"
            + "trap 'exit 0' TERM INT\n"
            + "read u r < /proc/uptime; up0=${u%.*}; epoch0=$(date +%s); busyAt=$up0\n"
            + "while :; do\n"
            + "  if [ -r \"$f\" ]; then read deadline idle rest < \"$f\"; fi\n"
            + "  if [ \"$idle\" -gt 0 ]; then step=1; else step=2; fi\n"
            + "  read u r < /proc/uptime; s=${u%.*}; c=${u#*.}00; c=${c%${c#??}}; t0=$((s * 100 + 1$c - 100))\n"
            + "  read -t \"$step\" x\n"
            + "  read u r < /proc/uptime; now=${u%.*}; c=${u#*.}00; c=${c%${c#??}}; t1=$((now * 100 + 1$c - 100))\n"
            + "  if [ $((t1 - t0)) -lt $((step * 100 - 20)) ]; then sleep \"$step\"; fi\n"
            + "  if [ \"$deadline\" -gt 0 ] && [ $((epoch0 + now - up0)) -ge \"$deadline\" ]; then exit 0; fi\n"
            + "  if [ \"$idle\" -gt 0 ]; then\n"
            + "    busy=0\n"
            + "    read a b c d pid < /proc/loadavg\n"
            + "    if [ -n \"$last\" ] && [ \"$pid\" != \"$last\" ]; then busy=1; fi\n"
            + "    last=$pid\n"
            + "    for d in /proc/[0-9]*; do n=${d#/proc/}; if [ \"$n\" != 1 ] && [ \"$n\" != $$ ]; then busy=1; fi; done\n"
            + "    if [ \"$busy\" = 1 ]; then busyAt=$now; fi\n"
            + "    if [ $((now - busyAt)) -ge \"$idle\" ]; then exit 0; fi\n"
            + "  fi\n"
            + "done\n";

    /** Writes {@code $1..$4} to the timers file, atomically (root may write it, everyone may read it). */
    private static final String SET_TIMERS = "umask 022; mkdir -p /.dev-sandbox && printf '%s %s %s %s\\n' \"$@\""
            + " > /.dev-sandbox/timers.new && mv /.dev-sandbox/timers.new /.dev-sandbox/timers";

    /** Sends signal {@code $2} to every process whose environment carries {@code $1}, and to its process group. */
    private static final String SIGNAL = "for f in $(grep -l -z -x -F \"$1\" /proc/[0-9]*/environ 2>/dev/null); do\n"
            + "  p=${f#/proc/}; p=${p%/environ}\n"
            + "  [ \"$p\" = $$ ] && continue\n"
            + "  kill -\"$2\" -$p 2>/dev/null || kill -\"$2\" $p 2>/dev/null\n"
            + "done\n";

    /** Kills every process whose environment carries {@code $1}, and its process group; repeats while any is found. */
    private static final String KILL = "n=0\n"
            + "while [ $n -lt 20 ]; do\n"
            + "  found=\n"
            + "  for f in $(grep -l -z -x -F \"$1\" /proc/[0-9]*/environ 2>/dev/null); do\n"
            + "    p=${f#/proc/}; p=${p%/environ}\n"
            + "    [ \"$p\" = $$ ] && continue\n"
            + "    kill -9 -$p 2>/dev/null; kill -9 $p 2>/dev/null; found=1\n"
            + "  done\n"
            + "  [ -z \"$found\" ] && exit 0\n"
            + "  n=$((n + 1))\n"
            + "done\n";

    /** The last line of a helper's output: the helper ran to its end. */
    private static final String HELPER_DONE = "dev-sandbox-helper-done";

    /** Prints the container's out-of-memory kill counter (cgroup v2, then v1), then {@link #HELPER_DONE}. */
    private static final String OOM_COUNT = "cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control"
            + " 2>/dev/null | grep oom_kill; echo " + HELPER_DONE;

    private static final int MAX_INTERNAL_OUTPUT = 64 * 1024;

    /** How long an unexplained SIGKILL waits for a container whose helper exec failed to be seen stopped. */
    private static final Duration STOP_SETTLE = Duration.ofSeconds(3);

    private final DockerControl control;
    private final DockerDataPlane data;
    private final String sessionId;
    private final String containerId;
    private final boolean memoryLimited;
    private final AtomicLong oomKills;

    /**
     * Creates the executor of one session.
     *
     * @param control the control plane
     * @param data the data plane
     * @param sessionId the session
     * @param containerId its container
     * @param memoryLimited whether the container has a memory limit (only then are OOM kills checked)
     * @param oomKillsSoFar the container's OOM kill count when this executor was made
     */
    public ContainerExecutor(
            DockerControl control,
            DockerDataPlane data,
            String sessionId,
            String containerId,
            boolean memoryLimited,
            long oomKillsSoFar) {
        this.control = control;
        this.data = data;
        this.sessionId = sessionId;
        this.containerId = containerId;
        this.memoryLimited = memoryLimited;
        this.oomKills = new AtomicLong(oomKillsSoFar);
        this.archive = new ContainerArchive(data, sessionId, containerId);
        this.facts =
                blocking(this::inspectFacts).cache(f -> Duration.ofDays(3650), e -> Duration.ZERO, () -> Duration.ZERO);
    }

    private final ContainerArchive archive;
    private final Mono<Facts> facts;

    /** Why the container ended, once the daemon said it did (its events); {@code null} while it runs. */
    private volatile String terminatedCause;
    /** Emits once the container ended: every stream and helper of this container stops waiting then. */
    private final Sinks.One<Boolean> terminatedSignal = Sinks.one();
    /** Whether the daemon reported an out-of-memory kill in the container (an {@code oom} event). */
    private volatile boolean oomEventSeen;

    /**
     * Records that the container ended: every stream of it fails with {@link SessionTerminatedException} naming the
     * cause, and so do later checks. Only the first cause is kept.
     *
     * @param cause such as {@code its container is exited: it ran out of memory (...)}
     */
    void terminated(String cause) {
        if (terminatedCause == null) {
            terminatedCause = cause;
        }
        terminatedSignal.tryEmitValue(Boolean.TRUE);
    }

    /**
     * Why the container ended.
     *
     * @return the cause, or {@code null} while it is not known to have ended
     */
    String terminatedCause() {
        return terminatedCause;
    }

    /** Records that the daemon reported an out-of-memory kill in the container. */
    void oomEvent() {
        oomEventSeen = true;
    }

    /**
     * Whether the daemon reported an out-of-memory kill in the container since this executor was made.
     *
     * @return {@code true} after an {@code oom} event
     */
    boolean oomEventSeen() {
        return oomEventSeen;
    }

    /**
     * A stream of this container that ends with {@link SessionTerminatedException} as soon as the container is known to
     * have ended, whatever the stream itself still waits for (a stream of a dead gVisor sandbox may never end).
     *
     * @param body the stream
     * @param isEnd whether an item is the stream's last word (after it, the container's end changes nothing)
     * @param <T> the items
     * @return the stream, cut at the container's end
     */
    <T> Flux<T> untilTerminated(Flux<T> body, Predicate<T> isEnd) {
        return Flux.defer(() -> {
            AtomicBoolean ended = new AtomicBoolean();
            return body.takeUntilOther(terminatedSignal.asMono())
                    .doOnNext(item -> {
                        if (isEnd.test(item)) {
                            ended.set(true);
                        }
                    })
                    .concatWith(Flux.defer(() -> terminatedCause == null || ended.get()
                            ? Flux.empty()
                            : Flux.error(new SessionTerminatedException(sessionId, terminatedCause))))
                    // the container's end seen another way first (a refused helper exec): name its cause all the same
                    .onErrorResume(
                            e -> e instanceof SessionTerminatedException,
                            e -> checkRunning()
                                    .onErrorResume(x -> !(x instanceof SessionTerminatedException), x -> Mono.empty())
                                    .then(Mono.error(e)));
        });
    }

    DockerDataPlane data() {
        return data;
    }

    /**
     * The container's files through the daemon's archive API.
     *
     * @return the archive access of this container
     */
    public ContainerArchive archive() {
        return archive;
    }

    /**
     * What file operations need to know about the container, fixed at its creation.
     *
     * @param workdir the working directory commands start in, {@code /} when the image sets none
     * @param archiveSeesFiles whether the daemon's archive API sees the files the container's processes see: not
     *     under gVisor ({@code runsc}), whose sandbox keeps its own view of the root file system
     */
    public record Facts(String workdir, boolean archiveSeesFiles) {}

    /**
     * The container's facts, inspected once and then remembered.
     *
     * @return the facts
     */
    public Mono<Facts> facts() {
        return facts;
    }

    private Facts inspectFacts() {
        var c = control.inspectContainer(containerId);
        if (c == null) {
            throw new SessionTerminatedException(sessionId, "its container no longer exists");
        }
        String workdir = c.getConfig() == null ? null : c.getConfig().getWorkingDir();
        String runtime = c.getHostConfig() == null ? null : c.getHostConfig().getRuntime();
        return new Facts(
                workdir == null || workdir.isEmpty() ? "/" : workdir, runtime == null || !runtime.contains("runsc"));
    }

    /**
     * Sets the OOM kill count already seen, for a session this executor did not watch from its start.
     *
     * @param count the container's current count
     */
    public void oomKillsSeen(long count) {
        oomKills.set(count);
    }

    /**
     * Creates an exec for validated options; blocks for one control call.
     *
     * @param options what to run
     * @param secrets variables added to the command's environment under the options' own
     * @return the process, started when its events are subscribed
     */
    public SpawnedProcess spawn(ExecOptions options, Map<String, String> secrets) {
        String marker = UUID.randomUUID().toString();
        boolean stdin = options.stdin().isPresent();
        String execId = control.execCreate(
                sessionId,
                containerId,
                options.argv(),
                environment(options, secrets, marker),
                options.cwd().orElse(null),
                null,
                stdin);
        return new DockerExecProcess(
                this, execId, MARKER + "=" + marker, options.stdin().orElse(null), null);
    }

    /**
     * Creates an exec on a terminal.
     *
     * @param options what to run
     * @param secrets variables added to the command's environment under the options' own
     * @param cols terminal columns
     * @param rows terminal rows
     * @return the process
     */
    public SpawnedProcess spawnPty(ExecOptions options, Map<String, String> secrets, int cols, int rows) {
        String marker = UUID.randomUUID().toString();
        String execId = control.execCreate(
                sessionId,
                containerId,
                options.argv(),
                environment(options, secrets, marker),
                options.cwd().orElse(null),
                null,
                true,
                true);
        return new DockerExecProcess(
                this, execId, MARKER + "=" + marker, options.stdin().orElse(null), new int[] {cols, rows});
    }

    private static List<String> environment(ExecOptions options, Map<String, String> secrets, String marker) {
        Map<String, String> env = new LinkedHashMap<>(secrets);
        env.putAll(options.env());
        env.put(MARKER, marker);
        List<String> entries = new ArrayList<>(env.size());
        env.forEach((k, v) -> entries.add(k + "=" + v));
        return entries;
    }

    /**
     * Sets the terminal size of a running exec.
     *
     * @param execId the exec
     * @param cols columns
     * @param rows rows
     * @return completes when the daemon did it
     */
    Mono<Void> resize(String execId, int cols, int rows) {
        return blocking(() -> {
                    control.resizeExec(execId, cols, rows);
                    return Boolean.TRUE;
                })
                .then();
    }

    /**
     * Kills the processes of one command, once the daemon reports that it started (or after a short wait).
     *
     * @param execId the command's exec
     * @param marker its {@code NAME=value} marker
     * @param knownStarted whether the command is known to run (it wrote output), so there is no need to ask
     * @return completes when the kill helper finished
     */
    Mono<Void> kill(String execId, String marker, boolean knownStarted) {
        return started(execId, knownStarted)
                .then(runInternal(List.of("/bin/sh", "-c", KILL, "kill", marker)))
                .then();
    }

    /** Completes once the daemon reports the exec started (or ended), or after a short wait for it. */
    private Mono<Boolean> started(String execId, boolean knownStarted) {
        if (knownStarted) {
            return Mono.just(true);
        }
        return blocking(() -> {
                    DockerControl.ExecState s = control.inspectExec(execId);
                    return s == null || s.running() || s.exitCode() != null;
                })
                .filter(Boolean::booleanValue)
                .repeatWhenEmpty(20, attempts -> attempts.concatMap(i -> Mono.delay(Duration.ofMillis(10 + 10 * i))))
                .onErrorResume(e -> Mono.just(false));
    }

    /**
     * Sends a signal to the processes of one command and their process groups, once the command runs.
     *
     * @param execId the command's exec
     * @param marker the command's {@code NAME=value} marker
     * @param signal the signal number
     * @param knownStarted whether the command is known to run (it wrote output)
     * @return completes when the helper ran
     */
    Mono<Void> signal(String execId, String marker, int signal, boolean knownStarted) {
        return started(execId, knownStarted)
                .then(runInternal(List.of("/bin/sh", "-c", SIGNAL, "signal", marker, Integer.toString(signal))))
                .then();
    }

    /**
     * Tells the container's keep-alive the session's new deadline and idle timeout.
     *
     * @param backstopDeadline when the keep-alive ends the container (epoch seconds), 0 for never
     * @param backstopIdle how long without processes before the keep-alive ends it (seconds), 0 for never
     * @param deadlineMillis the session's deadline (epoch millis), 0 for none
     * @param idleMillis the session's idle timeout (millis), 0 for none
     * @return completes when the timers file was written
     */
    public Mono<Void> setTimers(long backstopDeadline, long backstopIdle, long deadlineMillis, long idleMillis) {
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", SET_TIMERS, "timers"));
        for (long v : new long[] {backstopDeadline, backstopIdle, deadlineMillis, idleMillis}) {
            argv.add(Long.toString(v));
        }
        return runInternal(argv).then();
    }

    /**
     * Reads the session's deadline and idle timeout from the timers file, as the last {@link #setTimers} wrote them.
     *
     * @return {@code {deadlineMillis, idleMillis}}, or an empty array when the file was never written
     */
    public Mono<long[]> readTimers() {
        return runInternal(List.of("/bin/sh", "-c", "cat " + TIMERS_FILE + " 2>/dev/null || true"))
                .map(ContainerExecutor::parseTimers);
    }

    static long[] parseTimers(String text) {
        String[] parts = text.strip().split("\\s+");
        if (parts.length != 4) {
            return new long[0];
        }
        try {
            return new long[] {Long.parseLong(parts[2]), Long.parseLong(parts[3])};
        } catch (NumberFormatException e) {
            return new long[0];
        }
    }

    /**
     * Waits for an exec's end; polls, since the daemon sets the exit code a moment after the stream ends.
     *
     * @param execId the exec
     * @return its final state, or {@link SessionTerminatedException} when the exec vanished with its container
     */
    Mono<DockerControl.ExecState> exitCode(String execId) {
        return blocking(() -> {
                    DockerControl.ExecState s = control.inspectExec(execId);
                    if (s == null) {
                        throw new SessionTerminatedException(sessionId, "its container no longer exists");
                    }
                    return s;
                })
                .filter(s -> !s.running() && s.exitCode() != null)
                // an exec the daemon still calls running long after its stream ended: is its container still there?
                .repeatWhenEmpty(attempts ->
                        attempts.concatMap(i -> Mono.delay(Duration.ofMillis(Math.min(500, 2L << Math.min(i, 10))))
                                .then(i >= 8 ? checkRunning() : Mono.empty())
                                .thenReturn(i)));
    }

    /**
     * Explains a SIGKILL the SDK did not send: the container going away (its init died first, which kills every
     * process in it; the daemon may not have marked the container stopped yet, so a helper exec probes it first), or
     * the OOM killer (the container's OOM counter went up since the last look; only with a memory limit).
     *
     * @return whether it was the OOM killer, or {@link SessionTerminatedException} when the container is gone
     */
    Mono<Boolean> explainKill() {
        return readOomKills()
                .map(count -> memoryLimited && count > oomKills.getAndAccumulate(count, Math::max))
                // no helper can run: the container is on its way out, though the daemon may still call it running
                .onErrorResume(
                        e -> !(e instanceof SessionTerminatedException),
                        e -> awaitStopped().thenReturn(false))
                .flatMap(oom -> checkRunning().thenReturn(oom));
    }

    /**
     * Polls the container's state until the daemon reports it stopped or gone (the error {@link
     * SessionTerminatedException}), for at most {@link #STOP_SETTLE}.
     */
    private Mono<Void> awaitStopped() {
        long rounds = STOP_SETTLE.toMillis() / 100;
        return checkRunning()
                .then(Mono.delay(Duration.ofMillis(100)))
                .repeat(rounds)
                .then();
    }

    /**
     * Checks that the container still runs.
     *
     * @return completes when it runs, else fails with {@link SessionTerminatedException}
     */
    public Mono<Void> checkRunning() {
        return blocking(() -> {
                    String known = terminatedCause;
                    if (known != null) {
                        throw new SessionTerminatedException(sessionId, known);
                    }
                    var c = control.inspectContainer(containerId);
                    if (c == null) {
                        throw new SessionTerminatedException(sessionId, "its container no longer exists");
                    }
                    if (c.getState() == null
                            || !Boolean.TRUE.equals(c.getState().getRunning())) {
                        throw new SessionTerminatedException(sessionId, ContainerDeath.describe(c));
                    }
                    return Boolean.TRUE;
                })
                .then();
    }

    /**
     * Reads the container's OOM kill counter.
     *
     * @return the count, 0 when the cgroup files cannot be read, {@link BackendException} when the helper did not run
     */
    public Mono<Long> readOomKills() {
        return runInternal(List.of("/bin/sh", "-c", OOM_COUNT)).map(out -> {
            if (!out.contains(HELPER_DONE)) {
                throw DockerErrors.helperFailed(
                        "the helper that reads the OOM kill counter did not run: " + out.strip());
            }
            for (String line : out.split("\n")) {
                String[] parts = line.trim().split("\\s+");
                if (parts.length == 2 && parts[0].equals("oom_kill")) {
                    try {
                        return Long.parseLong(parts[1]);
                    } catch (NumberFormatException ignored) {
                        // keep looking
                    }
                }
            }
            return 0L;
        });
    }

    /** Runs a short helper command as root and returns its stdout (up to 64 KiB). */
    private Mono<String> runInternal(List<String> argv) {
        return blocking(() -> control.execCreate(sessionId, containerId, argv, List.of(), null, "0", false))
                .flatMap(execId -> {
                    ExecStreamDecoder decoder = new ExecStreamDecoder(this::streamError, () -> {});
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    return untilTerminated(data.exec(execId, null, decoder, Sinks.empty()), e -> false)
                            .doOnNext(e -> {
                                if (e instanceof RawEvent.Chunk c
                                        && c.stream() == RawEvent.STDOUT
                                        && out.size() < MAX_INTERNAL_OUTPUT) {
                                    out.write(
                                            c.bytes(), 0, Math.min(c.bytes().length, MAX_INTERNAL_OUTPUT - out.size()));
                                }
                            })
                            .then(Mono.fromSupplier(() -> out.toString(StandardCharsets.UTF_8)));
                });
    }

    /**
     * The error for an exec start the daemon refused.
     *
     * @param status the HTTP status (0 when there was no answer)
     * @param message the daemon's message
     * @return the error
     */
    RuntimeException streamError(int status, String message) {
        return DockerErrors.execStart(sessionId, status, message);
    }

    private static <T> Mono<T> blocking(java.util.concurrent.Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
    }
}
