package dev.sandbox.spring.boot.autoconfigure;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SandboxProvider;
import dev.sandbox.kubernetes.KubernetesSandboxProvider;
import dev.sandbox.kubernetes.KubernetesSettings;

/**
 * {@code sandbox.provider=kubernetes}: a pod per session, in the namespace and with the images of {@code
 * sandbox.kubernetes.*}. Loaded only when {@code sandbox-kubernetes} is on the class path.
 */
final class KubernetesProviderFactory implements SandboxProviderFactory {
    private static final String PREFIX = "sandbox.kubernetes.";

    @Override
    public String name() {
        return KubernetesSandboxProvider.NAME;
    }

    @Override
    public SandboxProvider create(SandboxProperties properties) {
        SandboxProperties.Kubernetes kubernetes = properties.kubernetes();
        KubernetesSettings settings = settings(kubernetes);
        try {
            KubernetesSandboxProvider.Builder builder = KubernetesSandboxProvider.builder()
                    .settings(settings)
                    .lease(Settings.positive(PREFIX + "lease", kubernetes.lease()))
                    .maxLifetime(Settings.positive(PREFIX + "max-lifetime", kubernetes.maxLifetime()));
            if (kubernetes.kubeconfig() != null) {
                builder.kubeconfig(kubernetes.kubeconfig());
            }
            if (kubernetes.context() != null) {
                builder.context(kubernetes.context().trim());
            }
            if (kubernetes.namespace() != null) {
                builder.namespace(kubernetes.namespace().trim());
            }
            return builder.build();
        } catch (InvalidArgumentException e) {
            throw e.field().startsWith(PREFIX) ? e : Settings.renamed(PREFIX, e);
        }
    }

    /** The pods' settings, checked as the provider checks them. */
    static KubernetesSettings settings(SandboxProperties.Kubernetes kubernetes) {
        String image = Settings.required(
                PREFIX + "image",
                kubernetes.image(),
                "sandbox.provider=kubernetes needs sandbox.kubernetes.image, the image every session's pod runs,"
                        + " such as python:3.12-slim");
        try {
            KubernetesSettings settings = KubernetesSettings.of(image)
                    .withPullPolicy(Settings.word(
                            KubernetesSettings.PullPolicy.class, PREFIX + "pull-policy", kubernetes.pullPolicy()));
            if (kubernetes.agentImage() != null) {
                settings = settings.withAgentImage(kubernetes.agentImage().trim());
            }
            if (kubernetes.runtimeClassName() != null) {
                settings = settings.withRuntimeClassName(
                        kubernetes.runtimeClassName().trim());
            }
            return settings;
        } catch (InvalidArgumentException e) {
            throw e.field().startsWith(PREFIX) ? e : Settings.renamed(PREFIX, e);
        }
    }
}
