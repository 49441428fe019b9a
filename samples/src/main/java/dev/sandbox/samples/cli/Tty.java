package dev.sandbox.samples.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The controlling terminal, through {@code stty} on {@code /dev/tty}: its size, raw mode, and the settings to restore.
 * Each call runs {@code stty} and waits for it at most a few seconds.
 */
final class Tty {
    private static final long STTY_WAIT_SECONDS = 5;

    private final String saved;

    private Tty(String saved) {
        this.saved = saved;
    }

    /**
     * Opens the terminal, remembering its settings.
     *
     * @return the terminal
     * @throws UsageException when there is no terminal to use
     */
    static Tty open() throws UsageException {
        String saved = stty("-g");
        if (saved == null || saved.isBlank()) {
            throw new UsageException("sandbox shell needs a terminal: /dev/tty cannot be used (run it from one)");
        }
        return new Tty(saved.strip());
    }

    /**
     * The terminal's size.
     *
     * @return {@code {cols, rows}}, or {@code null} when unknown
     */
    int[] size() {
        String size = stty("size");
        if (size == null) {
            return null;
        }
        String[] parts = size.strip().split("\\s+");
        if (parts.length != 2) {
            return null;
        }
        try {
            int rows = Integer.parseInt(parts[0]);
            int cols = Integer.parseInt(parts[1]);
            return rows > 0 && cols > 0 ? new int[] {Math.min(cols, 1000), Math.min(rows, 1000)} : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * Whether this process's standard error is a terminal (Linux: what {@code /proc/self/fd/2} names).
     *
     * @return {@code true} for a terminal
     */
    static boolean stderrIsTerminal() {
        try {
            String target = java.nio.file.Files.readSymbolicLink(java.nio.file.Path.of("/proc/self/fd/2"))
                    .toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty") || target.equals("/dev/console");
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** Raw mode without echo: keys go to the remote terminal as typed, and it does the echoing. */
    void raw() {
        stty("raw -echo");
    }

    /** Restores the settings the terminal had when opened. */
    void restore() {
        stty(saved);
    }

    /** Runs {@code stty ARGS < /dev/tty}; returns its output, or {@code null} when it failed. */
    private static String stty(String args) {
        try {
            Process p = new ProcessBuilder("/bin/sh", "-c", "stty " + args + " < /dev/tty")
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(STTY_WAIT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            return p.exitValue() == 0 ? new String(out, StandardCharsets.UTF_8) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
