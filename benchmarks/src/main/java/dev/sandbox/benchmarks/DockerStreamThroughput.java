package dev.sandbox.benchmarks;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import dev.sandbox.ExecEvent;
import dev.sandbox.ExecOptions;
import dev.sandbox.SandboxSession;
import dev.sandbox.docker.DockerSandboxProvider;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * {@code docker-stream-throughput}: lines per second of {@code seq 1 5000000} run inside a container. SDK: {@code
 * session.exec(...)} on a Docker session, consumed by a plain {@code subscribe(onNext, onError, onComplete)} that
 * counts the whole lines ({@link ExecEvent.Stdout} events not flagged partial; the local row's consumer). Baseline: plain docker-java on a container of
 * the same image and settings: exec create, exec start with a {@link ResultCallback.Adapter} that cuts the stdout
 * frames into lines (carrying a line split across frames) and decodes each to a {@code String}, then the exit code
 * from an inspect. Both sides check they saw exactly five million lines and exit code 0.
 *
 * <pre>{@code
 * Result r = new DockerStreamThroughput().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerStreamThroughput implements Benchmark {

    /** A run of this row with its default settings. */
    public DockerStreamThroughput() {}

    static final long LINES = 5_000_000;
    private static final List<String> SEQ = List.of("seq", "1", Long.toString(LINES));

    @Override
    public String name() {
        return "docker-stream-throughput";
    }

    @Override
    public String unit() {
        return "lines/s";
    }

    @Override
    public Target target() {
        return Target.atLeast(1.2);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(0, 1), new Reps(2, 10));
        ExecOptions seq = ExecOptions.of(SEQ);
        try (DockerBench docker = DockerBench.open(name(), config);
                DockerSandboxProvider provider = docker.provider()) {
            SandboxSession session = provider.create(docker.sessionOptions()).block(DockerBench.TIMEOUT);
            try {
                String container = docker.startContainer();
                try {
                    return Harness.alternate(
                            name(),
                            unit(),
                            target(),
                            reps,
                            config,
                            () -> LocalStreamThroughput.streamOnce("SDK", session, seq, LINES),
                            () -> baselineOnce(docker, container),
                            Harness.NOTHING);
                } finally {
                    docker.remove(container);
                }
            } finally {
                session.destroy().block(DockerBench.TIMEOUT);
            }
        }
    }

    private static double baselineOnce(DockerBench docker, String container) throws InterruptedException {
        LineCounter counter = new LineCounter();
        long t0 = System.nanoTime();
        long exit = docker.exec(container, SEQ, counter);
        counter.finish();
        long took = System.nanoTime() - t0;
        LocalStreamThroughput.check("baseline", counter.lines, exit, LINES);
        return counter.lines / (took / 1e9);
    }

    /**
     * The baseline's callback, as a user writes one: cuts stdout frames at {@code \n} and decodes each line to a
     * {@code String}. Its fields are read after {@code awaitCompletion}, which orders them after the last frame.
     */
    static final class LineCounter extends ResultCallback.Adapter<Frame> {
        private byte[] carry = new byte[256]; // the start of a line that a frame boundary cut
        private int carried;
        long lines;
        long chars;

        @Override
        public void onNext(Frame frame) {
            if (frame.getStreamType() != StreamType.STDOUT) {
                return;
            }
            byte[] b = frame.getPayload();
            int start = 0;
            for (int i = 0; i < b.length; i++) {
                if (b[i] == '\n') {
                    String line;
                    if (carried > 0) {
                        append(b, start, i - start);
                        line = new String(carry, 0, carried, StandardCharsets.UTF_8);
                        carried = 0;
                    } else {
                        line = new String(b, start, i - start, StandardCharsets.UTF_8);
                    }
                    chars += line.length();
                    lines++;
                    start = i + 1;
                }
            }
            append(b, start, b.length - start);
        }

        /** Counts a last line without a newline. */
        void finish() {
            if (carried > 0) {
                chars += new String(carry, 0, carried, StandardCharsets.UTF_8).length();
                lines++;
                carried = 0;
            }
        }

        private void append(byte[] b, int from, int length) {
            if (length == 0) {
                return;
            }
            if (carried + length > carry.length) {
                carry = Arrays.copyOf(carry, Math.max(carry.length * 2, carried + length));
            }
            System.arraycopy(b, from, carry, carried, length);
            carried += length;
        }
    }
}
