package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sandbox serve} without {@code --root} makes its workdir root ({@code sandbox-server-workdirs-*}) in the
 * temporary directory and removes it when SIGTERM stops it. The CLI is a real {@code java -jar} process with a
 * temporary directory of its own, so no other server on the machine counts.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ServeWorkdirsCliIT {
    @TempDir
    Path dir;

    private static List<String> made(Path tmp) throws IOException {
        try (Stream<Path> list = Files.list(tmp)) {
            return list.map(p -> p.getFileName().toString())
                    .filter(name -> name.startsWith("sandbox-server-workdirs-"))
                    .toList();
        }
    }

    @Test
    void serveRemovesTheWorkdirRootItMadeWhenSigtermStopsIt() throws Exception {
        Path tmp = Files.createDirectory(dir.resolve("tmp"));
        Path token = Files.writeString(dir.resolve("token"), "serve-workdirs-token-0123456789abcdef");
        Files.setPosixFilePermissions(token, PosixFilePermissions.fromString("rw-------"));
        List<String> command =
                new java.util.ArrayList<>(JarCli.command("serve", "--port", "0", "--token-file", token.toString()));
        command.add(1, "-Djava.io.tmpdir=" + tmp);
        Process serve = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        try {
            CompletableFuture<String> err = JarCli.drain(serve.getErrorStream());
            BufferedReader out =
                    new BufferedReader(new InputStreamReader(serve.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
                try {
                    return out.readLine();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            assertThat(first.get(90, TimeUnit.SECONDS))
                    .as(() -> err.getNow(""))
                    .startsWith("sandbox: serving local sessions on http://127.0.0.1:");
            assertThat(made(tmp)).as("the root serve made while it serves").hasSize(1);

            serve.toHandle().destroy(); // SIGTERM
            assertThat(serve.waitFor(60, TimeUnit.SECONDS))
                    .as("serve stops within 60 s of SIGTERM")
                    .isTrue();
            assertThat(made(tmp))
                    .as("what serve left; stderr: %s", err.get(30, TimeUnit.SECONDS))
                    .isEmpty();
        } finally {
            serve.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
