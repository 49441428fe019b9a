package dev.sandbox.readme;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/** Runs README commands with bash, as a user's shell would, in a given directory and environment. */
final class Shell {
    /** What a finished command printed. */
    record Result(String command, int code, String out, String err) {
        @Override
        public String toString() {
            return "`" + command + "` exited " + code + "\n--- stdout:\n" + tail(out) + "\n--- stderr:\n" + tail(err);
        }

        private static String tail(String s) {
            return s.length() <= 4000 ? s : "..." + s.substring(s.length() - 4000);
        }
    }

    private final Path dir;
    private final Map<String, String> env;

    Shell(Path dir, Map<String, String> env) {
        this.dir = dir;
        this.env = env;
    }

    Shell in(Path other) {
        return new Shell(other, env);
    }

    Path dir() {
        return dir;
    }

    private ProcessBuilder builder(String script) {
        ProcessBuilder pb = new ProcessBuilder("bash", "-c", script).directory(dir.toFile());
        pb.environment().putAll(env);
        return pb;
    }

    /** Runs {@code script} to its end, with {@code stdin} as its input; kills it (and its children) past the timeout. */
    Result run(String script, String stdin, Duration timeout) throws IOException, InterruptedException {
        Process p = builder(script).start();
        Collector out = Collector.start(p.getInputStream());
        Collector err = Collector.start(p.getErrorStream());
        try (OutputStream in = p.getOutputStream()) {
            in.write(stdin.getBytes(StandardCharsets.UTF_8));
        } catch (IOException closedEarly) {
            // the command did not read its input
        }
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            kill(p);
            throw new AssertionError("`" + script + "` did not end within " + timeout + "; stdout so far:\n"
                    + out.text() + "\nstderr so far:\n" + err.text());
        }
        out.join();
        err.join();
        return new Result(script, p.exitValue(), out.text(), err.text());
    }

    Result run(String script, Duration timeout) throws IOException, InterruptedException {
        return run(script, "", timeout);
    }

    /**
     * Starts a command that runs until stopped (a server) and waits for its output to match {@code ready}; the script
     * should {@code exec} it, so that stopping the process stops the server.
     */
    Background start(String script, Pattern ready, Duration timeout) throws IOException, InterruptedException {
        Process p = builder(script).redirectErrorStream(true).start();
        p.getOutputStream().close();
        Collector out = Collector.start(p.getInputStream());
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!ready.matcher(out.text()).find()) {
            if (!p.isAlive()) {
                out.join();
                throw new AssertionError(
                        "`" + script + "` exited " + p.exitValue() + " before it was ready:\n" + out.text());
            }
            if (System.nanoTime() > deadline) {
                kill(p);
                throw new AssertionError("`" + script + "` printed no line matching " + ready + " within " + timeout
                        + ":\n" + out.text());
            }
            Thread.sleep(50);
        }
        return new Background(script, p, out);
    }

    /** A command started by {@link #start}. */
    record Background(String command, Process process, Collector out) implements AutoCloseable {
        /** Stops it as Ctrl-C would (SIGTERM, then SIGKILL after 20 s) and returns its exit code. */
        int stop() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                kill(process);
            }
            out.join();
            return process.exitValue();
        }

        @Override
        public void close() {
            if (process.isAlive()) {
                try {
                    stop();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    process.destroyForcibly();
                }
            }
        }
    }

    static void kill(Process p) throws InterruptedException {
        List<ProcessHandle> children = p.descendants().toList();
        p.destroyForcibly();
        children.forEach(ProcessHandle::destroyForcibly);
        p.waitFor(10, TimeUnit.SECONDS);
    }

    /** Reads a stream to its end on a thread of its own, keeping the text (bounded at 4 MiB). */
    static final class Collector {
        private static final int MAX = 4 << 20;
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final Thread thread;

        private Collector(InputStream in) {
            thread = new Thread(
                    () -> {
                        byte[] buf = new byte[8192];
                        try (in) {
                            for (int n; (n = in.read(buf)) > 0; ) {
                                synchronized (bytes) {
                                    if (bytes.size() < MAX) {
                                        bytes.write(buf, 0, Math.min(n, MAX - bytes.size()));
                                    }
                                }
                            }
                        } catch (IOException closed) {
                            // the process ended
                        }
                    },
                    "readme-command-output");
            thread.setDaemon(true);
        }

        static Collector start(InputStream in) {
            Collector c = new Collector(in);
            c.thread.start();
            return c;
        }

        String text() {
            synchronized (bytes) {
                return bytes.toString(StandardCharsets.UTF_8);
            }
        }

        void join() throws InterruptedException {
            thread.join(TimeUnit.SECONDS.toMillis(30));
        }
    }
}
