package dev.sandbox.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Mono;

/**
 * The workdir root a server makes when given none ({@code sandbox-server-workdirs-*} under the temporary directory)
 * is removed when the server stops, with what its sessions left in it, and without following the links they left; a
 * root the caller gave is left alone.
 */
class WorkdirRootCleanupTest {
    private static final String TOKEN = "workdir-root-token-0123456789abcdef";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private static final Path TMP = Path.of(System.getProperty("java.io.tmpdir"));

    private static Set<Path> madeRoots() throws IOException {
        try (Stream<Path> list = Files.list(TMP)) {
            return list.filter(p -> p.getFileName().toString().startsWith("sandbox-server-workdirs-"))
                    .collect(Collectors.toSet());
        }
    }

    /**
     * Runs a session in the server's root itself, leaves files and links there, and says where it was: the root is
     * the one of the candidates the server accepts as a workdir (other servers on the machine make such directories
     * too, and a server refuses a workdir outside its root).
     */
    private static Path leaveFilesInTheRoot(SandboxServer server, Path outside, Set<Path> candidates)
            throws IOException {
        try (RemoteSandboxProvider remote = RemoteSandboxProvider.builder()
                .baseUrl(server.baseUrl())
                .token(TOKEN.toCharArray())
                .build()) {
            for (Path candidate : candidates) {
                SandboxSession session = remote.create(SessionOptions.defaults()
                                .withWorkdir(candidate.toRealPath().toString()))
                        .onErrorResume(InvalidArgumentException.class, e -> Mono.empty())
                        .block(WAIT);
                if (session == null) {
                    continue;
                }
                String root = session.run(ExecOptions.shell("mkdir -p left/deeper && echo x > left/deeper/file"
                                + " && echo y > top && ln -s '" + outside + "' link && ln -s '"
                                + outside.getParent() + "' dirlink && pwd"))
                        .block(WAIT)
                        .stdout()
                        .trim();
                return Path.of(root);
            }
        }
        throw new AssertionError("the server accepted none of " + candidates + " as a workdir");
    }

    @Test
    void theRootTheServerMadeIsRemovedWhenItStops(@TempDir Path test) throws Exception {
        Path outside = Files.writeString(test.resolve("keep-me"), "not the server's");
        try (LocalSandboxProvider local = LocalSandboxProvider.create()) {
            Set<Path> before = madeRoots();
            SandboxServer server = SandboxServer.builder(local)
                    .port(0)
                    .token(TOKEN.toCharArray())
                    .start();
            Path root;
            try {
                Set<Path> made = new HashSet<>(madeRoots());
                made.removeAll(before);
                root = leaveFilesInTheRoot(server, outside, made);
                assertThat(root.getFileName().toString()).startsWith("sandbox-server-workdirs-");
                assertThat(root.resolve("left/deeper/file")).exists();
            } finally {
                server.close();
            }
            assertThat(root).doesNotExist();
            // the links were removed, not followed
            assertThat(outside).hasContent("not the server's");
            assertThat(test).isDirectory();
        }
    }

    @Test
    void aRootTheCallerGaveIsLeftAlone(@TempDir Path given) throws Exception {
        Path outside = Files.writeString(Files.createTempFile("workdir-root-outside-", ".txt"), "kept");
        try (LocalSandboxProvider local = LocalSandboxProvider.create()) {
            SandboxServer server = SandboxServer.builder(local)
                    .port(0)
                    .token(TOKEN.toCharArray())
                    .workdirRoot(given)
                    .start();
            try {
                assertThat(leaveFilesInTheRoot(server, outside, Set.of(given))).isEqualTo(given.toRealPath());
            } finally {
                server.close();
            }
            assertThat(given.resolve("left/deeper/file")).exists();
            assertThat(given.resolve("top")).exists();
        } finally {
            Files.delete(outside);
        }
    }
}
