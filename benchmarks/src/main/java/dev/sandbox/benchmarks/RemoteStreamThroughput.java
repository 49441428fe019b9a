package dev.sandbox.benchmarks;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;

/**
 * {@code remote-stream-throughput}: lines per second of {@code seq 1 10000000} through {@code exec} over a sandbox
 * server on loopback (SDK), against the same {@code exec} on the local provider directly (baseline). Both count every
 * {@link ExecEvent.Stdout} and check the total and the exit code.
 *
 * <pre>{@code
 * Result r = new RemoteStreamThroughput().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class RemoteStreamThroughput implements Benchmark {
    private static final long LINES = LocalStreamThroughput.LINES;
    private static final Duration TIMEOUT = Duration.ofMinutes(3);

    @Override
    public String name() {
        return "remote-stream-throughput";
    }

    @Override
    public String unit() {
        return "lines/s";
    }

    @Override
    public Target target() {
        return Target.atLeast(0.5);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(0, 1), new Reps(2, 8));
        try (Loopback loopback = Loopback.start()) {
            return Harness.alternate(
                    name(),
                    unit(),
                    target(),
                    reps,
                    config,
                    () -> once("SDK", loopback.remote()),
                    () -> once("baseline", loopback.local()),
                    Harness.NOTHING);
        }
    }

    private static final class Tally {
        long lines;
        int exit = -1;
        Throwable error;
    }

    private static double once(String side, SandboxSession session) throws InterruptedException {
        Tally tally = new Tally();
        CountDownLatch done = new CountDownLatch(1);
        long t0 = System.nanoTime();
        Disposable subscription = session.exec(ExecOptions.of("seq", "1", Long.toString(LINES)))
                .subscribe(
                        e -> {
                            if (e instanceof ExecEvent.Stdout) {
                                tally.lines++;
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
        if (tally.lines != LINES || tally.exit != 0) {
            throw new IllegalStateException(side + ": read " + tally.lines + " lines with exit code " + tally.exit);
        }
        return tally.lines / (took / 1e9);
    }
}
