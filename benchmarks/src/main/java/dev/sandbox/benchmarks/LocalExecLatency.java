package dev.sandbox.benchmarks;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * {@code local-exec-latency}: milliseconds from asking to run {@code true} until its result is in hand. SDK: {@code
 * session.run(ExecOptions.of("true"))} on one local session, blocked on. Baseline: {@code new
 * ProcessBuilder("true")} with output discarded, {@code start()} then {@code waitFor()}.
 *
 * <pre>{@code
 * Result r = new LocalExecLatency().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class LocalExecLatency implements Benchmark {

    /** A run of this row with its default settings. */
    public LocalExecLatency() {}

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Override
    public String name() {
        return "local-exec-latency";
    }

    @Override
    public String unit() {
        return "ms";
    }

    @Override
    public Target target() {
        return Target.atMost(1.25);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(10, 30), new Reps(200, 600));
        ExecOptions trueCommand = ExecOptions.of("true");
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
                        () -> {
                            long t0 = System.nanoTime();
                            ExecResult r = session.run(trueCommand).block(TIMEOUT);
                            long took = System.nanoTime() - t0;
                            if (r == null || r.exitCode() != 0) {
                                throw new IllegalStateException("SDK: true exited with " + r);
                            }
                            return took / 1e6;
                        },
                        LocalExecLatency::baselineOnce,
                        Harness.NOTHING);
            } finally {
                session.destroy().block(TIMEOUT);
            }
        }
    }

    /** What a user writes without the SDK. */
    private static double baselineOnce() throws Exception {
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder("true")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        if (!p.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("baseline: true did not exit within " + TIMEOUT);
        }
        long took = System.nanoTime() - t0;
        if (p.exitValue() != 0) {
            throw new IllegalStateException("baseline: true exited with " + p.exitValue());
        }
        return took / 1e6;
    }
}
