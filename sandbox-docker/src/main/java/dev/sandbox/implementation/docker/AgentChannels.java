package dev.sandbox.implementation.docker;

import com.github.dockerjava.api.model.Mount;
import com.github.dockerjava.api.model.MountType;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The direct channels of one provider's sessions: a socket the session's agent listens on in a host directory mounted
 * into its container, which this JVM connects to without the daemon's exec stream and the relay in between.
 *
 * <p>Layout, all made by this JVM: a root per user and daemon, {@code <tmp>/dev-sandbox-channels-<uid>-<daemon
 * hash>} (mode 0700, checked to be a directory of ours and not a link); in it one directory per session (0700), and in
 * that {@code in/} (0777), the only part mounted into the container, at {@link #TARGET}. The agent binds {@code
 * agent.sock} in it.
 *
 * <p>The sandbox can write anything in {@code in/}: replace the socket by a link, a file, a directory or a listener of
 * its own. So this side never connects to a path in {@code in/}. It first moves whatever is at {@code in/agent.sock}
 * into the session's own directory, where the sandbox cannot reach ({@code rename(2)} moves a link as a link, never
 * its target), then looks at what it moved without following links, and connects only when it is a socket. Nothing in
 * the session's directory can change after that. A socket there is either the agent's or one the sandbox made in its
 * place: both are the sandbox, whose every byte is read as hostile anyway. Anything else is removed and the session
 * uses the relay. What the sandbox writes besides is charged to it (its memory limit where the temporary directory is
 * a tmpfs) and removed with the session.
 *
 * <p>Used only where the daemon is reached over its Unix socket on Linux; the daemon may still not share this JVM's
 * files (a daemon in a VM, another mount namespace, a runtime such as gVisor that keeps sockets inside the sandbox):
 * then no socket appears, or connecting fails, and the session uses the relay. After one such miss for a runtime,
 * later sessions of that runtime do not wait for the socket.
 */
final class AgentChannels {
    private static final Logger LOG = LoggerFactory.getLogger(AgentChannels.class);

    /** Where the session's channel directory is mounted in its container. */
    static final String TARGET = "/.dev-sandbox-channel";

    /** The socket's name, in the container's channel directory and then in the session's directory. */
    static final String SOCKET = "agent.sock";

    /** How long a session's first connection waits for its socket to appear. */
    static final Duration APPEAR_WAIT = Duration.ofSeconds(1);

    /** How old a directory of a session the daemon does not list must be to be swept (a create may be under way). */
    private static final Duration SWEEP_AGE = Duration.ofMinutes(2);

    private static final Pattern SESSION_ID = Pattern.compile("docker-[0-9a-f]{32}");
    /** The longest socket path {@code sockaddr_un} takes, with its terminator. */
    private static final int MAX_SOCKET_PATH = 107;

    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> EVERYONE = EnumSet.allOf(PosixFilePermission.class);

    /** The root, or {@code null} when this provider uses the relay only. */
    private final Path root;

    /** Per runtime: whether a session has shown a socket (true) or missed it while its relay worked (false). */
    private final Map<String, Boolean> seen = new ConcurrentHashMap<>();

    private AgentChannels(Path root) {
        this.root = root;
    }

    /**
     * The channels of a provider.
     *
     * @param dockerHost the daemon's address
     * @param enabled whether the user allows direct channels
     * @return channels that are off unless the daemon's socket is local, the host is Linux and the root is usable
     */
    static AgentChannels forDaemon(URI dockerHost, boolean enabled) {
        if (!enabled
                || !"unix".equals(dockerHost.getScheme())
                || !System.getProperty("os.name", "")
                        .toLowerCase(java.util.Locale.ROOT)
                        .contains("linux")) {
            return new AgentChannels(null);
        }
        Path tmp = Path.of(System.getProperty("java.io.tmpdir", "/tmp"));
        return new AgentChannels(root(tmp, dockerHost));
    }

    /**
     * Channels under a root of the caller's choosing (tests), which must pass the same checks.
     *
     * @param base the directory the root is made in
     * @param dockerHost the daemon's address
     * @return the channels, off when the root is not usable
     */
    static AgentChannels under(Path base, URI dockerHost) {
        return new AgentChannels(root(base, dockerHost));
    }

    /** Makes or checks the root; {@code null} (with a warning) when it is not a private directory of this user. */
    private static Path root(Path base, URI dockerHost) {
        try {
            long uid = ownUid();
            Path root = base.resolve("dev-sandbox-channels-" + uid + "-" + hash(dockerHost.toString()));
            try {
                Files.createDirectory(root, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            } catch (FileAlreadyExistsException e) {
                // made by an earlier provider of this user, or by someone else: checked below
            }
            Map<String, Object> a = Files.readAttributes(root, "unix:uid,mode,isDirectory", LinkOption.NOFOLLOW_LINKS);
            int mode = (Integer) a.get("mode");
            if (!(Boolean) a.get("isDirectory") || ((Number) a.get("uid")).longValue() != uid || (mode & 0077) != 0) {
                LOG.warn(
                        "not using direct channels to sandbox agents: {} is not a directory of this user's alone"
                                + " (mode {}); sessions use the daemon's exec stream",
                        root,
                        Integer.toOctalString(mode & 07777));
                return null;
            }
            if (root.resolve("docker-" + "0".repeat(32))
                            .resolve(SOCKET)
                            .toString()
                            .length()
                    > MAX_SOCKET_PATH) {
                LOG.info("not using direct channels to sandbox agents: socket paths under {} are too long", root);
                return null;
            }
            return root;
        } catch (IOException | RuntimeException e) {
            LOG.warn("not using direct channels to sandbox agents: {}", e.toString());
            return null;
        }
    }

    private static long ownUid() throws IOException {
        // /proc/self belongs to the process's effective user
        return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).longValue();
    }

    private static String hash(String s) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Whether sessions get a direct channel.
     *
     * @return false when every session uses the relay
     */
    boolean enabled() {
        return root != null;
    }

    /**
     * Makes a session's directories (blocking: file system).
     *
     * @param sessionId the new session's id
     * @return the mount for its container, or {@code null} when the session goes without (said at debug level)
     */
    Mount prepare(String sessionId) {
        if (root == null || !SESSION_ID.matcher(sessionId).matches()) {
            return null;
        }
        try {
            Path dir = Files.createDirectory(root.resolve(sessionId), PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            Path in = Files.createDirectory(dir.resolve("in"));
            // whatever user the sandbox runs as binds the socket here; only this JVM's user can reach the directory
            Files.setPosixFilePermissions(in, EVERYONE);
            return new Mount()
                    .withType(MountType.BIND)
                    .withSource(in.toString())
                    .withTarget(TARGET)
                    .withReadOnly(false);
        } catch (IOException | RuntimeException e) {
            LOG.debug("session {} goes without a direct channel: {}", sessionId, e.toString());
            remove(sessionId);
            return null;
        }
    }

    /**
     * Whether a container create failed on the channel's bind mount: the daemon does not see this host's directory.
     *
     * @param e the create's failure
     * @return true for the daemon's "bind source path does not exist" and its kin
     */
    static boolean mountRefused(RuntimeException e) {
        String m = String.valueOf(e.getMessage());
        return m.contains(TARGET) || m.contains("bind source path") || m.contains("dev-sandbox-channels-");
    }

    /**
     * The agent's argument that makes it listen on the channel.
     *
     * @return {@code --channel} and the socket's path in the container
     */
    static java.util.List<String> agentArguments() {
        return java.util.List.of("--channel", TARGET + "/" + SOCKET);
    }

    /**
     * Whether a session was given a channel directory by a provider of this user and daemon (blocking).
     *
     * @param sessionId the session
     * @return true when its directory exists
     */
    boolean offered(String sessionId) {
        return root != null
                && SESSION_ID.matcher(sessionId).matches()
                && Files.isDirectory(root.resolve(sessionId), LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * The socket to connect to for a session, moved out of the sandbox's reach first (blocking: file system, and a
     * bounded wait for a socket that has not appeared yet).
     *
     * @param sessionId the session
     * @param runtime the container's runtime, such as {@code runc}, for how long to wait
     * @return the socket's path, or {@code null} for the relay
     */
    Path socket(String sessionId, String runtime) {
        if (root == null || !SESSION_ID.matcher(sessionId).matches()) {
            return null;
        }
        Path dir = root.resolve(sessionId);
        Path own = dir.resolve(SOCKET);
        Path offered = dir.resolve("in").resolve(SOCKET);
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return null; // made without a channel, or by a provider of another user or daemon
        }
        boolean waiting = !Boolean.FALSE.equals(seen.get(runtime));
        long deadline = System.nanoTime() + (waiting ? APPEAR_WAIT.toNanos() : 0);
        long pause = 200_000; // 0.2 ms, doubling up to 20 ms
        while (true) {
            if (isSocket(own)) {
                seen.put(runtime, Boolean.TRUE);
                return own;
            }
            if (take(offered, own)) {
                continue; // look at what was moved
            }
            if (System.nanoTime() - deadline >= 0) {
                return null;
            }
            LockSupport.parkNanos(pause);
            pause = Math.min(pause * 2, 20_000_000);
        }
    }

    /**
     * Says that a session's agent answered over the relay while its socket did not appear or did not answer: later
     * sessions of this runtime do not wait for theirs. A runtime that has shown a socket keeps waiting.
     *
     * @param runtime the runtime
     */
    void missed(String runtime) {
        if (seen.putIfAbsent(runtime, Boolean.FALSE) == null) {
            LOG.info(
                    "sandbox agents under runtime '{}' offer no socket this JVM can reach (the daemon or runtime does not"
                            + " share this host's files): sessions use the daemon's exec stream",
                    runtime);
        }
    }

    /** Moves what the sandbox offered into the session's directory; true when something was moved. */
    private static boolean take(Path offered, Path own) {
        try {
            if (!Files.exists(offered, LinkOption.NOFOLLOW_LINKS)) {
                return false;
            }
            Files.move(offered, own, StandardCopyOption.ATOMIC_MOVE);
        } catch (NoSuchFileException e) {
            return false; // taken by another provider of this user, or gone
        } catch (AtomicMoveNotSupportedException | FileAlreadyExistsException e) {
            return false;
        } catch (IOException e) {
            LOG.debug("cannot take the socket at {}: {}", offered, e.toString());
            return false;
        }
        if (!isSocket(own)) {
            LOG.warn("the sandbox put something other than a socket at {}; it was removed", offered);
            removeTree(own);
            return false;
        }
        return true;
    }

    private static boolean isSocket(Path p) {
        try {
            int mode = (Integer) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            return (mode & 0170000) == 0140000;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Removes a session's directories and what the sandbox wrote in them, following no link (blocking).
     *
     * @param sessionId the session
     */
    void remove(String sessionId) {
        if (root != null && SESSION_ID.matcher(sessionId).matches()) {
            removeTree(root.resolve(sessionId));
        }
    }

    /**
     * Removes the directories of sessions the daemon no longer lists (blocking), such as those of a JVM that died.
     *
     * @param alive the ids of the sessions the daemon lists
     */
    void sweep(Set<String> alive) {
        if (root == null) {
            return;
        }
        Instant before = Instant.now().minus(SWEEP_AGE);
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(root)) {
            for (Path dir : dirs) {
                String id = dir.getFileName().toString();
                if (alive.contains(id) || !SESSION_ID.matcher(id).matches()) {
                    continue;
                }
                FileTime made = Files.readAttributes(dir, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                        .creationTime();
                if (made.toInstant().isBefore(before)) {
                    removeTree(dir);
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("cannot sweep {}: {}", root, e.toString());
        }
    }

    /** Deletes a tree without following links; what cannot be deleted stays and is said. */
    private static void removeTree(Path top) {
        if (Files.exists(top, LinkOption.NOFOLLOW_LINKS)) {
            try {
                removeTree(top, 0);
            } catch (IOException | RuntimeException e) {
                LOG.warn("cannot remove {} (what a sandbox wrote in its channel directory): {}", top, e.toString());
            }
        }
    }

    private static void removeTree(Path top, int depth) throws IOException {
        Files.walkFileTree(top, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                // a directory the sandbox made unreadable: ours again (where this user owns it), then emptied
                if (depth < 16 && Files.isDirectory(file, LinkOption.NOFOLLOW_LINKS)) {
                    Files.setPosixFilePermissions(file, OWNER_ONLY);
                    removeTree(file, depth + 1);
                } else {
                    Files.deleteIfExists(file);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                Files.deleteIfExists(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
