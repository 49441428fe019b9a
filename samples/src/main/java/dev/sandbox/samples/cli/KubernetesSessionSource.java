package dev.sandbox.samples.cli;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import dev.sandbox.kubernetes.KubernetesSettings;
import java.util.Locale;
import java.util.Map;

/**
 * Sessions in pods of a Kubernetes cluster (the kubeconfig of {@code --kubeconfig}, else {@code KUBECONFIG}, else
 * {@code ~/.kube/config}), in {@code --namespace} or the context's namespace. They outlive the command like Docker's: a
 * later command reaches a session by its id. A call the account may not make fails with the API server's refusal,
 * naming the verb, the resource and the namespace.
 */
final class KubernetesSessionSource extends ProviderSessionSource {
    private KubernetesSessionSource(KubernetesSandboxProvider provider) {
        super(provider);
    }

    /** The provider's settings and the options they come from, for messages. */
    private static final Map<String, String> OPTIONS = Map.of(
            "image", "--image",
            "agentImage", "--agent-image",
            "cpuRequest", "--cpus",
            "cpuLimit", "--cpus",
            "memoryRequest", "--memory",
            "memoryLimit", "--memory",
            "lease", "--container-lease",
            "namespace", "--namespace",
            "context", "--context",
            "kubeconfig", "--kubeconfig");

    static KubernetesSessionSource open(Provider settings) throws UsageException {
        return new KubernetesSessionSource(serving(settings));
    }

    /**
     * The provider for {@code sandbox serve} and {@code sandbox mcp --provider kubernetes}.
     *
     * @throws UsageException naming the option when the provider refuses a value it came from
     */
    static KubernetesSandboxProvider serving(Provider settings) throws UsageException {
        Provider.Kubernetes k = settings.kubernetes();
        KubernetesSandboxProvider.Builder b;
        try {
            b = KubernetesSandboxProvider.builder().settings(settings(k));
            if (k.kubeconfig() != null) {
                b.kubeconfig(k.kubeconfig());
            }
            if (k.context() != null) {
                b.context(k.context());
            }
            if (k.namespace() != null) {
                b.namespace(k.namespace());
            }
            if (k.lease() != null) {
                b.lease(k.lease());
            }
        } catch (InvalidArgumentException e) {
            String option = OPTIONS.get(e.field());
            throw new UsageException(option == null ? e.getMessage() : option + ": " + e.getMessage());
        }
        return b.build();
    }

    static KubernetesSettings settings(Provider.Kubernetes k) {
        KubernetesSettings s = KubernetesSettings.of(k.image());
        if (k.agentImage() != null) {
            s = s.withAgentImage(k.agentImage());
        }
        if (k.pull() != null) {
            s = s.withPullPolicy(KubernetesSettings.PullPolicy.valueOf(
                    k.pull().toUpperCase(Locale.ROOT).replace('-', '_')));
        }
        if (k.cpus() != null) {
            s = s.withCpu(Math.min(s.cpuRequest(), k.cpus()), k.cpus());
        }
        if (k.memory() != null) {
            s = s.withMemoryLimit(k.memory());
        }
        return s;
    }
}
