package dev.sandbox.implementation.local;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cost of resolving beneath the root, without the files API's thread hop: 10,000 stats and open-read-closes of
 * a file two directories down, best of seven rounds in thread CPU time (the machine is shared), with openat2 and with the fallback walk. A measurement, not a
 * check: run with {@code -Dtest=RawCostMeasurement -Dsandbox.measure=true}.
 */
@EnabledIfSystemProperty(named = "sandbox.measure", matches = "true")
class RawCostMeasurement {
    @Test
    void measure(@TempDir Path tmp) throws Exception {
        Path dir = tmp.toRealPath();
        Files.createDirectories(dir.resolve("a/b"));
        Files.writeString(dir.resolve("a/b/f.txt"), "hello");
        try (SessionRoot root = new SessionRoot(dir)) {
            for (boolean fallback : new boolean[] {false, true}) {
                SessionRoot.forceFallback = fallback;
                for (int op = 0; op < 2; op++) {
                    long best = Long.MAX_VALUE;
                    for (int round = 0; round < 7; round++) {
                        long start = java.lang.management.ManagementFactory.getThreadMXBean()
                                .getCurrentThreadCpuTime();
                        for (int i = 0; i < 10_000; i++) {
                            String rel = root.relative("path", "a/b/f.txt");
                            if (op == 0) {
                                root.info("path", "a/b/f.txt", rel);
                            } else {
                                try (FileChannel ch = root.openRead("path", "a/b/f.txt", rel)) {
                                    ch.read(ByteBuffer.allocate(16));
                                }
                            }
                        }
                        best = Math.min(
                                best,
                                java.lang.management.ManagementFactory.getThreadMXBean()
                                                .getCurrentThreadCpuTime()
                                        - start);
                    }
                    System.out.printf(
                            "RAW%s %s: %.2f us/op%n",
                            fallback ? " fallback" : "", op == 0 ? "stat" : "open+read", best / 1000.0 / 10_000);
                }
            }
        } finally {
            SessionRoot.forceFallback = false;
        }
    }
}
