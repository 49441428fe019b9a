package dev.sandbox.implementation.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Mount;
import com.github.dockerjava.api.model.MountType;
import dev.sandbox.BackendException;
import dev.sandbox.implementation.process.RawEvent;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

/**
 * The reaper: the authority that ends Docker sessions when no client does, outside every sandbox.
 *
 * <p>Code in a sandbox runs as root and may kill, stop or fake anything in its container, so nothing there decides
 * when the sandbox ends. One reaper container per daemon ({@value #CONTAINER_NAME}) runs the static program {@code
 * sandbox-reaper} (module {@code sandbox-native}, imported as the only file of a local image, never pulled) with the
 * daemon's socket mounted. Every second it lists the session containers and removes those past their deadline (the
 * {@link DockerControl#EXPIRES_LABEL} label set at create, or a later deadline a client wrote into its state), those
 * without a deadline whose lease ran out (renewals stop when the client's JVM dies), and stopped ones. Its state is a
 * named volume ({@value #VOLUME}) of small files, {@code deadlines/<session>} and {@code leases/<session>}, written by
 * the providers through the archive API; sandboxes cannot reach it (the reaper has no network, and session containers
 * no socket). The reaper exits after ten minutes without sessions and is started again by the next provider that
 * needs it. Internal: not part of the public API.
 */
public final class DockerReaper {
    private static final Logger LOG = LoggerFactory.getLogger(DockerReaper.class);

    /** The reaper container's name, one per daemon. */
    public static final String CONTAINER_NAME = "dev-sandbox-reaper";
    /** The repository of the reaper's image, tagged with the first 12 hex digits of the binary's SHA-256. */
    public static final String IMAGE_REPOSITORY = "dev-sandbox-reaper";
    /** The named volume that holds the reaper's state. */
    public static final String VOLUME = "dev-sandbox-reaper-state";
    /** The label on the reaper container and its image: the binary's version tag. */
    public static final String VERSION_LABEL = "dev.sandbox.reaper";
    /** How long the reaper waits without any session before it exits. */
    public static final Duration IDLE_EXIT = Duration.ofMinutes(10);

    private static final String STATE_DIR = "/state";
    private static final String SOCKET_IN_CONTAINER = "/var/run/docker.sock";
    private static final Pattern REMOVED = Pattern.compile("^removed (\\S+) \\((\\w[\\w-]*)\\)$", Pattern.MULTILINE);
    private static final Pattern SESSION_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    private static final int MAX_OUTPUT = 256 * 1024;
    private static final Duration IMPORT_TIMEOUT = Duration.ofMinutes(1);
    private static final Duration WRITE_TIMEOUT = Duration.ofSeconds(30);
    /** A verified reaper is not looked at again for this long. */
    private static final Duration VERIFIED_FOR = Duration.ofSeconds(10);

    private final DockerControl control;
    private final DockerDataPlane data;
    private final String hostSocket;
    private final Object lock = new Object();
    private volatile long verifiedAtNanos;
    private volatile boolean verified;
    private String image;

    /**
     * A reaper for one daemon; nothing is contacted yet.
     *
     * @param control the daemon's control plane
     * @param data the daemon's data plane, for the on-demand sweep
     * @param hostSocket the daemon's socket as a path on the daemon's host, mounted into the reaper
     */
    public DockerReaper(DockerControl control, DockerDataPlane data, String hostSocket) {
        this.control = control;
        this.data = data;
        this.hostSocket = hostSocket;
    }

    /**
     * Makes sure the reaper runs: imports its image when missing, creates and starts its container when it is not
     * running. Several providers (in several JVMs) may race here; the first container wins and the others use it.
     * Checked again at most every ten seconds.
     *
     * @return completes when the reaper runs
     */
    public Mono<Void> ensure() {
        return Mono.fromRunnable(this::ensureBlocking)
                .subscribeOn(Schedulers.boundedElastic())
                .then();
    }

    void ensureBlocking() {
        if (verified && System.nanoTime() - verifiedAtNanos < VERIFIED_FOR.toNanos()) {
            return;
        }
        synchronized (lock) {
            if (verified && System.nanoTime() - verifiedAtNanos < VERIFIED_FOR.toNanos()) {
                return;
            }
            DockerClient client = control.client();
            checkArchitecture(client);
            for (int attempt = 0; ; attempt++) {
                InspectContainerResponse c = control.inspectContainer(CONTAINER_NAME);
                if (c != null
                        && c.getState() != null
                        && Boolean.TRUE.equals(c.getState().getRunning())) {
                    break; // whichever version: every reaper keeps the same contract
                }
                try {
                    if (c != null) {
                        // exited, or created and never started: replace it
                        control.removeContainer(c.getId(), "the stopped reaper");
                    }
                    String id = client.createContainerCmd(image())
                            .withName(CONTAINER_NAME)
                            .withEntrypoint("/sandbox-reaper")
                            .withCmd(
                                    "--socket",
                                    SOCKET_IN_CONTAINER,
                                    "--state",
                                    STATE_DIR,
                                    "--interval-ms",
                                    "1000",
                                    "--idle-exit-seconds",
                                    Long.toString(IDLE_EXIT.toSeconds()))
                            .withLabels(Map.of(VERSION_LABEL, tag()))
                            .withHostConfig(HostConfig.newHostConfig()
                                    .withAutoRemove(true)
                                    .withNetworkMode("none")
                                    .withReadonlyRootfs(true)
                                    .withCapDrop(Capability.ALL)
                                    .withSecurityOpts(List.of("no-new-privileges"))
                                    .withMemory(64L << 20)
                                    .withMemorySwap(64L << 20)
                                    .withPidsLimit(32L)
                                    // a mount, not a -v bind: a socket path that does not exist on the daemon's
                                    // host is an error here, not an empty directory made in its place
                                    .withMounts(List.of(
                                            new Mount()
                                                    .withType(MountType.BIND)
                                                    .withSource(hostSocket)
                                                    .withTarget(SOCKET_IN_CONTAINER),
                                            new Mount()
                                                    .withType(MountType.VOLUME)
                                                    .withSource(VOLUME)
                                                    .withTarget(STATE_DIR))))
                            .exec()
                            .getId();
                    try {
                        client.startContainerCmd(id).exec();
                    } catch (RuntimeException notStarted) {
                        // a created reaper that never runs is removed, not left for the next provider to find
                        control.removeContainer(id, "the reaper that did not start");
                        throw notStarted;
                    }
                    LOG.info("started the sandbox reaper ({}) on {}", image(), control.dockerHost());
                    break;
                } catch (ConflictException | NotFoundException e) {
                    // another provider created, started or removed it meanwhile: look again
                    if (attempt >= 5) {
                        throw cannotStart(e);
                    }
                } catch (RuntimeException e) {
                    throw cannotStart(e);
                }
            }
            verifiedAtNanos = System.nanoTime();
            verified = true;
        }
    }

    private volatile boolean architectureChecked;

    /** The binary is built for x86-64: on another daemon it could not run, and nothing would end any session. */
    private void checkArchitecture(DockerClient client) {
        if (architectureChecked) {
            return;
        }
        String arch;
        try {
            arch = String.valueOf(client.versionCmd().exec().getArch());
        } catch (RuntimeException e) {
            throw control.translate("ask the daemon its architecture", e);
        }
        if (!arch.equals("amd64") && !arch.equals("x86_64")) {
            throw new BackendException(
                    "the sandbox reaper is built for linux/amd64 and this Docker daemon runs on " + arch
                            + "; sessions would have nothing outside them to end them. Build the provider with"
                            + " reaper(false) to do without (see DockerSandboxProvider.Builder#reaper)",
                    null);
        }
        architectureChecked = true;
    }

    private RuntimeException cannotStart(RuntimeException e) {
        if (!(e instanceof com.github.dockerjava.api.exception.DockerException d)) {
            return control.translate("start the sandbox reaper", e); // the daemon itself is not there
        }
        return new BackendException(
                "cannot start the sandbox reaper (container " + CONTAINER_NAME + ", the daemon's socket " + hostSocket
                        + " mounted): " + DockerControl.message(e) + ". Without it nothing outside a sandbox ends"
                        + " it; set the socket's path on the daemon's host with reaperDockerSocket(..), or build the"
                        + " provider with reaper(false)",
                e,
                DockerErrors.retryableStatus(d.getHttpStatus()));
    }

    /** Forgets that the reaper was seen running, so the next {@link #ensure()} looks again. */
    void recheck() {
        verified = false;
    }

    /** The reaper's image, imported from the binary in this jar when the daemon lacks it. */
    private String image() {
        if (image != null) {
            return image;
        }
        String ref = IMAGE_REPOSITORY + ":" + tag();
        try {
            control.client().inspectImageCmd(ref).exec();
        } catch (NotFoundException e) {
            // docker-java's import sends a body the daemon cuts short ("unexpected EOF"): post it on the data plane
            byte[] tar = imageTar(binary());
            String answer = data.http()
                    .headers(h -> h.set(HttpHeaderNames.CONTENT_LENGTH, tar.length)
                            .set(HttpHeaderNames.CONTENT_TYPE, "application/x-tar"))
                    .post()
                    .uri("/images/create?fromSrc=-&repo=" + IMAGE_REPOSITORY + "&tag=" + tag())
                    .send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(tar)))
                    .responseSingle((resp, body) -> body.asString(StandardCharsets.UTF_8)
                            .defaultIfEmpty("")
                            .map(text -> resp.status().code() + " " + text))
                    .block(IMPORT_TIMEOUT);
            if (answer == null || !answer.startsWith("200 ") || answer.contains("\"error")) {
                throw new BackendException(
                        "cannot import the sandbox reaper's image: "
                                + (answer == null ? "no answer" : answer.substring(0, Math.min(answer.length(), 500))),
                        null);
            }
            LOG.info("imported the sandbox reaper's image {}", ref);
        } catch (RuntimeException e) {
            throw control.translate("inspect image '" + ref + "'", e);
        }
        image = ref;
        return ref;
    }

    private static byte[] binaryBytes;

    private static synchronized byte[] binary() {
        if (binaryBytes == null) {
            String resource = "/dev/sandbox/native/linux-x86_64/sandbox-reaper";
            try (InputStream in = DockerReaper.class.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new BackendException(
                            "the sandbox reaper's binary " + resource
                                    + " is missing from the class path (module sandbox-native); add it, or build the provider"
                                    + " with reaper(false)",
                            null);
                }
                binaryBytes = in.readNBytes(16 << 20);
            } catch (IOException e) {
                throw new BackendException("cannot read the sandbox reaper's binary: " + e.getMessage(), e);
            }
        }
        return binaryBytes;
    }

    private static String tag;

    /** The image tag: the first 12 hex digits of the binary's SHA-256, computed once. */
    private static synchronized String tag() {
        if (tag == null) {
            try {
                byte[] digest = MessageDigest.getInstance("SHA-256").digest(binary());
                tag = HexFormat.of().formatHex(digest, 0, 6);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-256 is missing from this JDK", e);
            }
        }
        return tag;
    }

    private static byte[] imageTar(byte[] binary) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(binary.length + 2048);
        out.writeBytes(TarStream.fileHeader(
                "sandbox-reaper", binary.length, 0755, Instant.now().getEpochSecond()));
        out.writeBytes(binary);
        out.writeBytes(new byte[TarStream.padding(binary.length)]);
        out.writeBytes(TarStream.trailer());
        return out.toByteArray();
    }

    /**
     * Renews the leases of sessions: each is kept alive until {@code leaseSeconds} from now, unless renewed again.
     *
     * @param sessionIds the sessions this provider holds
     * @param leaseSeconds the lease
     * @return completes when the reaper's state has them
     */
    public Mono<Void> renewLeases(Collection<String> sessionIds, long leaseSeconds) {
        return Mono.fromRunnable(() -> {
                    if (sessionIds.isEmpty()) {
                        return;
                    }
                    ensureBlocking();
                    long until = Instant.now().getEpochSecond() + leaseSeconds;
                    List<String[]> files = new ArrayList<>();
                    for (String id : sessionIds) {
                        files.add(new String[] {"leases/" + checked(id), Long.toString(until)});
                    }
                    write("leases/", files);
                })
                .subscribeOn(Schedulers.boundedElastic())
                .then();
    }

    /**
     * Records a session's deadline where only the reaper and the providers can write it.
     *
     * @param sessionId the session
     * @param epochSeconds when the reaper removes it, or 0 for no deadline (its lease applies)
     * @return completes when recorded
     */
    public Mono<Void> writeDeadline(String sessionId, long epochSeconds) {
        return Mono.fromRunnable(() -> {
                    ensureBlocking();
                    write("deadlines/", List.<String[]>of(new String[] {
                        "deadlines/" + checked(sessionId), Long.toString(epochSeconds)
                    }));
                })
                .subscribeOn(Schedulers.boundedElastic())
                .then();
    }

    /**
     * Writes files into the reaper's state. When the reaper's container is gone (404: it ended after its idle time,
     * or someone removed it) since it was last checked, it is started again and the write made once more.
     */
    private void write(String dir, List<String[]> files) {
        String answer = writeOnce(dir, files);
        if (answer != null && answer.startsWith("404 ")) {
            recheck();
            ensureBlocking();
            answer = writeOnce(dir, files);
        }
        if (answer == null || !answer.startsWith("200 ")) {
            recheck(); // gone or stopped: the next call starts it again
            throw new BackendException(
                    "cannot write the sandbox reaper's state: "
                            + (answer == null ? "no answer" : answer.substring(0, Math.min(answer.length(), 300))),
                    null,
                    true);
        }
    }

    /** One PUT of the files into the reaper's state: the daemon's status and body, or {@code null} for none. */
    private String writeOnce(String dir, List<String[]> files) {
        ByteArrayOutputStream tar = new ByteArrayOutputStream();
        long now = Instant.now().getEpochSecond();
        tar.writeBytes(TarStream.directoryHeader(dir, 0755, now));
        for (String[] f : files) {
            byte[] content = (f[1] + "\n").getBytes(StandardCharsets.US_ASCII);
            tar.writeBytes(TarStream.fileHeader(f[0], content.length, 0644, now));
            tar.writeBytes(content);
            tar.writeBytes(new byte[TarStream.padding(content.length)]);
        }
        tar.writeBytes(TarStream.trailer());
        byte[] body = tar.toByteArray();
        String answer;
        try {
            answer = data.http()
                    .headers(h -> h.set(HttpHeaderNames.CONTENT_LENGTH, body.length)
                            .set(HttpHeaderNames.CONTENT_TYPE, "application/x-tar"))
                    .put()
                    .uri("/containers/" + CONTAINER_NAME + "/archive?path=" + STATE_DIR)
                    .send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(body)))
                    .responseSingle((resp, text) -> text.asString(StandardCharsets.UTF_8)
                            .defaultIfEmpty("")
                            .map(t -> resp.status().code() + " " + t))
                    .block(WRITE_TIMEOUT);
        } catch (RuntimeException e) {
            recheck();
            throw DockerErrors.connection(control.dockerHost(), "write the sandbox reaper's state", e);
        }
        return answer;
    }

    /**
     * The deadline a provider recorded for a session after it was created.
     *
     * @param sessionId the session
     * @return epoch seconds (0: no deadline), or empty when none was recorded
     */
    public Mono<OptionalLong> readDeadline(String sessionId) {
        return Mono.fromCallable(() -> {
                    ensureBlocking();
                    String path = STATE_DIR + "/deadlines/" + checked(sessionId);
                    try (InputStream tar = control.client()
                            .copyArchiveFromContainerCmd(CONTAINER_NAME, path)
                            .exec()) {
                        byte[] header = tar.readNBytes(TarStream.BLOCK);
                        if (header.length < TarStream.BLOCK || header[156] != '0' && header[156] != 0) {
                            return OptionalLong.empty();
                        }
                        String sizeField = new String(header, 124, 12, StandardCharsets.US_ASCII)
                                .replace("\0", "")
                                .trim();
                        long size = sizeField.isEmpty() ? 0 : Long.parseLong(sizeField, 8);
                        if (size > 64) {
                            return OptionalLong.empty();
                        }
                        String text = new String(tar.readNBytes((int) size), StandardCharsets.US_ASCII).strip();
                        return text.matches("\\d{1,18}") ? OptionalLong.of(Long.parseLong(text)) : OptionalLong.empty();
                    } catch (NotFoundException e) {
                        return OptionalLong.empty();
                    } catch (NumberFormatException e) {
                        return OptionalLong.empty();
                    }
                })
                .subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * Runs one round of the reaper now, in its container, and waits for it.
     *
     * @return the ids of the sessions it removed
     */
    public Mono<List<String>> sweepOnce() {
        return Mono.fromCallable(() -> {
                    ensureBlocking();
                    return control.execCreate(
                            "reaper",
                            CONTAINER_NAME,
                            List.of("/sandbox-reaper", "--once", "--socket", SOCKET_IN_CONTAINER, "--state", STATE_DIR),
                            List.of(),
                            null,
                            null,
                            false);
                })
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(execId -> {
                    ExecStreamDecoder decoder = new ExecStreamDecoder(
                            (status, message) -> DockerErrors.execStart("reaper", status, message), () -> {});
                    ByteArrayOutputStream out = new ByteArrayOutputStream();
                    return data.exec(execId, null, decoder, Sinks.empty())
                            .doOnNext(e -> {
                                if (e instanceof RawEvent.Chunk c
                                        && c.stream() == RawEvent.STDOUT
                                        && out.size() < MAX_OUTPUT) {
                                    out.write(c.bytes(), 0, Math.min(c.bytes().length, MAX_OUTPUT - out.size()));
                                }
                            })
                            .then(Mono.fromSupplier(() -> removed(out.toString(StandardCharsets.UTF_8))));
                })
                // the reaper counts a removal another one already started (409) as done: wait for it to finish
                .flatMap(ids -> Mono.fromCallable(() -> {
                            awaitRemoved(ids);
                            return ids;
                        })
                        .subscribeOn(Schedulers.boundedElastic()));
    }

    /** Waits until no container of these sessions is left, at most 30 seconds. */
    private void awaitRemoved(List<String> sessionIds) {
        if (sessionIds.isEmpty()) {
            return;
        }
        Duration wait = Duration.ofSeconds(30);
        long deadline = System.nanoTime() + wait.toNanos();
        while (control.listSessions(Map.of(), true).stream()
                .anyMatch(c -> c.getLabels() != null
                        && sessionIds.contains(c.getLabels().get(DockerControl.SESSION_LABEL)))) {
            if (System.nanoTime() > deadline) {
                throw DockerErrors.removalTimedOut("the swept sessions " + sessionIds, wait);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw DockerErrors.interrupted("waiting for the swept sessions' removal", e);
            }
        }
    }

    /** The sessions a reaper's output says it removed. */
    static List<String> removed(String output) {
        List<String> ids = new ArrayList<>();
        Matcher m = REMOVED.matcher(output);
        while (m.find()) {
            ids.add(m.group(1));
        }
        return ids;
    }

    private static String checked(String sessionId) {
        if (sessionId == null || !SESSION_ID.matcher(sessionId).matches()) {
            throw new IllegalArgumentException("not a session id: " + sessionId);
        }
        return sessionId;
    }
}
