package dev.sandbox.benchmarks;

import dev.sandbox.SandboxFiles;
import dev.sandbox.SandboxSession;
import dev.sandbox.UnsupportedFeatureException;
import dev.sandbox.docker.DockerSandboxProvider;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code docker-copy-throughput}: MiB per second of copying a 256 MiB file of random bytes into a container and back
 * out, counting both directions ({@code 2 × 256 MiB / seconds}). SDK: {@code session.files().upload(Path, path)}
 * then {@code download(path, Path)} on a Docker session. Baseline: the {@code docker} CLI, as a user would script it,
 * through {@link ProcessBuilder}: {@code docker cp <file> <container>:<path>} then {@code docker cp
 * <container>:<path> <file>}, on a container of the same image and settings. Each trial starts without the local
 * copy; after it (untimed) both sides check the copy is byte for byte the original.
 *
 * <p>When the provider answers a file call with {@link UnsupportedFeatureException} (a build whose Docker provider
 * has no files API yet), the row is {@link Skipped} before the big file is made. Short mode copies 32 MiB.
 *
 * <pre>{@code
 * Result r = new DockerCopyThroughput().run(RunConfig.of(false, System.err));
 * }</pre>
 */
public final class DockerCopyThroughput implements Benchmark {

    /** A run of this row with its default settings. */
    public DockerCopyThroughput() {}

    static final long FULL_BYTES = 256L << 20;
    static final long SHORT_BYTES = 32L << 20;
    private static final String SDK_PATH = "/tmp/sandbox-bench-sdk.bin";
    private static final String BASELINE_PATH = "/tmp/sandbox-bench-baseline.bin";

    @Override
    public String name() {
        return "docker-copy-throughput";
    }

    @Override
    public String unit() {
        return "MiB/s";
    }

    @Override
    public Target target() {
        return Target.atLeast(1.2);
    }

    @Override
    public Result run(RunConfig config) throws Exception {
        Reps reps = config.reps(new Reps(0, 1), new Reps(1, 7));
        long bytes = config.shortMode() ? SHORT_BYTES : FULL_BYTES;
        Path dir = Files.createTempDirectory("sandbox-bench-copy");
        try (DockerBench docker = DockerBench.open(name(), config);
                DockerSandboxProvider provider = docker.provider()) {
            SandboxSession session = provider.create(docker.sessionOptions()).block(DockerBench.TIMEOUT);
            try {
                probeFiles(session.files(), dir);
                Path source = dir.resolve("source.bin");
                writeRandom(source, bytes);
                String container = docker.startContainer();
                try {
                    return Harness.alternate(
                            name(),
                            unit(),
                            target(),
                            reps,
                            config,
                            () -> sdkOnce(session.files(), source, dir.resolve("sdk-copy.bin")),
                            () -> baselineOnce(container, source, dir.resolve("baseline-copy.bin")),
                            Harness.NOTHING);
                } finally {
                    docker.remove(container);
                }
            } finally {
                session.destroy().block(DockerBench.TIMEOUT);
            }
        } finally {
            deleteTree(dir);
        }
    }

    /** Skips the row when this build's Docker provider has no files API. */
    private static void probeFiles(SandboxFiles files, Path dir) throws IOException, Skipped {
        Path probe = Files.writeString(dir.resolve("probe.txt"), "probe\n");
        try {
            files.upload(probe, "/tmp/sandbox-bench-probe.txt").block(DockerBench.TIMEOUT);
            files.remove("/tmp/sandbox-bench-probe.txt").block(DockerBench.TIMEOUT);
        } catch (RuntimeException e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof UnsupportedFeatureException u) {
                    throw new Skipped("the SDK reports UnsupportedFeatureException: " + u.getMessage());
                }
            }
            throw e;
        }
    }

    private static double sdkOnce(SandboxFiles files, Path source, Path copy) throws IOException {
        Files.deleteIfExists(copy);
        long t0 = System.nanoTime();
        files.upload(source, SDK_PATH).block(DockerBench.TIMEOUT);
        Long downloaded = files.download(SDK_PATH, copy).block(DockerBench.TIMEOUT);
        long took = System.nanoTime() - t0;
        long size = Files.size(source);
        if (downloaded == null || downloaded != size) {
            throw new IllegalStateException("SDK: downloaded " + downloaded + " bytes of " + size);
        }
        return rate("SDK", source, copy, took);
    }

    /** What a user scripts without the SDK: the docker CLI both ways. */
    private static double baselineOnce(String container, Path source, Path copy)
            throws IOException, InterruptedException {
        Files.deleteIfExists(copy);
        long t0 = System.nanoTime();
        dockerCp(source.toString(), container + ":" + BASELINE_PATH);
        dockerCp(container + ":" + BASELINE_PATH, copy.toString());
        long took = System.nanoTime() - t0;
        return rate("baseline", source, copy, took);
    }

    private static void dockerCp(String from, String to) throws IOException, InterruptedException {
        List<String> command = List.of("docker", "cp", from, to);
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(DockerBench.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("baseline: " + command + " did not finish within " + DockerBench.TIMEOUT);
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException(
                    "baseline: " + command + " exited with " + p.exitValue() + ": " + output.strip());
        }
    }

    /** Both directions' MiB per second, after checking (untimed) that the copy is the original. */
    private static double rate(String side, Path source, Path copy, long nanos) throws IOException {
        long mismatch = Files.mismatch(source, copy);
        if (mismatch != -1) {
            throw new IllegalStateException(side + ": the copy differs from the original at byte " + mismatch
                    + " (sizes " + Files.size(source) + " and " + Files.size(copy) + ")");
        }
        double mib = 2.0 * Files.size(source) / (1 << 20);
        return mib / (nanos / 1e9);
    }

    /** Random bytes, so no layer on the way can compress them. */
    private static void writeRandom(Path file, long bytes) throws IOException {
        Random random = new Random(42);
        byte[] chunk = new byte[1 << 20];
        try (OutputStream out = Files.newOutputStream(file)) {
            for (long left = bytes; left > 0; left -= chunk.length) {
                random.nextBytes(chunk);
                out.write(chunk, 0, (int) Math.min(chunk.length, left));
            }
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
