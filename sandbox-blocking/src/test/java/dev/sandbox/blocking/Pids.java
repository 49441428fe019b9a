package dev.sandbox.blocking;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/** Helpers to observe a command's process from the outside through a pid file it writes. */
final class Pids {
    private Pids() {}

    /** A shell command line that records its pid in {@code pidFile}, then runs {@code rest} in the same process. */
    static String recordingPid(Path pidFile, String rest) {
        return "echo $$ > '" + pidFile + "'; " + rest;
    }

    /** Waits until the pid file holds a pid and returns it. */
    static long await(Path pidFile, Duration within) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (System.nanoTime() < deadline) {
            if (Files.exists(pidFile)) {
                String text = Files.readString(pidFile).trim();
                if (!text.isEmpty()) {
                    return Long.parseLong(text);
                }
            }
            Thread.sleep(10);
        }
        return fail("no pid in " + pidFile + " after " + within);
    }

    static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** Fails unless the process is gone within {@code within}. */
    static void assertGoneWithin(long pid, Duration within) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (alive(pid)) {
            if (System.nanoTime() > deadline) {
                fail("process " + pid + " is still alive after " + within);
            }
            Thread.sleep(10);
        }
    }
}
