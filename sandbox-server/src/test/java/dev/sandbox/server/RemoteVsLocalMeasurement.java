package dev.sandbox.server;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A quick measurement of the remote provider against the local one, in the same run: latency of {@code run true}
 * and lines per second of {@code seq 1 N} through {@code exec}. Not a benchmark (no JMH, few samples); run it with
 * {@code mvn -pl sandbox-server test -Dtest=RemoteVsLocalMeasurement -Dsandbox.measure=true}.
 */
@EnabledIfSystemProperty(named = "sandbox.measure", matches = "true")
class RemoteVsLocalMeasurement {
    private static final char[] TOKEN = "measurement-token-0123456789".toCharArray();
    private static final Duration WAIT = Duration.ofMinutes(5);

    @Test
    void remoteAgainstLocal() {
        int runs = Integer.getInteger("sandbox.measure.runs", 300);
        int lines = Integer.getInteger("sandbox.measure.lines", 10_000_000);
        try (LocalSandboxProvider local = LocalSandboxProvider.create();
                SandboxServer server = SandboxServer.builder(local)
                        .port(0)
                        .token(TOKEN)
                        .execWindowBytes(Integer.getInteger("sandbox.measure.window", 1024 * 1024))
                        .start();
                RemoteSandboxProvider remote = RemoteSandboxProvider.builder()
                        .baseUrl(server.baseUrl())
                        .token(TOKEN)
                        .build()) {
            SandboxSession l = local.create(SessionOptions.defaults()).block(WAIT);
            SandboxSession r = remote.create(SessionOptions.defaults()).block(WAIT);
            double[] localRun = latency(l, runs);
            double[] remoteRun = latency(r, runs);
            double localLines = linesPerSecond(l, lines);
            double remoteLines = linesPerSecond(r, lines);
            System.out.printf(
                    "run true (%d runs, ms): local p50 %.2f p90 %.2f | remote p50 %.2f p90 %.2f | ratio p50 %.2f%n",
                    runs, localRun[0], localRun[1], remoteRun[0], remoteRun[1], remoteRun[0] / localRun[0]);
            System.out.printf(
                    "exec seq 1 %d (lines/s): local %.0f | remote %.0f | ratio %.2f%n",
                    lines, localLines, remoteLines, remoteLines / localLines);
            l.destroy().block(WAIT);
            r.destroy().block(WAIT);
        }
    }

    private static double[] latency(SandboxSession s, int runs) {
        for (int i = 0; i < Math.min(50, runs); i++) {
            s.run(ExecOptions.of("true")).block(WAIT); // warm up
        }
        double[] ms = new double[runs];
        for (int i = 0; i < runs; i++) {
            long t0 = System.nanoTime();
            s.run(ExecOptions.of("true")).block(WAIT);
            ms[i] = (System.nanoTime() - t0) / 1e6;
        }
        Arrays.sort(ms);
        return new double[] {ms[runs / 2], ms[runs * 9 / 10]};
    }

    private static double linesPerSecond(SandboxSession s, int lines) {
        s.exec(ExecOptions.of("seq", "1", "100000")).blockLast(WAIT); // warm up
        AtomicLong count = new AtomicLong();
        long t0 = System.nanoTime();
        s.exec(ExecOptions.of("seq", "1", Integer.toString(lines)))
                .doOnNext(e -> {
                    if (e instanceof ExecEvent.Stdout) {
                        count.incrementAndGet();
                    }
                })
                .blockLast(WAIT);
        double seconds = (System.nanoTime() - t0) / 1e9;
        if (count.get() != lines) {
            throw new AssertionError("expected " + lines + " lines, got " + count.get());
        }
        return lines / seconds;
    }
}
