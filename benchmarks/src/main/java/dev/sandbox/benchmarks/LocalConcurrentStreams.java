package dev.sandbox.benchmarks;

import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.local.LocalSandboxProvider;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * {@code local-concurrent-streams}: the peak number of live platform threads while 500 commands, each printing
 * 10,000 lines, run and are read at the same time. SDK: 500 {@code session.exec(...)} streams merged with a
 * concurrency of 500, counting each one's whole lines ({@link ExecEvent.Stdout} events not flagged partial). Baseline: 500 {@link ProcessBuilder}
 * processes, each read by its own pair of platform threads (stdout and stderr), the usual way to read a process
 * without the SDK.
 *
 * <p>{@code seq 1 10000} alone ends within a millisecond, far sooner than 500 processes can be started, so the
 * streams would hardly overlap. Each command is therefore {@code echo ready; read go; exec seq 1 10000}: it waits
 * on its stdin until all 500 are running, then prints its 10,000 lines. The SDK side feeds stdin from a gate that
 * opens when all 500 {@code ready} lines have arrived; the baseline writes {@code go} to every process once it has
 * started all 500 and their readers.
 *
 * <p>Each figure is the JVM's live thread count at its peak during the trial (the sampler included), less the idle
 * threads the <em>other</em> side left behind in earlier rounds: the JDK keeps a process's reaper thread for 60 s
 * after the process ends, and Reactor keeps idle elastic workers as long, so without that each side would be
 * charged for the other's leftovers. A {@link ThreadLedger} records which side started which thread. Where the
 * leftovers die during a trial, the figure errs against the SDK: the SDK trial subtracts the other side's threads
 * still alive at its end, the baseline trial those alive at its start. Threads alive before the benchmark began
 * (the JVM's own, and any an earlier benchmark of the same run left) count on both sides.
 *
 * <p>The baseline's figure includes the JDK's reaper thread per live process besides its two readers: that is what
 * {@link ProcessBuilder} costs.
 *
 * <pre>{@code
 * Result r = new LocalConcurrentStreams().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class LocalConcurrentStreams implements Benchmark {

    /** A run of this row with its default settings. */
    public LocalConcurrentStreams() {}

    static final int COMMANDS = 500;
    static final int LINES = 10_000;
    private static final Duration TIMEOUT = Duration.ofMinutes(3);
    /** Says it runs, waits for a line on stdin, then prints {@link #LINES} lines. */
    private static final List<String> ARGV = List.of("/bin/sh", "-c", "echo ready; read go; exec seq 1 " + LINES);

    private static final byte[] GO = "go\n".getBytes(StandardCharsets.US_ASCII);

    @Override
    public String name() {
        return "local-concurrent-streams";
    }

    @Override
    public String unit() {
        return "threads";
    }

    @Override
    public Target target() {
        return Target.atMost(0.1);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(0, 1), new Reps(1, 7));
        ThreadLedger ledger = new ThreadLedger();
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
                        () -> sdkOnce(session, ledger),
                        () -> baselineOnce(ledger),
                        Harness.NOTHING);
            } finally {
                session.destroy().block(TIMEOUT);
            }
        }
    }

    private static double sdkOnce(SandboxSession session, ThreadLedger ledger) throws Exception {
        AtomicInteger ready = new AtomicInteger();
        Sinks.Empty<Void> allRunning = Sinks.empty();
        ExecOptions command =
                ExecOptions.of(ARGV).withStdin(allRunning.asMono().then(Mono.fromSupplier(() -> ByteBuffer.wrap(GO))));
        List<Long> counts;
        int peak;
        try (ThreadPeak sampler = ThreadPeak.start()) {
            counts = Flux.range(0, COMMANDS)
                    .flatMap(
                            i -> Flux.defer(() -> {
                                // the first line says "ready"; a busy machine may deliver it in parts
                                StringBuilder first = new StringBuilder();
                                boolean[] firstSeen = {false};
                                return session.exec(command)
                                        .doOnNext(e -> {
                                            if (e instanceof ExecEvent.Stdout out && !firstSeen[0]) {
                                                first.append(out.text());
                                                if (!out.partial()) {
                                                    firstSeen[0] = true;
                                                    if (first.toString().equals("ready")
                                                            && ready.incrementAndGet() == COMMANDS) {
                                                        allRunning.tryEmitEmpty();
                                                    }
                                                }
                                            } else if (e instanceof ExecEvent.Exit exit && exit.code() != 0) {
                                                throw new IllegalStateException("SDK: a command exited with " + exit);
                                            }
                                        })
                                        .filter(e -> e instanceof ExecEvent.Stdout out && !out.partial()) // whole lines
                                        .count();
                            }),
                            COMMANDS)
                    .collectList()
                    .block(TIMEOUT);
            peak = sampler.peak();
        }
        int foreign = ledger.othersAlive(ThreadLedger.SDK); // at the end: errs against the SDK
        ledger.claim(ThreadLedger.SDK);
        if (counts == null || counts.size() != COMMANDS || !counts.stream().allMatch(c -> c == LINES + 1)) {
            throw new IllegalStateException("SDK: expected " + COMMANDS + " streams of " + (LINES + 1) + " lines, got "
                    + (counts == null ? "none" : counts));
        }
        return peak - foreign;
    }

    private static double baselineOnce(ThreadLedger ledger) throws Exception {
        List<Process> processes = new ArrayList<>(COMMANDS);
        List<Thread> readers = new ArrayList<>(2 * COMMANDS);
        AtomicLong stdoutLines = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        int foreign = ledger.othersAlive(ThreadLedger.BASELINE); // at the start: errs against the SDK
        int peak;
        try (ThreadPeak sampler = ThreadPeak.start()) {
            try {
                for (int i = 0; i < COMMANDS; i++) {
                    Process p = new ProcessBuilder(ARGV).start();
                    processes.add(p);
                    readers.add(reader(p.getInputStream(), stdoutLines, failure, "stdout-" + i));
                    readers.add(reader(p.getErrorStream(), new AtomicLong(), failure, "stderr-" + i));
                }
                for (Process p : processes) {
                    try (OutputStream stdin = p.getOutputStream()) {
                        stdin.write(GO);
                    }
                }
                long deadline = System.nanoTime() + TIMEOUT.toNanos();
                for (Thread t : readers) {
                    t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
                    if (t.isAlive()) {
                        throw new IllegalStateException("baseline: a reader was still running after " + TIMEOUT);
                    }
                }
                for (Process p : processes) {
                    if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                        throw new IllegalStateException("baseline: a command did not exit with 0");
                    }
                }
            } finally {
                processes.forEach(p -> {
                    if (p.isAlive()) {
                        p.destroyForcibly();
                    }
                });
            }
            peak = sampler.peak();
        }
        ledger.claim(ThreadLedger.BASELINE);
        if (failure.get() != null) {
            throw new IllegalStateException("baseline: a reader failed", failure.get());
        }
        if (stdoutLines.get() != (long) COMMANDS * (LINES + 1)) {
            throw new IllegalStateException(
                    "baseline: read " + stdoutLines.get() + " lines, expected " + (long) COMMANDS * (LINES + 1));
        }
        return peak - foreign;
    }

    private static Thread reader(InputStream in, AtomicLong lines, AtomicReference<Throwable> failure, String name) {
        Thread t = new Thread(
                () -> {
                    try (in) {
                        lines.addAndGet(RawLines.count(in).lines());
                    } catch (IOException | RuntimeException e) {
                        failure.compareAndSet(null, e);
                    }
                },
                "baseline-" + name);
        t.start();
        return t;
    }
}
