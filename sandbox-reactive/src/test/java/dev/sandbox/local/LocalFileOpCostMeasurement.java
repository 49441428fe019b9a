package dev.sandbox.local;

import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The cost of a file operation through the files API: 10,000 stats, reads and writes of a small file, sequentially,
 * after a warm-up; best of five rounds. A measurement, not a check: run with {@code -Dtest=LocalFileOpCostMeasurement -Dsandbox.measure=true}.
 */
@EnabledIfSystemProperty(named = "sandbox.measure", matches = "true")
class LocalFileOpCostMeasurement {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int OPS = 10_000;

    @Test
    void measure() {
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            SandboxSession s = provider.create(SessionOptions.defaults()).block(WAIT);
            SandboxFiles files = s.files();
            files.mkdir("a/b").block(WAIT);
            files.write("a/b/f.txt", "hello".getBytes()).block(WAIT);
            for (int round = 0; round < 2; round++) { // warm-up
                run(files, 0);
                run(files, 1);
                run(files, 2);
            }
            String[] names = {"stat", "readAllBytes", "write"};
            for (int op = 0; op < 3; op++) {
                long best = Long.MAX_VALUE;
                for (int round = 0; round < 5; round++) {
                    best = Math.min(best, run(files, op));
                }
                System.out.printf("COST %s: %.2f us/op (best of 5 x %d)%n", names[op], best / 1000.0 / OPS, OPS);
            }
            s.destroy().block(WAIT);
        }
    }

    private static long run(SandboxFiles files, int op) {
        byte[] content = "hello".getBytes();
        long start = System.nanoTime();
        for (int i = 0; i < OPS; i++) {
            switch (op) {
                case 0 -> files.stat("a/b/f.txt").block(WAIT);
                case 1 -> files.readAllBytes("a/b/f.txt", 100).block(WAIT);
                default -> files.write("a/b/g.txt", content).block(WAIT);
            }
        }
        return System.nanoTime() - start;
    }
}
