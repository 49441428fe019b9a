package dev.sandbox.benchmarks;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.FileEvent;
import dev.sandbox.SandboxSession;
import dev.sandbox.docker.DockerSandboxProvider;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;

/**
 * {@code docker-watch-latency}: milliseconds from asking a command to write a new file to the watcher's event for
 * that file being in the consumer's hands: what a user waiting for the change sees, the command's own run included
 * (timing from the command's completion instead reads about zero for an inotify watcher, whose event can arrive
 * before the command's exit does). The target is absolute ({@link Target#sdkAtMost}): the SDK's
 * median at most {@value #TARGET_MS} ms, whatever the baseline does; the ratio is printed for comparison.
 *
 * <p>SDK: {@code session.files().watch(dir)} subscribed once for the row, its events handed to a bounded queue;
 * each trial runs {@code session.run(sh -c "echo x > dir/fN")} and times from calling {@code run()} to the
 * consumer taking the {@code CREATED} (or {@code MODIFIED}) event for {@code fN} off the queue.
 *
 * <p>Baseline: what a docker-java user does for file events in this image. Its busybox has no {@code inotifyd}, so
 * it polls: one long exec of {@code while :; do ls -l --full-time dir; sleep 0.2; done} streaming its lines to a
 * {@link ResultCallback.Adapter} that reports each name it has not seen before; the file is written by a docker-java
 * exec, and the time runs from starting that exec to the consumer taking the new name off
 * its queue. Both watchers poll every 200 ms, so a polling watcher's figure is half an interval on average plus the
 * time the listing takes to arrive.
 *
 * <p>Before each write a trial pauses, untimed, for a random part of a 200 ms polling interval, so writes land at
 * random points of the watchers' cycles rather than always just after the listing that ended the previous trial.
 *
 * <p>There is no signal that a watch is live (its first listing taken), so before the first trial each side writes
 * probe files, one a second, until its watcher reports one; that bounds the wait without guessing a sleep.
 *
 * <pre>{@code
 * Result r = new DockerWatchLatency().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerWatchLatency implements Benchmark {

    /** A run of this row with its default settings. */
    public DockerWatchLatency() {}

    /** The goal for the SDK's median, in milliseconds. */
    static final double TARGET_MS = 20;

    /** The watched directory, in each side's container. */
    static final String DIR = "/tmp/sandbox-bench-watch";

    /** The longest a trial waits for its event: many polling intervals. */
    private static final Duration EVENT_TIMEOUT = Duration.ofSeconds(10);

    /** The spread of the random, untimed pause before each write: one polling interval of today's watchers. */
    private static final Duration PHASE_SPREAD = Duration.ofMillis(200);

    /** How many probe files a side writes, one a second, before it gives up on its watcher ever reporting one. */
    private static final int PROBES = 20;

    /** The most events or names waiting for the consumer; a trial writes one file, so more is a fault. */
    private static final int QUEUE = 1024;

    /** The longest listing line the baseline accepts. */
    private static final int MAX_LINE = 4096;

    /** The most distinct names the baseline remembers; the row writes a few hundred files at most. */
    private static final int MAX_NAMES = 100_000;

    @Override
    public String name() {
        return "docker-watch-latency";
    }

    @Override
    public String unit() {
        return "ms";
    }

    @Override
    public Target target() {
        return Target.sdkAtMost(TARGET_MS);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(1, 5), new Reps(5, 100));
        try (DockerBench docker = DockerBench.open(name(), config);
                DockerSandboxProvider provider = docker.provider()) {
            SandboxSession session = provider.create(docker.sessionOptions()).block(DockerBench.TIMEOUT);
            try {
                String container = docker.startContainer();
                try {
                    return measure(config, docker, session, container, reps);
                } finally {
                    docker.remove(container); // also ends the baseline's listing exec
                }
            } finally {
                session.destroy().block(DockerBench.TIMEOUT);
            }
        }
    }

    private Result measure(RunConfig config, DockerBench docker, SandboxSession session, String container, Reps reps)
            throws Exception {
        sdkShell(session, "mkdir -p " + DIR);
        baselineShell(docker, container, "mkdir -p " + DIR);

        // SDK watcher: events, or the error that ended the watch, go to a bounded queue
        BlockingQueue<Object> sdkQueue = new ArrayBlockingQueue<>(QUEUE);
        Disposable watch = session.files()
                .watch(DIR)
                .subscribe(
                        e -> offer(sdkQueue, e),
                        e -> offer(sdkQueue, e),
                        () -> offer(sdkQueue, new IllegalStateException("SDK: the watch completed")));
        ListingWatcher listing = new ListingWatcher();
        try {
            String execId = docker.docker()
                    .execCreateCmd(container)
                    .withCmd("sh", "-c", "while :; do ls -l --full-time " + DIR + "; sleep 0.2; done")
                    .withAttachStdout(true)
                    .withAttachStderr(true)
                    .exec()
                    .getId();
            docker.docker().execStartCmd(execId).exec(listing);

            awaitLive("SDK", n -> sdkShell(session, write(n)), n -> takeSdk(sdkQueue, n, Duration.ofSeconds(1)));
            awaitLive(
                    "baseline",
                    n -> baselineShell(docker, container, write(n)),
                    n -> takeBaseline(listing.names, n, Duration.ofSeconds(1)));
            config.log("%s: both watchers report files", name());

            int[] sdkFiles = {0};
            int[] baseFiles = {0};
            return Harness.alternate(
                    name(),
                    unit(),
                    target(),
                    reps,
                    config,
                    () -> {
                        String file = "f" + sdkFiles[0]++;
                        randomPhase();
                        long t0 = System.nanoTime();
                        sdkShell(session, write(file));
                        if (!takeSdk(sdkQueue, file, EVENT_TIMEOUT)) {
                            throw new IllegalStateException("SDK: no event for " + file + " within " + EVENT_TIMEOUT);
                        }
                        return (System.nanoTime() - t0) / 1e6;
                    },
                    () -> {
                        String file = "f" + baseFiles[0]++;
                        randomPhase();
                        long t0 = System.nanoTime();
                        baselineShell(docker, container, write(file));
                        if (!takeBaseline(listing.names, file, EVENT_TIMEOUT)) {
                            throw new IllegalStateException(
                                    "baseline: no listing showed " + file + " within " + EVENT_TIMEOUT);
                        }
                        return (System.nanoTime() - t0) / 1e6;
                    },
                    Harness.NOTHING);
        } finally {
            watch.dispose(); // kills the SDK's watch exec
            listing.close(); // the listing exec itself ends with its container
        }
    }

    /**
     * Waits, untimed, a random part of a polling interval before a trial writes its file. A trial starts right after
     * the previous event arrived, that is right after a listing; without this, every write would land at the same
     * point of the watcher's cycle and the figure would be that point, not the latency a write at any moment sees.
     */
    private static void randomPhase() throws InterruptedException {
        Thread.sleep(ThreadLocalRandom.current().nextLong(PHASE_SPREAD.toMillis() + 1));
    }

    private static String write(String file) {
        return "echo x > " + DIR + "/" + file;
    }

    /** Something done with a file name that may fail. */
    @FunctionalInterface
    private interface FileStep {
        boolean apply(String file) throws Exception;
    }

    /** Something done with a file name. */
    @FunctionalInterface
    private interface FileWrite {
        void apply(String file) throws Exception;
    }

    /**
     * Writes probe files, one a second, until the watcher reports one: a watch reports nothing before its first
     * listing, and nothing says when that was taken.
     */
    private static void awaitLive(String side, FileWrite write, FileStep seen) throws Exception {
        for (int i = 0; i < PROBES; i++) {
            String probe = "probe" + i;
            write.apply(probe);
            if (seen.apply(probe)) {
                return;
            }
        }
        throw new IllegalStateException(side + ": the watcher reported none of " + PROBES + " probe files");
    }

    private static void offer(BlockingQueue<Object> queue, Object item) {
        if (!queue.offer(item)) {
            // the consumer fell behind by more than the bound: fail the next take rather than grow
            queue.clear();
            queue.offer(new IllegalStateException("more than " + QUEUE + " events waited for the consumer"));
        }
    }

    /**
     * Takes events off the SDK's queue until the one for {@code file} (created or modified), dropping events of
     * other files.
     *
     * @return whether it came within the timeout
     */
    private static boolean takeSdk(BlockingQueue<Object> queue, String file, Duration timeout)
            throws InterruptedException {
        String path = DIR + "/" + file;
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Object item = queue.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (item == null) {
                return false;
            }
            if (item instanceof Throwable t) {
                throw new IllegalStateException("SDK: the watch failed: " + t, t);
            }
            FileEvent e = (FileEvent) item;
            if (e.path().equals(path) && (e.kind() == FileEvent.Kind.CREATED || e.kind() == FileEvent.Kind.MODIFIED)) {
                return true;
            }
            if (e.kind() == FileEvent.Kind.OVERFLOW) {
                throw new IllegalStateException("SDK: the watch overflowed");
            }
        }
    }

    /** Takes new names off the baseline's queue until {@code file}, dropping the others. */
    private static boolean takeBaseline(BlockingQueue<Object> queue, String file, Duration timeout)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Object item = queue.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (item == null) {
                return false;
            }
            if (item instanceof Throwable t) {
                throw new IllegalStateException("baseline: the listing failed: " + t, t);
            }
            if (item.equals(file)) {
                return true;
            }
        }
    }

    private static void sdkShell(SandboxSession session, String script) {
        ExecResult r = session.run(ExecOptions.of("sh", "-c", script)).block(DockerBench.TIMEOUT);
        if (r == null || r.exitCode() != 0) {
            throw new IllegalStateException("SDK: sh -c '" + script + "' gave " + r);
        }
    }

    private static void baselineShell(DockerBench docker, String container, String script) throws InterruptedException {
        long exit = docker.exec(container, List.of("sh", "-c", script), new ResultCallback.Adapter<>());
        if (exit != 0) {
            throw new IllegalStateException("baseline: sh -c '" + script + "' exited with " + exit);
        }
    }

    /**
     * The baseline's callback, as a user writes one: cuts the listing's stdout into lines, takes the name from each
     * {@code ls -l --full-time} line (the ninth field: mode, links, owner, group, size, date, time, zone, name) and
     * hands every name it has not seen before to the consumer's queue. A line longer than {@value #MAX_LINE} bytes,
     * more than {@value #MAX_NAMES} names, or the stream ending, goes to the queue as an error.
     */
    private static final class ListingWatcher extends ResultCallback.Adapter<Frame> {
        final BlockingQueue<Object> names = new ArrayBlockingQueue<>(QUEUE);
        private final Set<String> seen = new HashSet<>();
        private final byte[] line = new byte[MAX_LINE];
        private int length;
        private boolean failed;

        @Override
        public void onNext(Frame frame) {
            if (failed || frame.getStreamType() != StreamType.STDOUT) {
                return;
            }
            for (byte b : frame.getPayload()) {
                if (b == '\n') {
                    line(new String(line, 0, length, StandardCharsets.UTF_8));
                    length = 0;
                } else if (length == line.length) {
                    fail(new IllegalStateException("a listing line is longer than " + MAX_LINE + " bytes"));
                    return;
                } else {
                    line[length++] = b;
                }
            }
        }

        private void line(String text) {
            String[] fields = text.trim().split("\\s+", 9);
            if (fields.length < 9) {
                return; // "total N"
            }
            String name = fields[8];
            if (seen.contains(name)) {
                return;
            }
            if (seen.size() == MAX_NAMES) {
                fail(new IllegalStateException("more than " + MAX_NAMES + " names in the listing"));
                return;
            }
            seen.add(name);
            offer(names, name);
        }

        private void fail(Throwable t) {
            failed = true;
            offer(names, t);
        }

        @Override
        public void onError(Throwable t) {
            offer(names, t);
            super.onError(t);
        }

        @Override
        public void onComplete() {
            offer(names, new IllegalStateException("the listing exec ended"));
            super.onComplete();
        }
    }
}
