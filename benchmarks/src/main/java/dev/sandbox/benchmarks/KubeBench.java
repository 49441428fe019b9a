package dev.sandbox.benchmarks;

import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import dev.sandbox.kubernetes.KubernetesSettings;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * What the Kubernetes rows share: the check that a cluster answers (else the row is {@link Skipped}), the agent
 * image loaded into the Docker daemon the kubelet uses, the SDK's provider and session options, and the baseline's
 * plain fabric8 client with the calls a user writes without the SDK (create a pod and wait until it runs, exec a
 * command reading its output to the end and its exit code).
 *
 * <p>Everything a row makes carries this run's label: SDK sessions through {@link SessionOptions#withLabel} (the
 * provider mirrors it as the pod label {@code labels.dev.sandbox/}{@value #LABEL}), baseline pods directly under the
 * same key. {@link #close()} deletes whatever still carries it.
 *
 * <pre>{@code
 * try (KubeBench kube = KubeBench.open("kubernetes-exec-latency", config);
 *         KubernetesSandboxProvider provider = kube.provider()) {
 *     SandboxSession s = provider.create(kube.sessionOptions()).block(KubeBench.TIMEOUT);
 *     KubeBench.Exec e = kube.exec(s.id(), List.of("echo", "hi"));
 * }
 * }</pre>
 */
final class KubeBench implements AutoCloseable {
    /** The session image of every Kubernetes row, as in the Docker rows; never pulled. */
    static final String IMAGE = System.getProperty("sandbox.bench.kubernetes.image", "sandbox-test:busybox");

    /** The label key on every pod a row makes; its value is the run's id. */
    static final String LABEL = "sandbox-benchmark";

    /** The pod label the provider makes of the session label {@value #LABEL}. */
    static final String POD_LABEL = "labels.dev.sandbox/" + LABEL;

    /** The longest any single call, create or stream may take. */
    static final Duration TIMEOUT = Duration.ofMinutes(2);

    /** The session container's name in the provider's pods. */
    static final String CONTAINER = "sandbox";

    /** The agent image archive the build of {@code sandbox-agent-image} writes, loaded when present. */
    private static final Path AGENT_TAR = Path.of(System.getProperty(
            "sandbox.bench.kubernetes.agent-tar", "sandbox-agent-image/target/sandbox-agent-image.tar"));

    private static final Set<String> RUN_IDS = ConcurrentHashMap.newKeySet();
    private static volatile boolean agentLoaded;

    private final String name;
    private final RunConfig config;
    private final String runId = UUID.randomUUID().toString();
    private final KubernetesClient client;
    private final String namespace;
    private final Thread cleanupOnExit;

    private KubeBench(String name, RunConfig config, KubernetesClient client) {
        this.name = name;
        this.config = config;
        this.client = client;
        this.namespace = client.getNamespace() != null ? client.getNamespace() : "default";
        RUN_IDS.add(runId);
        this.cleanupOnExit = new Thread(this::deleteLabelled, "sandbox-bench-kube-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanupOnExit);
    }

    /**
     * The run ids of the Kubernetes rows run in this JVM, so a test can check that nothing carrying one is left.
     *
     * @return the run ids
     */
    static Set<String> runIds() {
        return Set.copyOf(RUN_IDS);
    }

    /**
     * Checks that {@code KUBECONFIG} names a cluster that answers and that the images are in the local daemon, and
     * opens the baseline's client.
     *
     * @param name the row, for progress messages
     * @param config where progress goes
     * @return the shared parts
     * @throws Skipped without {@code KUBECONFIG}, or when the cluster does not answer or an image is missing
     */
    static KubeBench open(String name, RunConfig config) throws Skipped {
        // fabric8 reads the system property kubeconfig before the environment's KUBECONFIG; so does this check
        String kubeconfig = System.getProperty("kubeconfig", System.getenv("KUBECONFIG"));
        if (kubeconfig == null || kubeconfig.isBlank()) {
            throw new Skipped("no Kubernetes cluster: KUBECONFIG is not set (scripts/kube-up.sh prints it)");
        }
        if (!Files.isRegularFile(Path.of(kubeconfig))) {
            throw new Skipped("no Kubernetes cluster: KUBECONFIG names no file: " + kubeconfig);
        }
        KubernetesClient client = new KubernetesClientBuilder().build();
        try {
            client.pods()
                    .inNamespace(client.getNamespace())
                    .withLabel(LABEL, "probe")
                    .list();
        } catch (RuntimeException e) {
            client.close();
            throw new Skipped("no Kubernetes cluster: the cluster of " + kubeconfig + " does not answer: " + e);
        }
        try {
            loadImages();
        } catch (IllegalStateException e) {
            client.close();
            throw new Skipped(e.getMessage());
        }
        return new KubeBench(name, config, client);
    }

    /** Loads the agent image the build made (once per JVM) and checks both images are in the daemon. */
    private static synchronized void loadImages() {
        if (agentLoaded) {
            return;
        }
        if (Files.isRegularFile(AGENT_TAR)) {
            command("docker", "load", "-q", "-i", AGENT_TAR.toString());
        }
        if (command("docker", "image", "inspect", "-f", "ok", KubernetesSettings.defaultAgentImage()) == null) {
            throw new IllegalStateException("the agent image " + KubernetesSettings.defaultAgentImage()
                    + " is missing (mvn package -pl sandbox-agent-image -am, then docker load)");
        }
        if (command("docker", "image", "inspect", "-f", "ok", IMAGE) == null) {
            throw new IllegalStateException("the image " + IMAGE + " is missing; scripts/test-image.sh builds it");
        }
        agentLoaded = true;
    }

    /** Runs a command; its output, or {@code null} when it failed. */
    private static String command(String... argv) {
        try {
            Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readNBytes(64 * 1024);
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return null;
            }
            return p.exitValue() == 0 ? new String(out, StandardCharsets.UTF_8) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * The plain fabric8 client of the baseline side.
     *
     * @return the client
     */
    KubernetesClient client() {
        return client;
    }

    /**
     * The namespace of both sides.
     *
     * @return the namespace
     */
    String namespace() {
        return namespace;
    }

    /**
     * The SDK's settings: the benchmark image, never pulled, everything else the provider's defaults.
     *
     * @return the settings
     */
    static KubernetesSettings settings() {
        return KubernetesSettings.of(IMAGE).withPullPolicy(KubernetesSettings.PullPolicy.NEVER);
    }

    /**
     * A provider with {@link #settings()} on the cluster of {@code KUBECONFIG}, as a user makes one.
     *
     * @return the provider; close it before this
     */
    KubernetesSandboxProvider provider() {
        return KubernetesSandboxProvider.builder().settings(settings()).build();
    }

    /**
     * Options for an SDK session: no lifetime (a full run can outlast the default) and this run's label.
     *
     * @return the options
     */
    SessionOptions sessionOptions() {
        return SessionOptions.defaults().withUnlimitedLifetime().withLabel(LABEL, runId);
    }

    /** What a baseline exec produced. */
    record Exec(String stdout, int exitCode) {}

    /**
     * Baseline: fabric8's exec of a command in a pod's session container: open, read stdout to its end, then the
     * exit code.
     *
     * @param pod the pod
     * @param argv the command
     * @return its stdout and exit code
     * @throws Exception when the exec fails or takes longer than {@link #TIMEOUT}
     */
    Exec exec(String pod, List<String> argv) throws Exception {
        try (ExecWatch w = client.pods()
                .inNamespace(namespace)
                .withName(pod)
                .inContainer(CONTAINER)
                .redirectingOutput()
                .exec(argv.toArray(String[]::new))) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            w.getOutput().transferTo(out);
            int exit = w.exitCode().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            return new Exec(out.toString(StandardCharsets.UTF_8), exit);
        }
    }

    /**
     * Baseline: fabric8's exec of a command whose stdout is handed to a reader, then the exit code.
     *
     * @param pod the pod
     * @param argv the command
     * @param reader reads stdout to its end
     * @param <T> what the reader makes of it
     * @return what the reader returned
     * @throws Exception when the exec fails, exits non-zero or takes longer than {@link #TIMEOUT}
     */
    <T> T exec(String pod, List<String> argv, StreamReader<T> reader) throws Exception {
        try (ExecWatch w = client.pods()
                .inNamespace(namespace)
                .withName(pod)
                .inContainer(CONTAINER)
                .redirectingOutput()
                .exec(argv.toArray(String[]::new))) {
            T read = reader.read(w.getOutput());
            int exit = w.exitCode().get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            if (exit != 0) {
                throw new IllegalStateException("baseline: " + argv + " exited with " + exit);
            }
            return read;
        }
    }

    /** Reads an exec's stdout. */
    @FunctionalInterface
    interface StreamReader<T> {
        /**
         * Reads to the end.
         *
         * @param in stdout
         * @return what was read
         * @throws IOException when reading fails
         */
        T read(InputStream in) throws IOException;
    }

    /**
     * The pod a session runs in, as the cluster has it, turned into a template for a baseline pod: the same spec
     * (the init container copying the agent, the session container running the agent as process 1, resources,
     * security context, volume), without the session's identity (name, owner, the provider's session label,
     * annotations) and with this run's label.
     *
     * @param session a session of this run
     * @return the template
     */
    Pod baselineTemplate(SandboxSession session) {
        Pod p = client.pods().inNamespace(namespace).withName(session.id()).get();
        if (p == null) {
            throw new IllegalStateException("the pod of session " + session.id() + " is gone");
        }
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(LABEL, runId);
        ObjectMeta meta = new ObjectMeta();
        meta.setLabels(labels);
        meta.setNamespace(namespace);
        return new PodBuilder().withMetadata(meta).withSpec(p.getSpec()).build();
    }

    /**
     * Baseline: creates a pod from a template under a new name and waits until it runs, with fabric8's {@code
     * waitUntilCondition} (a watch).
     *
     * @param template from {@link #baselineTemplate}
     * @return the pod's name
     */
    String createRunningPod(Pod template) {
        String podName = "bench-"
                + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
        Pod pod = new PodBuilder(template)
                .editMetadata()
                .withName(podName)
                .endMetadata()
                .editSpec()
                .withNodeName(null)
                .endSpec()
                .build();
        client.pods().inNamespace(namespace).resource(pod).create();
        client.pods()
                .inNamespace(namespace)
                .withName(podName)
                .waitUntilCondition(
                        p -> p != null
                                && p.getStatus() != null
                                && "Running".equals(p.getStatus().getPhase()),
                        TIMEOUT.toMillis(),
                        TimeUnit.MILLISECONDS);
        return podName;
    }

    /**
     * Deletes a pod at once (grace period 0); a pod that is gone counts as deleted.
     *
     * @param pod the pod's name
     */
    void delete(String pod) {
        client.pods().inNamespace(namespace).withName(pod).withGracePeriod(0).delete();
    }

    /** Deletes every pod that still carries this run's label (baseline pods, and sessions a failure left). */
    @Override
    public void close() {
        try {
            Runtime.getRuntime().removeShutdownHook(cleanupOnExit);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs
        }
        try {
            deleteLabelled();
        } finally {
            client.close();
        }
    }

    private void deleteLabelled() {
        try {
            int n = 0;
            for (String key : List.of(LABEL, POD_LABEL)) {
                for (Pod p : client.pods()
                        .inNamespace(namespace)
                        .withLabel(key, runId)
                        .list()
                        .getItems()) {
                    if (p.getMetadata().getDeletionTimestamp() == null) {
                        delete(p.getMetadata().getName());
                        n++;
                    }
                }
            }
            if (n > 0) {
                config.log("%s: deleted %d pod(s) the run left behind", name, n);
            }
        } catch (RuntimeException e) {
            config.log("%s: cannot delete the pods this run left: %s", name, e);
        }
    }

    /**
     * The pods of this run that are not being deleted, for the leak check.
     *
     * @param client a client
     * @param runId a run id from {@link #runIds()}
     * @return their names
     */
    static List<String> left(KubernetesClient client, String runId) {
        String ns = client.getNamespace() != null ? client.getNamespace() : "default";
        return List.of(LABEL, POD_LABEL).stream()
                .flatMap(key -> client.pods().inNamespace(ns).withLabel(key, runId).list().getItems().stream())
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .map(p -> p.getMetadata().getName())
                .toList();
    }
}
