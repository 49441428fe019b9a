package dev.sandbox.benchmarks;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;

/**
 * {@code local-stream-throughput}: lines per second read from {@code seq 1 10000000}. SDK: {@code
 * session.exec(...)} consumed to the end by a plain {@code subscribe(onNext, onError, onComplete)}, counting the
 * whole lines ({@link ExecEvent.Stdout} events not flagged partial). Baseline: {@link
 * ProcessBuilder} and a plain {@link RawLines} loop over the process's {@link InputStream}, on the calling thread.
 * Both sides decode every line to a string and check they saw exactly ten million lines and exit code 0.
 *
 * <pre>{@code
 * Result r = new LocalStreamThroughput().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class LocalStreamThroughput implements Benchmark {

    /** A run of this row with its default settings. */
    public LocalStreamThroughput() {}

    static final long LINES = 10_000_000;
    private static final Duration TIMEOUT = Duration.ofMinutes(2);

    @Override
    public String name() {
        return "local-stream-throughput";
    }

    @Override
    public String unit() {
        return "lines/s";
    }

    @Override
    public Target target() {
        return Target.atLeast(0.4);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(1, 2), new Reps(3, 15));
        ExecOptions seq = ExecOptions.of("seq", "1", Long.toString(LINES));
        try (LocalSandboxProvider provider = LocalSandboxProvider.create()) {
            SandboxSession session = provider.create(SessionOptions.defaults().withUnlimitedLifetime())
                    .block(TIMEOUT);
            try {
                return Harness.alternate(
                        name(),
                        unit(),
                        target(),
                        reps,
                        config,
                        () -> streamOnce("SDK", session, seq, LINES),
                        LocalStreamThroughput::baselineOnce,
                        Harness.NOTHING);
            } finally {
                session.destroy().block(TIMEOUT);
            }
        }
    }

    /** Written on the delivery thread, read after the latch opens (which orders the two). */
    private static final class Tally {
        long lines;
        long chars;
        int exit = -1;
        Throwable error;
    }

    /**
     * Consumes one {@code seq} stream with a plain subscriber (a lambda per event, a latch for the end) and returns its
     * lines per second; the remote rows use it for both of their sides, the Docker row for its SDK side.
     */
    static double streamOnce(String side, SandboxSession session, ExecOptions seq, long expectedLines)
            throws InterruptedException {
        Tally tally = new Tally();
        CountDownLatch done = new CountDownLatch(1);
        long t0 = System.nanoTime();
        Disposable subscription = session.exec(seq)
                .subscribe(
                        e -> {
                            if (e instanceof ExecEvent.Stdout out) {
                                if (!out.partial()) {
                                    tally.lines++; // whole lines: a part flagged partial is continued by the next
                                }
                                tally.chars += out.text().length();
                            } else if (e instanceof ExecEvent.Exit exit) {
                                tally.exit = exit.code();
                            }
                        },
                        error -> {
                            tally.error = error;
                            done.countDown();
                        },
                        done::countDown);
        if (!done.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            subscription.dispose();
            throw new IllegalStateException(side + ": seq did not finish within " + TIMEOUT);
        }
        long took = System.nanoTime() - t0;
        if (tally.error != null) {
            throw new IllegalStateException(side + ": exec failed", tally.error);
        }
        check(side, tally.lines, tally.exit, expectedLines);
        return tally.lines / (took / 1e9);
    }

    private static double baselineOnce() throws Exception {
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder("seq", "1", Long.toString(LINES))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        RawLines.Count count;
        try (InputStream in = p.getInputStream()) {
            count = RawLines.count(in);
        } finally {
            if (!p.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
            }
        }
        long took = System.nanoTime() - t0;
        check("baseline", count.lines(), p.exitValue(), LINES);
        return count.lines() / (took / 1e9);
    }

    static void check(String side, long lines, long exit, long expectedLines) {
        if (lines != expectedLines || exit != 0) {
            throw new IllegalStateException(side + ": read " + lines + " lines with exit code " + exit + ", expected "
                    + expectedLines + " and 0");
        }
    }
}
