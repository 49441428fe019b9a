package dev.sandbox.implementation.docker;

import dev.sandbox.BackendException;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * Installs {@code sandbox-agent} (module {@code sandbox-agent}, shipped in its jar) into a created container before
 * it starts, through the archive API ({@code PUT /containers/{id}/archive}): it works with a remote daemon too and
 * needs no host path. The agent is then the container's main process ({@link #entrypoint}): it serves commands, files
 * and watches on an abstract Unix socket inside the container, which each client connection reaches with one daemon
 * exec of {@code sandbox-agent relay} ({@link DockerAgentTransport}).
 */
final class AgentInstaller {
    /** The directory of the agent in every session container. */
    static final String DIR = "/.dev-sandbox";

    /** The agent's path in every session container. */
    static final String PATH = DIR + "/agent";

    private static final String RESOURCE = "/dev/sandbox/agent/linux-x86_64/sandbox-agent";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int MAX_BINARY = 8 * 1024 * 1024;

    /** The tar for a container whose root is writable (the directory and the binary), and for one whose isn't. */
    private static volatile byte[][] tars;

    private AgentInstaller() {}

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
     * Copies the agent into a created container; blocks (at most 30 s), so call it off non-blocking threads.
     *
     * @param data the data plane
     * @param containerId the created container
     * @param readOnlyRoot whether its root file system is read-only ({@value #DIR} is then a volume of its own)
     */
    static void install(DockerDataPlane data, String containerId, boolean readOnlyRoot) {
        byte[] tar = tars()[readOnlyRoot ? 1 : 0];
        String target = readOnlyRoot ? DIR : "/";
        String answer;
        try {
            answer = data.http()
                    .headers(h -> h.set(HttpHeaderNames.CONTENT_LENGTH, tar.length)
                            .set(HttpHeaderNames.CONTENT_TYPE, "application/x-tar"))
                    .put()
                    .uri("/containers/" + containerId + "/archive?path=" + target)
                    .send(Mono.fromSupplier(() -> Unpooled.wrappedBuffer(tar)))
                    .responseSingle((resp, text) -> text.asString(StandardCharsets.UTF_8)
                            .defaultIfEmpty("")
                            .map(t -> resp.status().code() + " " + t))
                    .block(TIMEOUT);
        } catch (RuntimeException e) {
            throw DockerErrors.connection(data.dockerHost(), "install the sandbox agent", e);
        }
        if (answer == null || !answer.startsWith("200 ")) {
            throw new BackendException(
                    "cannot install the sandbox agent into container " + containerId + ": "
                            + (answer == null ? "no answer" : answer.substring(0, Math.min(answer.length(), 300))),
                    null,
                    false);
        }
    }

    private static byte[][] tars() {
        byte[][] t = tars;
        if (t == null) {
            byte[] binary = binary();
            long now = Instant.now().getEpochSecond();
            ByteArrayOutputStream writable = new ByteArrayOutputStream(binary.length + 4096);
            writable.writeBytes(TarStream.directoryHeader(DIR.substring(1) + "/", 0755, now));
            entry(writable, DIR.substring(1) + "/agent", binary, now);
            writable.writeBytes(TarStream.trailer());
            ByteArrayOutputStream volume = new ByteArrayOutputStream(binary.length + 4096);
            entry(volume, "agent", binary, now);
            volume.writeBytes(TarStream.trailer());
            t = new byte[][] {writable.toByteArray(), volume.toByteArray()};
            tars = t;
        }
        return t;
    }

    private static void entry(ByteArrayOutputStream tar, String name, byte[] content, long now) {
        tar.writeBytes(TarStream.fileHeader(name, content.length, 0755, now));
        tar.writeBytes(content);
        tar.writeBytes(new byte[TarStream.padding(content.length)]);
    }

    /**
     * The agent's bytes from this provider's class path.
     *
     * @return the static binary
     */
    static byte[] binary() {
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
