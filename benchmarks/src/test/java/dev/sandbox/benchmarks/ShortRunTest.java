package dev.sandbox.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Runs every benchmark once in short mode, in this JVM, the way {@code java -jar benchmarks.jar --short} does, and
 * checks the report a reader parses: one well-formed RESULT line (or a skip with its reason) and one STATS line per
 * benchmark. The figures of a short run are not judged.
 */
class ShortRunTest {
    private static final String NUMBER = "(\\d+(?:\\.\\d+)?)";
    private static final Pattern RESULT = Pattern.compile("RESULT (\\S+) sdk=" + NUMBER + " baseline=" + NUMBER
            + " ratio=" + NUMBER + " unit=(ms|lines/s|threads|MiB/s|execs/s)");
    private static final Pattern STATS = Pattern.compile("STATS (\\S+) sdk_p95=" + NUMBER + " baseline_p95=" + NUMBER
            + " reps=(\\d+) warmup=(\\d+) target=(?:(?:ratio|sdk)(<=|>=)\\d+(\\.\\d+)? met=(yes|no)|none met=n/a)");
    private static final Pattern SKIPPED = Pattern.compile("RESULT (\\S+) skipped \\((.+)\\)");
    /** The one row without a baseline: SDK figures only. */
    private static final Pattern SDK_ONLY = Pattern.compile("RESULT (\\S+) sdk_p50=" + NUMBER + " sdk_p99=" + NUMBER
            + " threads_peak=(\\d+) threads_before=(\\d+) sessions=(\\d+) unit=ms baseline=none");

    private static final Pattern SDK_ONLY_STATS = Pattern.compile(
            "STATS (\\S+) sdk_min=" + NUMBER + " sdk_max=" + NUMBER + " reps=1 warmup=0 target=none met=n/a");

    /** The burst row: percentiles of the waits beside those of cold creates. */
    private static final Pattern BURST = Pattern.compile("RESULT (\\S+) sdk_p50=" + NUMBER + " sdk_p99=" + NUMBER
            + " baseline_p99=" + NUMBER + " ratio_p99=" + NUMBER + " acquires=(\\d+) unit=ms");

    private static final Pattern BURST_STATS = Pattern.compile("STATS (\\S+) sdk_max=" + NUMBER + " baseline_p50="
            + NUMBER + " cold_creates=(\\d+) cold_acquires=(\\d+) warm=(\\d+) cap=(\\d+) alive_max=(\\d+)"
            + " reps=(\\d+) warmup=(\\d+) target=none met=n/a");

    private static final Map<String, String> UNITS = Map.ofEntries(
            Map.entry("local-exec-latency", "ms"),
            Map.entry("local-stream-throughput", "lines/s"),
            Map.entry("local-concurrent-streams", "threads"),
            Map.entry("docker-exec-latency", "ms"),
            Map.entry("docker-exec-throughput", "execs/s"),
            Map.entry("docker-session-create", "ms"),
            Map.entry("docker-session-create-pooled", "ms"),
            Map.entry("docker-pool-burst", "ms"),
            Map.entry("docker-stream-throughput", "lines/s"),
            Map.entry("docker-copy-throughput", "MiB/s"),
            Map.entry("docker-tunnel-throughput", "MiB/s"),
            Map.entry("docker-tunnel-vs-loopback", "MiB/s"),
            Map.entry("docker-egress-latency", "ms"),
            Map.entry("docker-watch-latency", "ms"),
            Map.entry("docker-pause-resume", "ms"),
            Map.entry("kubernetes-exec-latency", "ms"),
            Map.entry("kubernetes-session-create", "ms"),
            Map.entry("kubernetes-session-create-pooled", "ms"),
            Map.entry("kubernetes-stream-throughput", "lines/s"),
            Map.entry("kubernetes-concurrent-create", "ms"),
            Map.entry("remote-exec-latency", "ms"),
            Map.entry("remote-exec-throughput", "execs/s"),
            Map.entry("remote-stream-throughput", "lines/s"));

    /** Under {@code CI=true} the Docker rows must run: CI provides the daemon and the image (see {@code .ci/run}). */
    private static final boolean CI = "true".equalsIgnoreCase(System.getenv("CI"));

    record Run(int status, List<String> out, String err) {}

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            status = Main.run(args, o, e);
        }
        String errText = err.toString(StandardCharsets.UTF_8);
        System.err.print(errText); // progress, in the surefire report
        return new Run(status, out.toString(StandardCharsets.UTF_8).lines().toList(), errText);
    }

    /**
     * Whether a row may report {@code skipped} with this reason: a pending row because its provider is not built; a
     * Docker row because no daemon answers or the image is missing, but not under {@code CI=true}.
     */
    private static void assertSkipAllowed(String name, String reason) {
        if (Benchmarks.byName(name).orElseThrow().unavailable().isPresent()) {
            assertThat(reason).as("the reason").contains("not built yet");
            return;
        }
        assertThat(name)
                .as("only Docker and Kubernetes rows skip at run time; %s said: %s", name, reason)
                .matches("(docker|kubernetes)-.*");
        assertThat(reason)
                .as("why %s skipped", name)
                .containsAnyOf("no Docker daemon", "no Kubernetes cluster", "is missing");
        assertThat(CI)
                .as(
                        "CI=true, so %s must run, but it skipped: %s (.ci/run starts dockerd, the cluster and builds"
                                + " the images)",
                        name, reason)
                .isFalse();
    }

    @Test
    @Timeout(420)
    void everyBenchmarkRunsOnceInShortModeAndReportsWellFormedLines() {
        Run run = run("--short");
        System.out.println(String.join("\n", run.out()));
        assertThat(run.status()).as("exit status; stderr:%n%s", run.err()).isZero();

        Map<String, String> resultLines = run.out().stream()
                .filter(l -> l.startsWith("RESULT "))
                .collect(Collectors.toMap(l -> l.split(" ")[1], Function.identity()));
        assertThat(resultLines.keySet()).containsExactlyInAnyOrderElementsOf(Benchmarks.names());
        assertThat(run.out())
                .filteredOn(l -> l.startsWith("RESULT "))
                .hasSize(Benchmarks.names().size());

        for (String name : Benchmarks.names()) {
            String line = resultLines.get(name);
            Matcher skipped = SKIPPED.matcher(line);
            if (skipped.matches()) {
                assertSkipAllowed(name, skipped.group(2));
                assertThat(run.out()).noneMatch(l -> l.startsWith("STATS " + name + " "));
                continue;
            }
            assertThat(Benchmarks.byName(name).orElseThrow().unavailable())
                    .as("%s is pending but printed %s", name, line)
                    .isEmpty();
            if (name.equals("kubernetes-concurrent-create")) {
                assertSdkOnly(name, line, run.out());
                continue;
            }
            if (name.equals("docker-pool-burst")) {
                assertBurst(name, line, run.out());
                continue;
            }
            Matcher m = RESULT.matcher(line);
            assertThat(m.matches()).as(line).isTrue();
            double sdk = Double.parseDouble(m.group(2));
            double baseline = Double.parseDouble(m.group(3));
            double ratio = Double.parseDouble(m.group(4));
            assertThat(sdk).as("sdk figure of %s", name).isPositive();
            assertThat(baseline).as("baseline figure of %s", name).isPositive();
            // the printed ratio is the printed figures' ratio, up to their rounding
            assertThat(ratio).as(line).isCloseTo(sdk / baseline, org.assertj.core.data.Percentage.withPercentage(1));
            assertThat(m.group(5)).as("unit of %s", name).isEqualTo(UNITS.get(name));

            List<String> stats = run.out().stream()
                    .filter(l -> l.startsWith("STATS " + name + " "))
                    .toList();
            assertThat(stats).hasSize(1);
            Matcher s = STATS.matcher(stats.get(0));
            assertThat(s.matches()).as(stats.get(0)).isTrue();
            assertThat(Double.parseDouble(s.group(2))).isPositive();
            assertThat(Double.parseDouble(s.group(3))).isPositive();
            assertThat(Integer.parseInt(s.group(4))).as("reps").isPositive();
        }
        assertNoDockerLeftovers();
        assertNoKubernetesLeftovers();
    }

    /** The row without a baseline: its percentiles are ordered, it made the sessions it says, threads were seen. */
    private static void assertSdkOnly(String name, String line, List<String> out) {
        Matcher m = SDK_ONLY.matcher(line);
        assertThat(m.matches()).as(line).isTrue();
        double p50 = Double.parseDouble(m.group(2));
        double p99 = Double.parseDouble(m.group(3));
        assertThat(p50).as("p50 of %s", name).isPositive();
        assertThat(p99).as("p99 of %s", name).isGreaterThanOrEqualTo(p50);
        assertThat(Integer.parseInt(m.group(4)))
                .as("peak threads")
                .isGreaterThanOrEqualTo(Integer.parseInt(m.group(5)));
        assertThat(Integer.parseInt(m.group(6))).as("sessions").isEqualTo(KubernetesConcurrentCreate.SHORT_SESSIONS);
        List<String> stats =
                out.stream().filter(l -> l.startsWith("STATS " + name + " ")).toList();
        assertThat(stats).hasSize(1);
        Matcher s = SDK_ONLY_STATS.matcher(stats.get(0));
        assertThat(s.matches()).as(stats.get(0)).isTrue();
        assertThat(Double.parseDouble(s.group(2))).isLessThanOrEqualTo(p50);
        assertThat(Double.parseDouble(s.group(3))).isGreaterThanOrEqualTo(p99);
    }

    /**
     * The burst row: every acquire of the short burst was served, the percentiles are ordered, the printed ratio is
     * the printed p99s' ratio, at least the callers past the warm sessions waited for a create, and the pool never
     * had more sessions alive than its cap.
     */
    private static void assertBurst(String name, String line, List<String> out) {
        Matcher m = BURST.matcher(line);
        assertThat(m.matches()).as(line).isTrue();
        double p50 = Double.parseDouble(m.group(2));
        double p99 = Double.parseDouble(m.group(3));
        double coldP99 = Double.parseDouble(m.group(4));
        assertThat(p50).as("p50 of %s", name).isPositive();
        assertThat(p99).as("p99 of %s", name).isGreaterThanOrEqualTo(p50);
        assertThat(coldP99).as("cold p99 of %s", name).isPositive();
        assertThat(Double.parseDouble(m.group(5)))
                .as(line)
                .isCloseTo(p99 / coldP99, org.assertj.core.data.Percentage.withPercentage(1));
        assertThat(Integer.parseInt(m.group(6))).as("acquires").isEqualTo(DockerPoolBurst.SHORT_ACQUIRES);
        List<String> stats =
                out.stream().filter(l -> l.startsWith("STATS " + name + " ")).toList();
        assertThat(stats).hasSize(1);
        Matcher s = BURST_STATS.matcher(stats.get(0));
        assertThat(s.matches()).as(stats.get(0)).isTrue();
        assertThat(Double.parseDouble(s.group(2))).as("max wait").isGreaterThanOrEqualTo(p99);
        assertThat(Integer.parseInt(s.group(4))).as("cold creates").isEqualTo(DockerPoolBurst.SHORT_COLD);
        assertThat(Long.parseLong(s.group(5)))
                .as("acquires that waited for a create")
                .isGreaterThanOrEqualTo(DockerPoolBurst.SHORT_ACQUIRES - DockerPoolBurst.WARM);
        assertThat(Integer.parseInt(s.group(8)))
                .as("most sessions alive")
                .isPositive()
                .isLessThanOrEqualTo(DockerPoolBurst.CAP);
    }

    /** Every pod a Kubernetes row made carries its run's label; none may be left once the rows are done. */
    private static void assertNoKubernetesLeftovers() {
        if (KubeBench.runIds().isEmpty()) {
            return;
        }
        try (KubernetesClient client = new KubernetesClientBuilder().build()) {
            for (String runId : KubeBench.runIds()) {
                assertThat(KubeBench.left(client, runId))
                        .as("pods labelled %s=%s after the run", KubeBench.LABEL, runId)
                        .isEmpty();
            }
        }
    }

    /** Every container a Docker row made carries its run's label; none may be left once the rows are done. */
    private static void assertNoDockerLeftovers() {
        if (DockerBench.runIds().isEmpty()) {
            return; // no Docker row got as far as making anything
        }
        DefaultDockerClientConfig config =
                DefaultDockerClientConfig.createDefaultConfigBuilder().build();
        try (DockerClient docker = DockerClientImpl.getInstance(
                config,
                new ZerodepDockerHttpClient.Builder()
                        .dockerHost(config.getDockerHost())
                        .build())) {
            for (String runId : DockerBench.runIds()) {
                List<Container> left = docker.listContainersCmd()
                        .withShowAll(true)
                        .withLabelFilter(Map.of(DockerBench.LABEL, runId))
                        .exec();
                assertThat(left)
                        .as("containers labelled %s=%s after the run", DockerBench.LABEL, runId)
                        .isEmpty();
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aPendingOrSkippingBenchmarkPrintsOneSkippedLineAndDoesNotFail() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RunConfig config =
                RunConfig.of(true, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8)) {
            Benchmark pending = new Pending("some-row", "ms", Target.atMost(1.5), "its provider is not built yet");
            assertThat(Main.runOne(pending, config, o, System.err)).isTrue();
            Benchmark skipping = new Benchmark() {
                @Override
                public String name() {
                    return "other-row";
                }

                @Override
                public String unit() {
                    return "ms";
                }

                @Override
                public Target target() {
                    return Target.atMost(1.5);
                }

                @Override
                public Result run(RunConfig c) throws Skipped {
                    throw new Skipped("no Docker daemon: nothing answers");
                }
            };
            assertThat(Main.runOne(skipping, config, o, System.err)).isTrue();
        }
        assertThat(out.toString(StandardCharsets.UTF_8).lines())
                .containsExactly(
                        "RESULT some-row skipped (its provider is not built yet)",
                        "RESULT other-row skipped (no Docker daemon: nothing answers)");
    }

    @Test
    void aDockerRowWithoutADaemonIsSkippedWithTheReason() {
        // docker-java reads DOCKER_HOST from system properties over the environment; nothing listens on this socket
        String before = System.getProperty("DOCKER_HOST");
        System.setProperty("DOCKER_HOST", "unix:///nonexistent/sandbox-bench-no-daemon.sock");
        try {
            Run run = run("--short", "docker-exec-latency");
            assertThat(run.status()).isZero();
            assertThat(run.out()).hasSize(1);
            assertThat(run.out().get(0))
                    .matches(SKIPPED)
                    .startsWith("RESULT docker-exec-latency skipped (no Docker daemon: ");
        } finally {
            if (before == null) {
                System.clearProperty("DOCKER_HOST");
            } else {
                System.setProperty("DOCKER_HOST", before);
            }
        }
    }

    @Test
    void aKubernetesRowWithoutAClusterIsSkippedWithTheReason() {
        // fabric8 and the rows read the system property kubeconfig before the environment's KUBECONFIG
        String before = System.getProperty("kubeconfig");
        System.setProperty("kubeconfig", "/nonexistent/sandbox-bench-no-cluster.kubeconfig");
        try {
            for (String name : List.of("kubernetes-exec-latency", "kubernetes-concurrent-create")) {
                Run run = run("--short", name);
                assertThat(run.status()).isZero();
                assertThat(run.out())
                        .containsExactly("RESULT " + name + " skipped (no Kubernetes cluster: KUBECONFIG names no"
                                + " file: /nonexistent/sandbox-bench-no-cluster.kubeconfig)");
            }
        } finally {
            if (before == null) {
                System.clearProperty("kubeconfig");
            } else {
                System.setProperty("kubeconfig", before);
            }
        }
    }

    @Test
    void anUnknownNameIsAnErrorThatListsTheNames() {
        Run run = run("--short", "local-exec-latencyy");
        assertThat(run.status()).isEqualTo(2);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).contains("'local-exec-latencyy'").contains("local-exec-latency,");
    }

    @Test
    void listPrintsEveryNameInRunOrder() {
        Run run = run("--list");
        assertThat(run.status()).isZero();
        assertThat(run.out()).containsExactlyElementsOf(Benchmarks.names());
        assertThat(run.out())
                .startsWith("local-exec-latency", "local-stream-throughput", "local-concurrent-streams")
                .contains("docker-copy-throughput", "remote-stream-throughput");
    }

    @Test
    void aReportedRatioPrintsTheUsualResultAndNoTarget() {
        Samples tunnel = new Samples(new double[] {290, 300, 310}, true);
        Samples loopback = new Samples(new double[] {5000, 6000, 7000}, true);
        ReportedRatio r = new ReportedRatio(new Result(
                "docker-tunnel-vs-loopback", "MiB/s", Target.atLeast(1.0), new Reps(2, 3), tunnel, loopback));
        assertThat(r.resultLine())
                .isEqualTo("RESULT docker-tunnel-vs-loopback sdk=300 baseline=6000 ratio=0.05 unit=MiB/s")
                .matches(RESULT);
        assertThat(r.statsLine())
                .startsWith("STATS docker-tunnel-vs-loopback sdk_p95=290 baseline_p95=5000 reps=3 warmup=2 ")
                .endsWith(" target=none met=n/a")
                .matches(STATS);
    }

    @Test
    void anAbsoluteTargetJudgesTheSdksMedianAndARatioTargetTheRatio() {
        Reps reps = new Reps(0, 3);
        // the SDK at 30 ms is 0.1 of a 300 ms baseline: the ratio is fine, the absolute goal of 20 ms is not
        Samples sdk = new Samples(new double[] {29, 30, 31}, false);
        Samples baseline = new Samples(new double[] {300, 300, 300}, false);
        Result absolute = new Result("watch", "ms", Target.sdkAtMost(20), reps, sdk, baseline);
        Result ratio = new Result("watch", "ms", Target.atMost(0.5), reps, sdk, baseline);
        assertThat(absolute.statsLine()).endsWith(" target=sdk<=20.0 met=no").matches(STATS);
        assertThat(ratio.statsLine()).endsWith(" target=ratio<=0.5 met=yes").matches(STATS);
        assertThat(absolute.resultLine()).isEqualTo("RESULT watch sdk=30 baseline=300 ratio=0.1 unit=ms");

        Samples fast = new Samples(new double[] {12, 15, 19}, false);
        assertThat(new Result("watch", "ms", Target.sdkAtMost(20), reps, fast, baseline).statsLine())
                .endsWith(" met=yes");
        assertThat(Target.sdkAtLeast(10).met(9.9, 100)).isFalse();
        assertThat(Target.atLeast(10).met(9.9, 100)).isTrue();
    }

    @Test
    void aBurstReportPrintsTheWaitsPercentilesBesideTheColdP99AndTheirRatio() {
        double[] waits = new double[200];
        for (int i = 0; i < 200; i++) {
            waits[i] = i + 1; // 1..200 ms
        }
        double[] cold = new double[100];
        for (int i = 0; i < 100; i++) {
            cold[i] = 301 + i; // 301..400 ms
        }
        PoolBurstReport r = new PoolBurstReport(
                "docker-pool-burst",
                8,
                16,
                new Samples(waits, false),
                new Samples(cold, false),
                192,
                16,
                new Reps(1, 2));
        // nearest rank: p50 of 200 is the 100th, p99 the 198th; p99 of 100 is the 99th
        assertThat(r.resultLine())
                .isEqualTo("RESULT docker-pool-burst sdk_p50=100 sdk_p99=198 baseline_p99=399 ratio_p99=0.4962"
                        + " acquires=200 unit=ms")
                .matches(BURST);
        assertThat(r.statsLine())
                .isEqualTo("STATS docker-pool-burst sdk_max=200 baseline_p50=350 cold_creates=100 cold_acquires=192"
                        + " warm=8 cap=16 alive_max=16 reps=2 warmup=1 target=none met=n/a")
                .matches(BURST_STATS);
    }

    @Test
    void p95IsOnTheSlowSideForCostsAndRates() {
        double[] values = new double[20];
        for (int i = 0; i < 20; i++) {
            values[i] = i + 1; // 1..20
        }
        assertThat(new Samples(values, false).p95()).isEqualTo(19); // ms: 19 of 20 rounds at or below
        assertThat(new Samples(values, true).p95()).isEqualTo(2); // lines/s: 19 of 20 rounds at or above
        assertThat(new Samples(values, false).median()).isEqualTo(10.5);
        assertThat(Result.number(12_345_678.9)).isEqualTo("12345679");
        assertThat(Result.number(4.20912)).isEqualTo("4.209");
        assertThat(Result.number(0.0412345)).isEqualTo("0.04123");
    }
}
