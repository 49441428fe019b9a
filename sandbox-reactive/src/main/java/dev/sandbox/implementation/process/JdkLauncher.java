package dev.sandbox.implementation.process;

import dev.sandbox.UnsupportedFeatureException;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The portable launcher on {@link java.lang.Process}. It keeps the same backpressure contract (a stream is read only
 * on demand) but costs the JDK's reaper thread plus blocking readers per process, so the native launcher is preferred
 * where it works. The child does not get its own process group; a kill reaches its descendants through {@link
 * ProcessHandle#descendants()}, frozen first where kill(2) is at hand ({@link Freezer}).
 */
final class JdkLauncher implements ProcessLauncher {
    private static final int CHUNK = 64 * 1024;

    @Override
    public String name() {
        return "jdk-process";
    }

    @Override
    public SpawnedProcess spawn(ProcessSpec spec) {
        List<String> command = new ArrayList<>(spec.argv());
        command.set(0, spec.program());
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.directory(new File(spec.cwd()));
        builder.environment().clear();
        builder.environment().putAll(spec.env());
        if (spec.stdin() == null) {
            builder.redirectInput(new File("/dev/null"));
        }
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw LaunchErrors.failure("cannot start " + spec.program() + " in " + spec.cwd(), e);
        }
        if (spec.stdin() != null) {
            OutputStream in = process.getOutputStream();
            Flux.from(spec.stdin())
                    .publishOn(Schedulers.boundedElastic(), 1)
                    .concatMap(buf -> Mono.fromRunnable(() -> write(in, buf)), 1)
                    .doFinally(s -> closeQuietly(in))
                    .subscribe(x -> {}, e -> {});
        }
        return new JdkProcess(process);
    }

    private static void write(OutputStream out, ByteBuffer buf) {
        try {
            if (buf.hasArray()) {
                out.write(buf.array(), buf.arrayOffset() + buf.position(), buf.remaining());
            } else {
                byte[] bytes = new byte[buf.remaining()];
                buf.duplicate().get(bytes);
                out.write(bytes);
            }
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // the process may already have closed its end
        }
    }

    private static final class JdkProcess implements SpawnedProcess {
        private final Process process;
        private final AtomicBoolean subscribed = new AtomicBoolean();

        JdkProcess(Process process) {
            this.process = process;
        }

        @Override
        public long pid() {
            return process.pid();
        }

        @Override
        public Flux<RawEvent> events() {
            return Flux.defer(() -> {
                if (!subscribed.compareAndSet(false, true)) {
                    return Flux.error(new IllegalStateException("process output can be subscribed only once"));
                }
                Flux<RawEvent> out = read(process.getInputStream(), RawEvent.STDOUT);
                Flux<RawEvent> err = read(process.getErrorStream(), RawEvent.STDERR);
                Mono<RawEvent> exit = Mono.fromCallable(this::waitFor).subscribeOn(Schedulers.boundedElastic());
                return Flux.merge(1, out, err).concatWith(exit).doOnCancel(this::kill);
            });
        }

        private RawEvent waitFor() throws InterruptedException {
            int code = process.waitFor();
            // the JDK reports death by signal n as 128 + n
            return code > 128 && code < 128 + 65
                    ? new RawEvent.Exited(code - 128, true)
                    : new RawEvent.Exited(code, false);
        }

        private static Flux<RawEvent> read(InputStream in, int stream) {
            return Flux.<RawEvent>generate(sink -> {
                        byte[] buf = new byte[CHUNK];
                        try {
                            int n = in.read(buf);
                            if (n < 0) {
                                sink.complete();
                            } else {
                                sink.next(new RawEvent.Chunk(stream, Arrays.copyOf(buf, n)));
                            }
                        } catch (IOException e) {
                            sink.complete(); // the stream was closed under us: end of output
                        }
                    })
                    .subscribeOn(Schedulers.boundedElastic());
        }

        @Override
        public void signal(int signal) {
            switch (signal) {
                case 9 -> kill();
                case 15 -> {
                    process.descendants().forEach(ProcessHandle::destroy);
                    process.destroy();
                }
                default -> throw new UnsupportedFeatureException("local (jdk-process launcher)", "signal " + signal);
            }
        }

        @Override
        public void kill() {
            if (Freezer.AVAILABLE) {
                if (reactor.core.scheduler.Schedulers.isInNonBlockingThread()) {
                    // the freezer waits for each stop to take effect (reading /proc): not on an event loop
                    reactor.core.scheduler.Schedulers.boundedElastic().schedule(() -> Freezer.killTree(process));
                } else {
                    Freezer.killTree(process);
                }
                return;
            }
            // without kill(2): the children first in the snapshot, the parent first in the kill (a parent left alive
            // while its child dies would run on, a shell to its next command); a child forked between the snapshot
            // and the parent's kill escapes here, which the freezer closes
            List<ProcessHandle> children = process.descendants().toList();
            process.destroyForcibly();
            children.forEach(ProcessHandle::destroyForcibly);
        }
    }

    /**
     * Kills a process tree without a window for escape: the parent is stopped (SIGSTOP), then every descendant, one
     * snapshot after another until a snapshot finds none that is not stopped yet; a stopped process cannot fork, so
     * the tree is then whole, and every member gets SIGKILL. Killing from a snapshot of a running tree instead misses a
     * child forked after the snapshot: it outlives the kill, orphaned, and keeps the command's pipes open.
     */
    static final class Freezer {
        /** The longest wait for one process's stop to take effect. */
        private static final long STOP_WAIT_NANOS = 50_000_000L;

        /** Rounds of snapshots at most: each round finds only processes forked before the previous round's stops. */
        private static final int MAX_ROUNDS = 64;

        static final boolean AVAILABLE = available();

        private Freezer() {}

        private static boolean available() {
            try {
                return com.sun.jna.Platform.isLinux()
                        && LibC.kill((int) ProcessHandle.current().pid(), 0) == 0;
            } catch (LinkageError | RuntimeException e) {
                return false;
            }
        }

        static void killTree(Process process) {
            java.util.Map<Long, ProcessHandle> stopped = new java.util.LinkedHashMap<>();
            if (process.isAlive()) {
                LibC.kill((int) process.pid(), LibC.SIGSTOP);
                awaitStopped(process.pid());
            }
            for (int round = 0; round < MAX_ROUNDS; round++) {
                List<ProcessHandle> found = process.descendants()
                        .filter(h -> !stopped.containsKey(h.pid()))
                        .toList();
                if (found.isEmpty()) {
                    break;
                }
                for (ProcessHandle h : found) {
                    stopped.put(h.pid(), h);
                    if (h.isAlive()) { // the handle checks the start time: a reused pid is not this process
                        LibC.kill((int) h.pid(), LibC.SIGSTOP);
                    }
                }
                // kill(2) returns before the stop takes effect: a process still inside fork() would add a child after
                // the next snapshot, which then finds nothing new and ends the rounds with the child left out
                for (ProcessHandle h : found) {
                    awaitStopped(h.pid());
                }
            }
            process.destroyForcibly();
            stopped.values().forEach(ProcessHandle::destroyForcibly);
        }

        /**
         * Waits, at most {@link #STOP_WAIT_NANOS}, until a process is stopped (state {@code T} in {@code
         * /proc/PID/stat}), a zombie, or gone.
         */
        static void awaitStopped(long pid) {
            java.nio.file.Path stat = java.nio.file.Path.of("/proc/" + pid + "/stat");
            long deadline = System.nanoTime() + STOP_WAIT_NANOS;
            while (System.nanoTime() - deadline < 0) {
                String text;
                try {
                    text = java.nio.file.Files.readString(stat, java.nio.charset.StandardCharsets.US_ASCII);
                } catch (java.io.IOException | RuntimeException e) {
                    return; // gone
                }
                int close = text.lastIndexOf(')');
                char state = close >= 0 && close + 2 < text.length() ? text.charAt(close + 2) : 'X';
                if (state == 'T' || state == 't' || state == 'Z' || state == 'X') {
                    return;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(100_000);
            }
        }
    }
}
