/**
 * The Kubernetes provider, {@link dev.sandbox.kubernetes.KubernetesSandboxProvider}: each session a pod on a cluster,
 * configured by {@link dev.sandbox.kubernetes.KubernetesSettings}, with the typed errors the cluster can answer.
 *
 * <p>Nullness: every type in this package is non-null unless annotated {@link org.jspecify.annotations.Nullable}
 * ({@link org.jspecify.annotations.NullMarked}); NullAway checks it when the SDK is built.
 */
@NullMarked
package dev.sandbox.kubernetes;

import org.jspecify.annotations.NullMarked;
