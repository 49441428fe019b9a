package dev.sandbox.benchmarks;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The registry of benchmarks by name, in the order the jar runs them. Each entry is a factory, so a run makes fresh
 * instances. A row whose provider does not exist yet is a {@link Pending} entry; to add the real benchmark, write a
 * {@link Benchmark} class and put it in place of the pending entry under the same name. A row that finds at run time
 * that it cannot measure here (no Docker daemon) throws {@link Skipped} from its {@code run}.
 *
 * <pre>{@code
 * for (String name : Benchmarks.names()) {
 *     Benchmark b = Benchmarks.byName(name).orElseThrow();
 * }
 * }</pre>
 */
public final class Benchmarks {
    private static final Map<String, Supplier<Benchmark>> REGISTRY = registry();

    private Benchmarks() {}

    private static Map<String, Supplier<Benchmark>> registry() {
        Map<String, Supplier<Benchmark>> r = new LinkedHashMap<>();
        add(r, LocalExecLatency::new);
        add(r, LocalStreamThroughput::new);
        add(r, LocalConcurrentStreams::new);
        add(r, DockerExecLatency::new);
        add(r, DockerExecThroughput::new);
        add(r, DockerSessionCreate::new);
        add(r, DockerSessionCreatePooled::new);
        add(r, DockerPoolBurst::new);
        add(r, DockerStreamThroughput::new);
        add(r, DockerCopyThroughput::new);
        add(r, DockerTunnelThroughput::new);
        add(r, DockerTunnelVsLoopback::new);
        add(r, DockerEgressLatency::new);
        add(r, DockerWatchLatency::new);
        add(r, DockerPauseResume::new);
        add(r, KubernetesExecLatency::new);
        add(r, KubernetesSessionCreate::new);
        add(r, KubernetesSessionCreatePooled::new);
        add(r, KubernetesStreamThroughput::new);
        add(r, KubernetesConcurrentCreate::new);
        add(r, RemoteExecLatency::new);
        add(r, RemoteExecThroughput::new);
        add(r, RemoteStreamThroughput::new);
        return Collections.unmodifiableMap(r);
    }

    private static void add(Map<String, Supplier<Benchmark>> r, Supplier<Benchmark> factory) {
        String name = factory.get().name();
        if (r.putIfAbsent(name, factory) != null) {
            throw new IllegalStateException("two benchmarks named " + name);
        }
    }

    /**
     * Every benchmark's name, in run order.
     *
     * @return the names
     */
    public static List<String> names() {
        return List.copyOf(REGISTRY.keySet());
    }

    /**
     * A fresh instance of the named benchmark.
     *
     * @param name a name from {@link #names()}
     * @return the benchmark, or empty for an unknown name
     */
    public static Optional<Benchmark> byName(String name) {
        Supplier<Benchmark> factory = REGISTRY.get(name);
        return factory == null ? Optional.empty() : Optional.of(factory.get());
    }
}
