package dev.sandbox.benchmarks;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.implementation.kubernetes.WireBytes;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import reactor.core.publisher.Flux;

/**
 * What one session's agent connection (one held {@code exec} WebSocket) costs the cluster: the resident memory
 * ({@code VmRSS}) and goroutines of the API server and the kubelet with 0, 50 and 100 idle sessions held open, and
 * the bytes on the wire per {@code session.run(echo hi)} (counted below TLS by {@link WireBytes}). After the
 * last level it closes the provider, which closes every connection but leaves the pods (they have no lifetime and
 * no lease), and samples again: the difference is the connections' own cost, apart from their pods'. Not a {@link
 * Benchmark}: it has no baseline, and it loads the shared cluster, so it runs only when asked:
 *
 * <pre>{@code
 * java -cp benchmarks/target/benchmarks.jar dev.sandbox.benchmarks.KubeConnectionCost [levels] [runs]
 * java -cp benchmarks/target/benchmarks.jar dev.sandbox.benchmarks.KubeConnectionCost 0,50,100 500
 * }</pre>
 *
 * <p>The process ids come from {@code /tmp/dev-sandbox-kube/pids} (lines {@code <component> <pid>}, written by
 * {@code scripts/kube-up.sh}), the metrics from {@code https://127.0.0.1:6443/metrics} and {@code
 * https://127.0.0.1:10250/metrics} with the token in the first field of {@code /tmp/dev-sandbox-kube/pki/tokens.csv}
 * ({@code -Dsandbox.bench.kube.dir=<dir>} moves both). Each figure is the median of three samples a second apart,
 * taken five seconds after the sessions were made. Other users of the cluster move the figures too; the per-session
 * cost is the difference between levels divided by the sessions added.
 */
public final class KubeConnectionCost {
    private static final Path DIR = Path.of(System.getProperty("sandbox.bench.kube.dir", "/tmp/dev-sandbox-kube"));

    private KubeConnectionCost() {}

    /** One level's figures. */
    record Sample(
            int sessions, long apiserverRssKb, long kubeletRssKb, long apiserverGoroutines, long kubeletGoroutines) {}

    /**
     * Runs the measurement and prints one {@code COST} line per level, then the per-session differences and the
     * wire bytes per run.
     *
     * @param args the levels (comma-separated, ascending, default {@code 0,50,100}) and the runs of {@code echo hi}
     *     for the wire count (default 200)
     * @throws Exception when the cluster or a session fails
     */
    public static void main(String[] args) throws Exception {
        int[] levels = args.length > 0
                ? Arrays.stream(args[0].split(",")).mapToInt(Integer::parseInt).toArray()
                : new int[] {0, 50, 100};
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 200;
        PrintStream out = System.out;
        RunConfig config = RunConfig.of(false, System.err);
        try (KubeBench kube = KubeBench.open("kubernetes-connection-cost", config)) {
            List<Sample> samples = new ArrayList<>();
            KubernetesSandboxProvider provider = kube.provider();
            List<SandboxSession> held = new ArrayList<>();
            try {
                wireBytesPerRun(kube, provider, runs, out);
                for (int level : levels) {
                    int more = level - held.size();
                    if (more < 0) {
                        throw new IllegalArgumentException("levels must ascend, got " + args[0]);
                    }
                    long t0 = System.nanoTime();
                    held.addAll(Flux.range(0, more)
                            .flatMap(i -> provider.create(kube.sessionOptions()), 16)
                            .collectList()
                            .block(KubeBench.TIMEOUT.multipliedBy(3)));
                    config.log(
                            "%d sessions held (%d made in %.1f s), each with its agent connection open",
                            held.size(), more, (System.nanoTime() - t0) / 1e9);
                    samples.add(print(out, "open", sample(held.size())));
                }
            } finally {
                // the sessions' pods stay (they have no lifetime and no lease); their exec connections close
                provider.close();
            }
            if (!held.isEmpty()) {
                config.log("provider closed: %d pods without a connection", held.size());
                Sample closed = print(out, "closed", sample(held.size()));
                Sample last = samples.get(samples.size() - 1);
                out.printf(
                        Locale.ROOT,
                        "PER_CONNECTION sessions=%d apiserver_rss_kb=%.1f kubelet_rss_kb=%.1f"
                                + " apiserver_goroutines=%.2f kubelet_goroutines=%.2f (open minus closed)%n",
                        held.size(),
                        (last.apiserverRssKb() - closed.apiserverRssKb()) / (double) held.size(),
                        (last.kubeletRssKb() - closed.kubeletRssKb()) / (double) held.size(),
                        (last.apiserverGoroutines() - closed.apiserverGoroutines()) / (double) held.size(),
                        (last.kubeletGoroutines() - closed.kubeletGoroutines()) / (double) held.size());
            }
            for (int i = 1; i < samples.size(); i++) {
                Sample a = samples.get(i - 1);
                Sample b = samples.get(i);
                double n = b.sessions() - a.sessions();
                out.printf(
                        Locale.ROOT,
                        "PER_SESSION from=%d to=%d apiserver_rss_kb=%.1f kubelet_rss_kb=%.1f"
                                + " apiserver_goroutines=%.2f kubelet_goroutines=%.2f (pod and connection)%n",
                        a.sessions(),
                        b.sessions(),
                        (b.apiserverRssKb() - a.apiserverRssKb()) / n,
                        (b.kubeletRssKb() - a.kubeletRssKb()) / n,
                        (b.apiserverGoroutines() - a.apiserverGoroutines()) / n,
                        (b.kubeletGoroutines() - a.kubeletGoroutines()) / n);
            }
        } // closing the bench deletes every pod of this run
    }

    private static Sample print(PrintStream out, String connections, Sample s) {
        out.printf(
                Locale.ROOT,
                "COST sessions=%d connections=%s apiserver_rss_kb=%d kubelet_rss_kb=%d apiserver_goroutines=%d"
                        + " kubelet_goroutines=%d%n",
                s.sessions(),
                connections,
                s.apiserverRssKb(),
                s.kubeletRssKb(),
                s.apiserverGoroutines(),
                s.kubeletGoroutines());
        return s;
    }

    /** Bytes on the wire (TLS records included) per {@code run(echo hi)} on one warm session. */
    private static void wireBytesPerRun(KubeBench kube, KubernetesSandboxProvider provider, int runs, PrintStream out) {
        SandboxSession session = provider.create(kube.sessionOptions()).block(KubeBench.TIMEOUT);
        try {
            ExecOptions echo = ExecOptions.of("echo", "hi");
            for (int i = 0; i < 20; i++) {
                check(session.run(echo).block(KubeBench.TIMEOUT));
            }
            long sent = WireBytes.sent();
            long received = WireBytes.received();
            for (int i = 0; i < runs; i++) {
                check(session.run(echo).block(KubeBench.TIMEOUT));
            }
            out.printf(
                    Locale.ROOT,
                    "WIRE runs=%d sent_per_run=%.1f received_per_run=%.1f bytes (TLS records included)%n",
                    runs,
                    (WireBytes.sent() - sent) / (double) runs,
                    (WireBytes.received() - received) / (double) runs);
        } finally {
            session.destroy().block(KubeBench.TIMEOUT);
        }
    }

    private static void check(ExecResult r) {
        if (r == null || r.exitCode() != 0 || !r.stdout().equals("hi\n")) {
            throw new IllegalStateException("echo hi gave " + r);
        }
    }

    private static Sample sample(int sessions) throws IOException, InterruptedException {
        Thread.sleep(5000); // let the components settle after the change
        long[][] v = new long[4][3];
        for (int i = 0; i < 3; i++) {
            if (i > 0) {
                Thread.sleep(1000);
            }
            v[0][i] = rssKb("kube-apiserver");
            v[1][i] = rssKb("kubelet");
            v[2][i] = goroutines("https://127.0.0.1:6443/metrics");
            v[3][i] = goroutines("https://127.0.0.1:10250/metrics");
        }
        return new Sample(sessions, median(v[0]), median(v[1]), median(v[2]), median(v[3]));
    }

    private static long median(long[] three) {
        long[] s = three.clone();
        Arrays.sort(s);
        return s[1];
    }

    /** A component's resident memory in KiB, from {@code /proc/<pid>/status}. */
    static long rssKb(String component) throws IOException {
        String pid = null;
        for (String line : Files.readAllLines(DIR.resolve("pids"))) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 2 && f[0].equals(component)) {
                pid = f[1];
            }
        }
        if (pid == null || !pid.chars().allMatch(Character::isDigit)) {
            throw new IllegalStateException("no pid of " + component + " in " + DIR.resolve("pids"));
        }
        for (String line : Files.readAllLines(Path.of("/proc", pid, "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no VmRSS for " + component + " (pid " + pid + ")");
    }

    /** {@code go_goroutines} of a component's metrics endpoint, read with curl as an operator would. */
    static long goroutines(String url) throws IOException, InterruptedException {
        String token =
                Files.readString(DIR.resolve("pki/tokens.csv")).split(",", 2)[0].trim();
        Process p = new ProcessBuilder("curl", "-sk", "-m", "10", "-H", "Authorization: Bearer " + token, url)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("curl " + url + " did not finish");
        }
        return text.lines()
                .filter(l -> l.startsWith("go_goroutines "))
                .mapToLong(l -> (long) Double.parseDouble(
                        l.substring("go_goroutines ".length()).trim()))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no go_goroutines at " + url));
    }
}
