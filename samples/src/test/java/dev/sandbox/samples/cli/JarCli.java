package dev.sandbox.samples.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs the shaded {@code sandbox.jar} as a subprocess, as a user would, draining both pipes. */
final class JarCli {
    private JarCli() {}

    /** What a finished CLI run printed. */
    record Result(int code, String out, String err) {}

    static Path jar() {
        Path jar = Path.of(System.getProperty("sandbox.jar", "target/sandbox.jar"));
        assertThat(jar).as("the shaded CLI jar, built in the package phase").isRegularFile();
        return jar;
    }

    /** Writes a token file as a user should: readable by its owner only (others get a warning). */
    static Path tokenFile(Path file, String token) throws IOException {
        java.nio.file.Files.writeString(file, token + "\n");
        java.nio.file.Files.setPosixFilePermissions(
                file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    static List<String> command(String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-jar");
        command.add(jar().toString());
        command.addAll(List.of(args));
        return command;
    }

    static Result run(Path dir, String... args) throws Exception {
        Process p = new ProcessBuilder(command(args))
                .directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        boolean exited = p.waitFor(90, TimeUnit.SECONDS);
        if (!exited) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        assertThat(exited).as("the CLI exited: " + List.of(args)).isTrue();
        return new Result(p.exitValue(), out.get(30, TimeUnit.SECONDS), err.get(30, TimeUnit.SECONDS));
    }

    /** A thread of its own for each blocking read: the common pool may have a single thread on a small machine. */
    private static final java.util.concurrent.Executor THREAD = task -> {
        Thread t = new Thread(task, "jar-cli-pipe");
        t.setDaemon(true);
        t.start();
    };

    static CompletableFuture<String> drain(java.io.InputStream in) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try (in) {
                        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                },
                THREAD);
    }

    /** A running {@code sandbox serve}: its URL, read from its first line. */
    record Server(Process process, String url, CompletableFuture<String> err) implements AutoCloseable {
        static Server start(Path dir, Path tokenFile, String... more) throws Exception {
            List<String> args = new ArrayList<>(List.of("serve", "--port", "0", "--token-file", tokenFile.toString()));
            args.addAll(List.of(more));
            Process p = new ProcessBuilder(command(args.toArray(String[]::new)))
                    .directory(dir.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .start();
            CompletableFuture<String> err = drain(p.getErrorStream());
            BufferedReader lines =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<String> first = CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return lines.readLine();
                        } catch (IOException e) {
                            throw new java.io.UncheckedIOException(e);
                        }
                    },
                    THREAD);
            String line;
            try {
                line = first.get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError("sandbox serve printed no URL; stderr: " + err.getNow(""), e);
            }
            assertThat(line)
                    .as("serve's first line")
                    .matches("sandbox: serving (local|docker|kubernetes) sessions on https?://127\\.0\\.0\\.1:\\d+");
            // keep draining stdout so the server can never block on it
            CompletableFuture.runAsync(
                    () -> {
                        try {
                            while (lines.readLine() != null) {
                                // discard
                            }
                        } catch (IOException e) {
                            // the server ended
                        }
                    },
                    THREAD);
            return new Server(p, line.substring(line.indexOf("http")), err);
        }

        /** Sends SIGTERM and waits for the graceful stop. */
        int stop() throws Exception {
            process.toHandle().destroy(); // SIGTERM, leaving the pipes open to read what it says on the way out
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError("sandbox serve did not stop within 60 s of SIGTERM");
            }
            return process.exitValue();
        }

        @Override
        public void close() {
            if (process.isAlive()) {
                process.destroy();
                try {
                    if (!process.waitFor(60, TimeUnit.SECONDS)) {
                        process.destroyForcibly();
                    }
                } catch (InterruptedException e) {
                    process.destroyForcibly();
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
