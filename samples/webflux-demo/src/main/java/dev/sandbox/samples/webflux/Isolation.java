package dev.sandbox.samples.webflux;

import dev.sandbox.SandboxProvider;
import dev.sandbox.docker.DockerSandboxProvider;
import dev.sandbox.docker.DockerSettings;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import dev.sandbox.local.LocalSandboxProvider;
import dev.sandbox.remote.RemoteSandboxProvider;
import dev.sandbox.spring.boot.autoconfigure.ManagedSandboxProvider;

/**
 * What separates the commands from this machine, as the page tells its user.
 *
 * <pre>{@code
 * new Isolation("docker", "Docker (gVisor)", true)
 * }</pre>
 *
 * @param provider the provider's name: {@code local}, {@code docker}, {@code kubernetes} or {@code remote}
 * @param description a short text: {@code local processes: no isolation}, {@code Docker (runc)}, {@code Docker
 *     (gVisor)}, {@code Kubernetes pods in namespace NAME} (and their runtime class) or {@code remote server
 *     http://...}
 * @param isolated whether the commands run apart from this server's own user and files
 */
public record Isolation(String provider, String description, boolean isolated) {

    /**
     * The isolation of the provider the starter configured ({@code sandbox.provider} and its settings).
     *
     * @param provider the application's provider, as the starter made it
     * @return what the page shows
     */
    public static Isolation of(SandboxProvider provider) {
        SandboxProvider inner = provider instanceof ManagedSandboxProvider managed ? managed.delegate() : provider;
        return switch (inner) {
            case LocalSandboxProvider local ->
                new Isolation(LocalSandboxProvider.NAME, "local processes: no isolation", false);
            case DockerSandboxProvider docker ->
                new Isolation(
                        DockerSandboxProvider.NAME,
                        docker.settings().runtime() == DockerSettings.Runtime.RUNSC
                                ? "Docker (gVisor)"
                                : "Docker (runc)",
                        true);
            case KubernetesSandboxProvider kubernetes ->
                new Isolation(
                        KubernetesSandboxProvider.NAME,
                        "Kubernetes pods in namespace " + kubernetes.namespace()
                                + kubernetes
                                        .settings()
                                        .runtimeClassName()
                                        .map(r -> " (runtime class " + r + ")")
                                        .orElse(""),
                        true);
            case RemoteSandboxProvider remote ->
                new Isolation(
                        RemoteSandboxProvider.NAME,
                        "remote server " + remote.baseUrl() + ": its provider decides",
                        true);
            default -> new Isolation(inner.name(), "provider " + inner.name() + ": it decides", true);
        };
    }
}
