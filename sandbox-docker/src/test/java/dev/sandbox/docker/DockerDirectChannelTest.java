package dev.sandbox.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The direct channel on a daemon of this host, as a user sees it: sessions say they use it, their commands run over
 * it while everything the relay needed is killed, their directory goes with them, a provider can be told not to use
 * it, and code in the sandbox that swaps the socket for a link, a file, an unreadable directory or a listener of its
 * own harms nothing on the host: the session goes on over the relay or over what it made.
 */
@RequiresDocker
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerDirectChannelTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private DockerTestSupport support;
    private DockerSandboxProvider provider;

    @BeforeAll
    void start() {
        support = new DockerTestSupport();
        provider = DockerTestSupport.unsweptProvider();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    @Test
    void aSessionOnThisHostsDaemonUsesItsDirectChannelAndItsDirectoryGoesWithIt() throws IOException {
        SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
        Path dir;
        try {
            assertThat(s.run(ExecOptions.shell("echo hi")).block(WAIT).stdout()).isEqualTo("hi\n");
            assertThat(s.ping().block(WAIT).processLauncher()).isEqualTo(DockerSandboxProvider.PROCESS_LAUNCHER_DIRECT);
            dir = channelDirectory(s.id());
            assertThat(Files.getAttribute(dir, "unix:mode", LinkOption.NOFOLLOW_LINKS))
                    .satisfies(m ->
                            assertThat((Integer) m & 077).as("mode of %s", dir).isZero());
            assertThat(dir.resolve("agent.sock")).exists();
            // no relay holds this connection: killing every process but the agent and the caller cuts nothing
            ExecResult r = s.run(ExecOptions.shell("sleep 0.2; kill -9 -1; echo survived"))
                    .block(WAIT);
            assertThat(r.stdout()).isEqualTo("survived\n");
            assertThat(s.run(ExecOptions.shell("echo again")).block(WAIT).stdout())
                    .isEqualTo("again\n");
        } finally {
            s.destroy().block(WAIT);
        }
        assertThat(dir).doesNotExist();
    }

    @Test
    void aProviderToldNotToUsesTheRelay() {
        try (DockerSandboxProvider relayOnly = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .sweepInterval(null)
                .directChannel(false)
                .build()) {
            SandboxSession s = relayOnly.create(support.sessionOptions()).block(WAIT);
            try {
                assertThat(s.run(ExecOptions.shell("echo hi")).block(WAIT).stdout())
                        .isEqualTo("hi\n");
                assertThat(s.ping().block(WAIT).processLauncher())
                        .isEqualTo(DockerSandboxProvider.PROCESS_LAUNCHER_RELAY);
            } finally {
                s.destroy().block(WAIT);
            }
        }
    }

    /**
     * The sandbox puts something at the offered path before a client takes it (as the host's removal of the taken
     * socket makes it do again here): a link to a listener on the host, a regular file, an unreadable directory with
     * files in it. A fresh provider attaching to the session takes none of them: the host's listener sees no
     * connection, the session works over the relay, and what the sandbox put there is gone from the host.
     */
    @Test
    void whatTheSandboxPutsInPlaceOfItsSocketIsNeverFollowedAndTheSessionGoesOnOverTheRelay(@TempDir Path tmp)
            throws IOException {
        Path hostSocket = tmp.resolve("host.sock");
        try (ServerSocketChannel hostListener = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            hostListener.bind(UnixDomainSocketAddress.of(hostSocket));
            hostListener.configureBlocking(false);
            String[] attacks = {
                "ln -s " + hostSocket + " /.dev-sandbox-channel/agent.sock",
                "echo not a socket > /.dev-sandbox-channel/agent.sock",
                "mkdir -p /.dev-sandbox-channel/agent.sock/deep && touch /.dev-sandbox-channel/agent.sock/deep/f"
                        + " && chmod 000 /.dev-sandbox-channel/agent.sock/deep /.dev-sandbox-channel/agent.sock",
            };
            for (String attack : attacks) {
                SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
                try {
                    assertThat(s.run(ExecOptions.shell("echo up")).block(WAIT).stdout())
                            .isEqualTo("up\n");
                    Path dir = channelDirectory(s.id());
                    Files.delete(dir.resolve("agent.sock")); // as if no client had taken it yet
                    assertThat(s.run(ExecOptions.shell(attack + " && echo done"))
                                    .block(WAIT)
                                    .stdout())
                            .as(attack)
                            .isEqualTo("done\n");
                    try (DockerSandboxProvider other = DockerTestSupport.unsweptProvider()) {
                        SandboxSession attached = other.attach(s.id()).block(WAIT);
                        assertThat(attached.run(ExecOptions.shell("echo over the relay"))
                                        .block(WAIT)
                                        .stdout())
                                .as(attack)
                                .isEqualTo("over the relay\n");
                        assertThat(attached.ping().block(WAIT).processLauncher())
                                .as(attack)
                                .isEqualTo(DockerSandboxProvider.PROCESS_LAUNCHER_RELAY);
                    }
                    try (SocketChannel accepted = hostListener.accept()) {
                        assertThat(accepted)
                                .as("a connection to the host's listener after " + attack)
                                .isNull();
                    }
                    assertThat(dir.resolve("agent.sock")).as(attack).doesNotExist();
                    assertThat(dir.resolve("in").resolve("agent.sock"))
                            .as(attack)
                            .satisfies(p -> assertThat(Files.exists(p, LinkOption.NOFOLLOW_LINKS))
                                    .isFalse());
                } finally {
                    s.destroy().block(WAIT);
                }
            }
        }
    }

    /**
     * The sandbox starts a listener of its own at the offered path (a second agent): a client that takes it talks to
     * the sandbox, which it does anyway; the host is unharmed and the session works over what the sandbox made.
     */
    @Test
    void aListenerTheSandboxMakesInPlaceOfItsSocketIsTheSandboxTalking() throws IOException {
        SandboxSession s = provider.create(support.sessionOptions()).block(WAIT);
        try {
            assertThat(s.run(ExecOptions.shell("echo up")).block(WAIT).stdout()).isEqualTo("up\n");
            Path dir = channelDirectory(s.id());
            Files.delete(dir.resolve("agent.sock"));
            s.start(ExecOptions.shell("exec /.dev-sandbox/agent init --socket impostor --channel"
                            + " /.dev-sandbox-channel/agent.sock"))
                    .block(WAIT);
            try (DockerSandboxProvider other = DockerTestSupport.unsweptProvider()) {
                SandboxSession attached = other.attach(s.id()).block(WAIT);
                // the impostor is not process 1: it runs the command as the real one would, in the same sandbox
                assertThat(attached.run(ExecOptions.shell("echo impostor; echo $PPID"))
                                .block(WAIT)
                                .stdout())
                        .startsWith("impostor\n")
                        .doesNotContain("\n1\n");
                assertThat(attached.ping().block(WAIT).processLauncher())
                        .isEqualTo(DockerSandboxProvider.PROCESS_LAUNCHER_DIRECT);
            }
        } finally {
            s.destroy().block(WAIT);
        }
    }

    /** The session's directory on this host, found under the temporary directory by its id. */
    private static Path channelDirectory(String sessionId) throws IOException {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (Stream<Path> roots = Files.list(tmp)) {
            return roots.filter(p -> p.getFileName().toString().startsWith("dev-sandbox-channels-"))
                    .map(p -> p.resolve(sessionId))
                    .filter(Files::isDirectory)
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no channel directory of " + sessionId + " under " + tmp));
        }
    }
}
