package dev.sandbox.agentimage;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a command (the {@code docker} CLI, {@code tar}) as a child process with a timeout, its stdout and stderr in
 * temporary files of which at most {@link #MAX_OUTPUT} bytes each are read back.
 */
final class DockerCli {
    static final int MAX_OUTPUT = 1 << 20;

    /** What a command did: its exit code, stdout and stderr (each cut at {@link #MAX_OUTPUT} bytes). */
    record Result(List<String> command, int exit, String out, String err) {
        /** This result, after asserting exit code 0 (the message has the command and its stderr). */
        Result ok() {
            if (exit != 0) {
                throw new AssertionError(String.join(" ", command) + " exited " + exit + ": " + err + out);
            }
            return this;
        }
    }

    private DockerCli() {}

    static Result docker(Duration timeout, String... args) {
        List<String> command = new ArrayList<>(List.of("docker"));
        command.addAll(List.of(args));
        return run(timeout, command);
    }

    static Result run(Duration timeout, List<String> command) {
        Path out = null;
        Path err = null;
        try {
            out = Files.createTempFile("agent-image-it", ".out");
            err = Files.createTempFile("agent-image-it", ".err");
            Process p = new ProcessBuilder(command)
                    .redirectInput(
                            ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError(String.join(" ", command) + " did not end within " + timeout);
            }
            return new Result(List.copyOf(command), p.exitValue(), head(out), head(err));
        } catch (IOException e) {
            throw new AssertionError("cannot run " + String.join(" ", command) + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while running " + String.join(" ", command), e);
        } finally {
            delete(out);
            delete(err);
        }
    }

    private static String head(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return new String(in.readNBytes(MAX_OUTPUT), StandardCharsets.UTF_8);
        }
    }

    private static void delete(Path file) {
        if (file != null) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                // a temporary file left behind is not the test's failure
            }
        }
    }
}
