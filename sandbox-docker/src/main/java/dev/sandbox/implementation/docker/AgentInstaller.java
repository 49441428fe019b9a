package dev.sandbox.implementation.docker;

import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Mount;
import com.github.dockerjava.api.model.MountType;
import dev.sandbox.BackendException;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * Installs {@code sandbox-agent} (module {@code sandbox-agent}, shipped in its jar) for the sessions of one daemon:
 * once per daemon and agent build, into a Docker volume named after the binary's hash ({@value #VOLUME_PREFIX}...),
 * written through the archive API of a helper container that never starts (so a remote daemon works too, with no
 * host path). Every session container then mounts that volume read-only at {@value #DIR}: creating a session costs
 * no copy, and code in the sandbox, root or not, cannot replace the binary (remounting needs {@code
 * CAP_SYS_ADMIN}, which sessions never get). The agent is the container's main process ({@link #entrypoint}); it
 * serves commands, files and watches on an abstract Unix socket, which each client connection reaches with one daemon
 * exec of {@code sandbox-agent relay} ({@link DockerAgentTransport}).
 *
 * <p>The volume outlives the provider (like the reaper's image), labelled {@value #VOLUME_LABEL} and with its install
 * time; a new agent build makes a new one and removes the volumes of other builds only when they are old and unused
 * ({@link AgentVolumes}). Since another program on the daemon may still remove this build's volume (an SDK version
 * without that rule, a user's {@code docker volume prune}), {@link #ensure} looks for it before every session and
 * installs again when it is gone or was replaced, and a container start that fails for want of the agent is retried
 * once after {@link #reinstall} ({@link #agentMissing}).
 */
final class AgentInstaller {
    private static final Logger LOG = LoggerFactory.getLogger(AgentInstaller.class);

    /** The directory of the agent in every session container: the volume's mount point. */
    static final String DIR = "/.dev-sandbox";

    /** The agent's path in every session container. */
    static final String PATH = DIR + "/agent";

    /** The name of the agent's volume, before the first 16 hex digits of the binary's SHA-256. */
    static final String VOLUME_PREFIX = "dev-sandbox-agent-";

    /** The label on the agent's volume. */
    static final String VOLUME_LABEL = "dev.sandbox.agent";

    private static final String RESOURCE = "/dev/sandbox/agent/linux-x86_64/sandbox-agent";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int MAX_BINARY = 8 * 1024 * 1024;
    private static final Pattern SIZE = Pattern.compile("\"size\":(\\d{1,12})[,}]");

    private static volatile Binary binary;

    private final DockerControl control;
    private final DockerDataPlane data;
    private final String prefix;
    /** The labels of the volume this installer last found or put the agent in; {@code null} before. */
    private volatile Map<String, String> verified;

    private boolean cleaned;

    /** The agent's bytes, their tar (one entry, {@code agent}, mode 0755) and the first 16 hex digits of its hash. */
    private record Binary(byte[] bytes, byte[] tar, String hash) {}

    AgentInstaller(DockerControl control, DockerDataPlane data) {
        this(control, data, VOLUME_PREFIX);
    }

    /**
     * An installer whose volumes are named {@code prefix} and the build's hash; tests use a prefix of their own, so
     * that no other program's cleanup sees their volumes, nor theirs any other program's.
     */
    AgentInstaller(DockerControl control, DockerDataPlane data, String prefix) {
        this.control = control;
        this.data = data;
        this.prefix = prefix;
    }

    /**
     * The main process of a session container.
     *
     * @param deadlineMillis when the agent ends the sandbox (epoch milliseconds), 0 for never
     * @param idleMillis after how long without activity it does, 0 for never
     * @return the entrypoint and its arguments
     */
    static List<String> entrypoint(long deadlineMillis, long idleMillis) {
        return List.of(
                PATH, "init", "--deadline-ms", Long.toString(deadlineMillis), "--idle-ms", Long.toString(idleMillis));
    }

    /**
     * The name of this build's agent volume.
     *
     * @return the name
     */
    String volume() {
        return prefix + binary().hash(); // read from the class path at first use, not when the provider is built
    }

    /**
     * The read-only mount of the agent's volume that every session container gets.
     *
     * @return the mount
     */
    Mount mount() {
        return new Mount()
                .withType(MountType.VOLUME)
                .withSource(volume())
                .withTarget(DIR)
                .withReadOnly(true);
    }

    /**
     * Whether a container start failed because the agent is not in the mounted volume (as when Docker made an empty
     * volume of that name): runc says {@code exec: "/.dev-sandbox/agent": stat ...: no such file or directory},
     * gVisor {@code failed to load /.dev-sandbox/agent: no such file or directory}.
     *
     * @param e the start's error
     * @return whether it, or one of its causes, says so
     */
    static boolean agentMissing(Throwable e) {
        int depth = 0;
        for (Throwable t = e; t != null && depth < 8; t = t.getCause(), depth++) {
            String m = t.getMessage();
            if (m != null && m.contains(PATH) && m.contains("no such file or directory")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Makes sure the agent's volume holds the agent; blocks (each daemon call at most 30 s), so call it off
     * non-blocking threads. Looks the volume up (one call) every time: when it is gone, or is no longer the volume
     * this installer wrote to (removed and made again, by Docker or another program), installs again.
     *
     * @param image an image present on the daemon (the session's), for the helper container that is never started
     */
    void ensure(String image) {
        Map<String, String> known = verified;
        if (known != null && known.equals(labels())) {
            return;
        }
        synchronized (this) {
            Map<String, String> now = labels();
            if (verified != null) {
                if (verified.equals(now)) {
                    return; // another thread installed it meanwhile
                }
                LOG.warn(
                        "the sandbox agent's volume {} {}; installing the agent again",
                        volume(),
                        now == null ? "was removed" : "was replaced");
            }
            install(image, now);
        }
    }

    /**
     * Installs the agent again, whatever this installer saw before: after a container start failed for want of it.
     * Blocks like {@link #ensure}.
     *
     * @param image an image present on the daemon
     */
    void reinstall(String image) {
        synchronized (this) {
            LOG.warn("a session container found no sandbox agent in volume {}; installing it again", volume());
            install(image, labels());
        }
    }

    /** The labels of this build's volume (empty when it has none); {@code null} when there is no such volume. */
    private Map<String, String> labels() {
        try {
            Map<String, String> labels =
                    control.client().inspectVolumeCmd(volume()).exec().getLabels();
            return labels == null ? Map.of() : Map.copyOf(labels);
        } catch (NotFoundException e) {
            return null;
        } catch (RuntimeException e) {
            throw DockerErrors.client(control.dockerHost(), "inspect the sandbox agent's volume " + volume(), e);
        }
    }

    /** Writes the agent into the volume unless it is there; called holding this installer's lock. */
    private void install(String image, Map<String, String> found) {
        verified = null;
        Binary b = binary();
        var client = control.client();
        if (found != null && !found.containsKey(VOLUME_LABEL)) {
            // made by Docker when a container mounted the name after the volume was removed: empty and unlabelled.
            // Made again with labels when nothing mounts it; else the agent goes into it as it is.
            try {
                client.removeVolumeCmd(volume()).exec();
            } catch (RuntimeException e) {
                LOG.debug("unlabelled agent volume {} stays: {}", volume(), e.toString());
            }
        }
        try {
            // returns the volume as it is when it exists (labels unchanged)
            client.createVolumeCmd()
                    .withName(volume())
                    .withLabels(AgentVolumes.labels(volume(), Instant.now()))
                    .exec();
        } catch (RuntimeException e) {
            throw new BackendException(
                    "docker: cannot create the sandbox agent's volume " + volume() + ": " + e.getMessage(), e, true);
        }
        // the session label lets the reaper remove the helper if this JVM dies before it does (never started)
        String helper;
        try {
            helper = client.createContainerCmd(image)
                    .withEntrypoint(PATH)
                    .withLabels(Map.of(
                            DockerControl.SESSION_LABEL,
                            "agent-installer-"
                                    + HexFormat.of()
                                            .toHexDigits(
                                                    ThreadLocalRandom.current().nextLong())))
                    .withHostConfig(HostConfig.newHostConfig()
                            .withNetworkMode("none")
                            .withMounts(List.of(new Mount()
                                    .withType(MountType.VOLUME)
                                    .withSource(volume())
                                    .withTarget(DIR))))
                    .exec()
                    .getId();
        } catch (RuntimeException e) {
            throw new BackendException(
                    "docker: cannot create the sandbox agent's installer from " + image + ": " + e.getMessage(),
                    e,
                    true);
        }
        try {
            if (installedSize(helper) != b.bytes().length) {
                String answer = put(helper, b.tar());
                // a racing provider may have written it meanwhile (and a running agent refuses a rewrite)
                if (!answer.startsWith("200 ") && installedSize(helper) != b.bytes().length) {
                    throw new BackendException(
                            "docker: cannot install the sandbox agent into volume " + volume() + ": "
                                    + answer.substring(0, Math.min(answer.length(), 300)),
                            null,
                            true);
                }
            }
            // read while the helper mounts it: the volume just written to, which nobody can remove meanwhile
            verified = labels();
            LOG.debug("the sandbox agent is in volume {}", volume());
        } finally {
            try {
                client.removeContainerCmd(helper).withForce(true).exec();
            } catch (RuntimeException e) {
                LOG.debug("could not remove the agent installer {}: {}", helper, e.toString());
            }
        }
        if (!cleaned) {
            cleaned = true;
            AgentVolumes.removeOlderBuilds(control, data, prefix, volume(), Instant.now());
        }
    }

    /** The size of the installed agent, from the archive API's stat; -1 when there is none. */
    private long installedSize(String helper) {
        String stat;
        try {
            stat = data.http()
                    .head()
                    .uri("/containers/" + helper + "/archive?path=" + PATH)
                    .response((resp, body) -> body.then(Mono.just(
                            resp.status().code() == 200
                                    ? String.valueOf(resp.responseHeaders().get("X-Docker-Container-Path-Stat"))
                                    : "")))
                    .single()
                    .block(TIMEOUT);
        } catch (RuntimeException e) {
            throw DockerErrors.connection(data.dockerHost(), "look for the sandbox agent in its volume", e);
        }
        if (stat == null || stat.isEmpty() || stat.length() > 4096) {
            return -1;
        }
        try {
            String json = new String(Base64.getDecoder().decode(stat), StandardCharsets.UTF_8);
            Matcher m = SIZE.matcher(json);
            return m.find() ? Long.parseLong(m.group(1)) : -1;
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    private String put(String helper, byte[] tar) {
        try {
            String answer = data.http()
                    .headers(h -> h.set(HttpHeaderNames.CONTENT_LENGTH, tar.length)
                            .set(HttpHeaderNames.CONTENT_TYPE, "application/x-tar"))
                    .put()
                    .uri("/containers/" + helper + "/archive?path=" + DIR)
                    .send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(tar)))
                    .responseSingle((resp, text) -> text.asString(StandardCharsets.UTF_8)
                            .defaultIfEmpty("")
                            .map(t -> resp.status().code() + " " + t))
                    .block(TIMEOUT);
            return answer == null ? "no answer" : answer;
        } catch (RuntimeException e) {
            throw DockerErrors.connection(data.dockerHost(), "install the sandbox agent", e);
        }
    }

    private static Binary binary() {
        Binary b = binary;
        if (b == null) {
            byte[] bytes = read();
            long now = Instant.now().getEpochSecond();
            ByteArrayOutputStream tar = new ByteArrayOutputStream(bytes.length + 2048);
            tar.writeBytes(TarStream.fileHeader("agent", bytes.length, 0755, now));
            tar.writeBytes(bytes);
            tar.writeBytes(new byte[TarStream.padding(bytes.length)]);
            tar.writeBytes(TarStream.trailer());
            try {
                byte[] hash = MessageDigest.getInstance("SHA-256").digest(bytes);
                b = new Binary(bytes, tar.toByteArray(), HexFormat.of().formatHex(hash, 0, 8));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-256 is missing from this JDK", e);
            }
            binary = b;
        }
        return b;
    }

    /** The agent's bytes from this provider's class path. */
    private static byte[] read() {
        try (InputStream in = AgentInstaller.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new BackendException(
                        "the sandbox agent (" + RESOURCE + ") is not on the class path: add dev.sandbox:sandbox-agent",
                        null,
                        false);
            }
            byte[] bytes = in.readNBytes(MAX_BINARY + 1);
            if (bytes.length > MAX_BINARY) {
                throw new BackendException("the sandbox agent on the class path is larger than 8 MiB", null, false);
            }
            return bytes;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the sandbox agent from the class path", e);
        }
    }
}
