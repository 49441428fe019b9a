package dev.sandbox.samples.webflux;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;

/** Looks at host processes through /proc, so tests can check that a command really ended. */
final class Processes {
    private Processes() {}

    /** Whether the process runs: it exists and is not a zombie waiting to be reaped. */
    static boolean running(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state != 'Z' && state != 'X';
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            // a process reaped while its stat is read fails the read with ESRCH; its /proc entry is then gone
            if (String.valueOf(e.getMessage()).contains("No such process")
                    || !Files.exists(Path.of("/proc", Long.toString(pid)))) {
                return false;
            }
            throw new IllegalStateException("cannot read /proc/" + pid + "/stat", e);
        }
    }

    /** Waits until the process has ended; false if it still runs after the timeout. */
    static boolean awaitGone(long pid, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (running(pid)) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /** Bytes the process has written so far, from /proc/PID/io. */
    static long bytesWritten(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "io"))) {
            if (line.startsWith("wchar:")) {
                return Long.parseLong(line.substring("wchar:".length()).trim());
            }
        }
        throw new IllegalStateException("/proc/" + pid + "/io has no wchar line");
    }

    /** Reads a pid a shell command wrote to a file, waiting for it to appear. */
    static long readPid(Path file, Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (Files.exists(file)) {
                String text = Files.readString(file).trim();
                if (!text.isEmpty()) {
                    return Long.parseLong(text);
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no pid in " + file + " after " + timeout);
            }
            Thread.sleep(10);
        }
    }
}
