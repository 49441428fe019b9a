package dev.sandbox.implementation.local;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What lets the next local provider end the sessions of a JVM that died without closing its provider (killed with
 * SIGKILL, out of memory, a crash). Each session has a small record in a per-user state directory (mode 0700): its
 * id, its owner (the JVM's pid and that process's start time from {@code /proc/<pid>/stat}, so a reused pid does not
 * pass for the owner), and the workdir the provider made for it, if any. Every process of the session carries
 * {@value #MARKER}{@code =<id>} in its environment. A provider at start, on a thread of its own, takes each record
 * whose owner is gone, kills every process whose {@code /proc/<pid>/environ} carries the session's marker (with its
 * process group when it leads one), deletes the workdir and then the record. Internal: not part of the public API.
 */
public final class SessionRecords {
    /** The environment variable every process of a local session carries: the session's id. */
    public static final String MARKER = "DEV_SANDBOX_SESSION";

    private static final Logger LOG = LoggerFactory.getLogger(SessionRecords.class);
    private static final String SUFFIX = ".session";
    private static final String REAPING = ".reaping-";
    /** How much of a process's environment is read: enough for any environment a session gives its commands. */
    private static final int MAX_ENVIRON = 1024 * 1024;
    /** How much of a record is read. */
    private static final int MAX_RECORD = 16 * 1024;
    /** Rounds of scan and kill: a process forked while the last round killed shows in the next. */
    private static final int ROUNDS = 5;
    /** How long one round waits for the killed processes to die. */
    private static final int DEATH_WAIT_MILLIS = 2000;

    private static final int MAX_RECORDS = 10_000;

    private final Path dir; // null when records cannot be kept
    private final String owner;

    /**
     * Records in a state directory, made (mode 0700) if missing. A directory that is not this user's alone disables
     * the records, with a warning: nothing fails.
     *
     * @param dir the state directory
     */
    public SessionRecords(Path dir) {
        this.owner = ProcessHandle.current().pid() + "-"
                + startTime(ProcessHandle.current().pid());
        this.dir = prepare(dir);
    }

    /**
     * The per-user state directory: {@code $XDG_RUNTIME_DIR/dev.sandbox/local} where that is set, else {@code
     * ${java.io.tmpdir}/dev.sandbox-<uid>/local}.
     *
     * @return the directory
     */
    public static Path defaultDir() {
        String runtime = System.getenv("XDG_RUNTIME_DIR");
        if (runtime != null && !runtime.isEmpty() && Files.isDirectory(Path.of(runtime))) {
            return Path.of(runtime, "dev.sandbox", "local");
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "dev.sandbox-" + uid(), "local");
    }

    private static int uid() {
        try {
            return Sys.getuid();
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            return -1;
        }
    }

    private static Path prepare(Path dir) {
        try {
            Path parent = dir.getParent();
            if (parent != null) {
                mkdirPrivate(parent);
            }
            mkdirPrivate(dir);
            return dir;
        } catch (IOException | RuntimeException e) {
            LOG.warn(
                    "local session records disabled (a crashed JVM's sessions will not be cleaned up): {}",
                    e.toString());
            return null;
        }
    }

    /** Makes a directory 0700 if missing; refuses one that is a link, another user's, or open to others. */
    private static void mkdirPrivate(Path dir) throws IOException {
        Set<PosixFilePermission> owner = PosixFilePermissions.fromString("rwx------");
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(owner));
        } catch (java.nio.file.FileAlreadyExistsException e) {
            // checked below
        }
        BasicFileAttributes attrs = Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (!attrs.isDirectory()) {
            throw new IOException(dir + " is not a directory");
        }
        Object uid = Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (!(uid instanceof Integer u) || u != uid()) {
            throw new IOException(dir + " belongs to uid " + uid + ", not to this user (" + uid() + ")");
        }
        if (!Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS).equals(owner)) {
            throw new IOException(dir + " is not mode 0700");
        }
    }

    /**
     * Records a session of this JVM.
     *
     * @param id the session's id
     * @param workdir the workdir the provider made for it, or {@code null} when it is the caller's
     */
    public void write(String id, Path workdir) {
        if (dir == null) {
            return;
        }
        Properties p = new Properties();
        p.setProperty("id", id);
        p.setProperty("owner", owner);
        if (workdir != null) {
            p.setProperty("workdir", workdir.toString());
        }
        Path temp = dir.resolve("." + id + ".tmp-" + UUID.randomUUID());
        try {
            try (var out = Files.newOutputStream(temp)) {
                p.store(out, null);
            }
            Files.move(temp, dir.resolve(id + SUFFIX), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            LOG.warn("cannot record local session {} in {}: {}", id, dir, e.toString());
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // best effort
            }
        }
    }

    /**
     * Forgets a session that ended normally.
     *
     * @param id the session's id
     */
    public void remove(String id) {
        if (dir == null) {
            return;
        }
        try {
            Files.deleteIfExists(dir.resolve(id + SUFFIX));
        } catch (IOException e) {
            LOG.warn("cannot remove the record of local session {}: {}", id, e.toString());
        }
    }

    /**
     * Ends, on a daemon thread of its own, the sessions whose owner is gone. Never fails: problems are logged.
     *
     * @return the number of sessions cleaned up, once done
     */
    public CompletableFuture<Integer> reapInBackground() {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        if (dir == null) {
            done.complete(0);
            return done;
        }
        Thread.ofPlatform().daemon().name("sandbox-local-reaper").start(() -> {
            try {
                done.complete(reap());
            } catch (RuntimeException | Error e) {
                LOG.warn("cleaning up the sessions of crashed JVMs failed: {}", e.toString());
                done.complete(0);
            }
        });
        return done;
    }

    private int reap() {
        Map<String, Properties> dead = new LinkedHashMap<>();
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (Path entry : stream) {
                if (entries.size() >= MAX_RECORDS) {
                    break;
                }
                entries.add(entry);
            }
        } catch (IOException e) {
            LOG.warn("cannot list local session records in {}: {}", dir, e.toString());
            return 0;
        }
        for (Path entry : entries) {
            String name = entry.getFileName().toString();
            String claimant;
            if (name.endsWith(SUFFIX)) {
                claimant = null;
            } else if (name.contains(REAPING) && !name.startsWith(".")) {
                claimant = name.substring(name.indexOf(REAPING) + REAPING.length());
                if (alive(claimant)) {
                    continue; // another provider is on it
                }
            } else {
                continue;
            }
            Properties record = read(entry);
            if (record == null || record.getProperty("id") == null || record.getProperty("owner") == null) {
                continue;
            }
            if (claimant == null && alive(record.getProperty("owner"))) {
                continue;
            }
            // claim it: of two providers starting at once, the one whose rename wins cleans up
            Path claimed = dir.resolve(record.getProperty("id") + REAPING + owner);
            try {
                Files.move(entry, claimed, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                continue;
            }
            record.setProperty("claimed", claimed.toString());
            dead.put(record.getProperty("id"), record);
        }
        if (dead.isEmpty()) {
            return 0;
        }
        Map<String, Integer> killed = killMarked(dead.keySet());
        int cleaned = 0;
        for (Properties record : dead.values()) {
            String id = record.getProperty("id");
            String workdir = record.getProperty("workdir");
            boolean removed = workdir == null || deleteWorkdir(Path.of(workdir));
            try {
                Files.deleteIfExists(Path.of(record.getProperty("claimed")));
            } catch (IOException e) {
                LOG.warn("cannot remove the record of local session {}: {}", id, e.toString());
            }
            LOG.info(
                    "cleaned up local session {} of a JVM that is gone (pid-start {}): killed {} processes{}",
                    id,
                    record.getProperty("owner"),
                    killed.getOrDefault(id, 0),
                    workdir == null ? "" : removed ? ", deleted workdir " + workdir : ", could not delete " + workdir);
            cleaned++;
        }
        return cleaned;
    }

    private static Properties read(Path record) {
        try (InputStream in = Files.newInputStream(record, LinkOption.NOFOLLOW_LINKS)) {
            byte[] bytes = in.readNBytes(MAX_RECORD);
            Properties p = new Properties();
            p.load(new StringReader(new String(bytes, StandardCharsets.ISO_8859_1)));
            return p;
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
    }

    /** Whether the process named {@code <pid>-<start time>} still runs. */
    private static boolean alive(String pidAndStart) {
        int dash = pidAndStart.indexOf('-');
        if (dash <= 0) {
            return false;
        }
        try {
            long pid = Long.parseLong(pidAndStart.substring(0, dash));
            String start = startTime(pid);
            return start != null && start.equals(pidAndStart.substring(dash + 1));
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /** The fields of {@code /proc/<pid>/stat} after the command name: index 0 is field 3 (the state). */
    private static String[] stat(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"), StandardCharsets.ISO_8859_1);
            int close = stat.lastIndexOf(')');
            return close < 0 ? null : stat.substring(close + 2).split(" ");
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Field 22 of {@code /proc/<pid>/stat}: when the process started, in clock ticks since boot. */
    static String startTime(long pid) {
        String[] f = stat(pid);
        return f == null || f.length < 20 ? null : f[19];
    }

    private static long processGroup(long pid) {
        String[] f = stat(pid);
        try {
            return f == null || f.length < 3 ? -1 : Long.parseLong(f[2]);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The session id in a process's environment, or {@code null}. */
    static String marker(long pid) {
        byte[] env;
        try (InputStream in = Files.newInputStream(Path.of("/proc/" + pid + "/environ"))) {
            env = in.readNBytes(MAX_ENVIRON);
        } catch (IOException | RuntimeException e) {
            return null; // gone, or not ours to read
        }
        byte[] key = (MARKER + "=").getBytes(StandardCharsets.ISO_8859_1);
        int start = 0;
        for (int i = 0; i <= env.length; i++) {
            if (i == env.length || env[i] == 0) {
                if (i - start > key.length
                        && java.util.Arrays.equals(env, start, start + key.length, key, 0, key.length)) {
                    return new String(env, start + key.length, i - start - key.length, StandardCharsets.ISO_8859_1);
                }
                start = i + 1;
            }
        }
        return null;
    }

    /**
     * Kills every process that carries one of the sessions' markers (a dead owner's sessions, or a session being
     * destroyed: what its commands left running in the background); returns how many per session.
     *
     * @param ids the sessions
     * @return the processes killed, per session
     */
    static Map<String, Integer> killMarked(Set<String> ids) {
        Map<String, Integer> counts = new HashMap<>();
        long self = ProcessHandle.current().pid();
        long ownGroup = processGroup(self);
        for (int round = 0; round < ROUNDS; round++) {
            Map<Long, String> marked = new LinkedHashMap<>();
            try (DirectoryStream<Path> procs = Files.newDirectoryStream(
                    Path.of("/proc"), p -> p.getFileName().toString().chars().allMatch(Character::isDigit))) {
                for (Path p : procs) {
                    long pid = Long.parseLong(p.getFileName().toString());
                    String id = pid == self ? null : marker(pid);
                    if (id != null && ids.contains(id)) {
                        marked.put(pid, id);
                    }
                }
            } catch (IOException e) {
                LOG.warn("cannot scan /proc for the processes of dead local sessions: {}", e.toString());
                return counts;
            }
            if (marked.isEmpty()) {
                return counts;
            }
            List<Integer> pidfds = new ArrayList<>();
            for (Map.Entry<Long, String> e : marked.entrySet()) {
                long pid = e.getKey();
                int pidfd = (int) Sys.syscall(Sys.SYS_PIDFD_OPEN, pid, (Pointer) null, null, 0);
                if (pidfd < 0) {
                    continue; // gone already
                }
                // the pid is pinned by the pidfd now: check it is still the marked process before signalling
                if (!e.getValue().equals(marker(pid))) {
                    Sys.close(pidfd);
                    continue;
                }
                long group = processGroup(pid);
                if (group == pid && group > 1 && group != ownGroup) {
                    Sys.kill((int) -group, Sys.SIGKILL); // it leads its group: the members that dropped the marker
                }
                if (Sys.syscall(Sys.SYS_PIDFD_SEND_SIGNAL, pidfd, new Pointer(Sys.SIGKILL), null, 0) == 0) {
                    counts.merge(e.getValue(), 1, Integer::sum);
                }
                pidfds.add(pidfd);
            }
            awaitDeath(pidfds);
        }
        LOG.warn("processes of dead local sessions {} still appear after {} rounds of killing", ids, ROUNDS);
        return counts;
    }

    /** Waits, bounded, until each pidfd reports its process gone (a pidfd polls readable on exit), then closes them. */
    private static void awaitDeath(List<Integer> pidfds) {
        long deadline = System.nanoTime() + DEATH_WAIT_MILLIS * 1_000_000L;
        try (Memory pfd = new Memory(8)) {
            for (int fd : pidfds) {
                while (true) {
                    int left = (int) Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
                    pfd.setInt(0, fd);
                    pfd.setShort(4, Sys.POLLIN);
                    pfd.setShort(6, (short) 0);
                    int n = Sys.poll(pfd, 1, left);
                    if (n >= 0 || Sys.errno() != Sys.EINTR || left == 0) {
                        break;
                    }
                }
            }
        } finally {
            for (int fd : pidfds) {
                Sys.close(fd);
            }
        }
    }

    /** Deletes a workdir the provider made, never following a link; only a {@code sandbox-*} directory. */
    private static boolean deleteWorkdir(Path workdir) {
        Path name = workdir.getFileName();
        if (!workdir.isAbsolute() || name == null || !name.toString().startsWith("sandbox-")) {
            LOG.warn("not deleting '{}': not a workdir a local provider makes", workdir);
            return false;
        }
        try {
            if (!Files.isDirectory(workdir, LinkOption.NOFOLLOW_LINKS)) {
                return true;
            }
            Files.walkFileTree(workdir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) throws IOException {
                    if (exc instanceof NoSuchFileException) {
                        return FileVisitResult.CONTINUE;
                    }
                    throw exc;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
            return true;
        } catch (IOException e) {
            LOG.warn("cannot delete workdir '{}' of a dead local session: {}", workdir, e.toString());
            return false;
        }
    }
}
