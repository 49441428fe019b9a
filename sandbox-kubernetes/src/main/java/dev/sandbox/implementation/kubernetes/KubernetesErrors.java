package dev.sandbox.implementation.kubernetes;

import dev.sandbox.BackendException;
import dev.sandbox.InvalidArgumentException;
import dev.sandbox.kubernetes.KubernetesForbiddenException;
import dev.sandbox.kubernetes.KubernetesQuotaExceededException;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.ConnectException;

/** Maps what the fabric8 client throws to the SDK's typed errors. */
final class KubernetesErrors {
    private KubernetesErrors() {}

    /**
     * The SDK's error for a failed control call.
     *
     * @param e what the call threw
     * @param verb the verb, such as {@code create}
     * @param resource the resource, such as {@code pods}
     * @param namespace the namespace
     * @return the error to signal
     */
    static RuntimeException map(Throwable e, String verb, String resource, String namespace) {
        if (e instanceof KubernetesClientException k) {
            int code = k.getCode();
            String detail = detail(k);
            if (code == 403 && detail.contains("exceeded quota")) {
                return new KubernetesQuotaExceededException(namespace, detail, e);
            }
            if (code == 403) {
                return new KubernetesForbiddenException(verb, resource, namespace, detail, e);
            }
            if (code == 422 || code == 400) {
                return new InvalidArgumentException(
                        "settings", "the Kubernetes API server refused the " + resource + " (" + verb + "): " + detail);
            }
            if (code == 401) {
                return new BackendException(
                        "the Kubernetes API server did not accept this provider's credentials (HTTP 401): " + detail,
                        e,
                        false);
            }
            boolean retryable = code == 0 || code == 409 || code == 429 || code >= 500 || transport(e);
            return new BackendException(
                    "Kubernetes '" + verb + "' on '" + resource + "' in namespace '" + namespace + "' failed"
                            + (code > 0 ? " with HTTP " + code : "") + ": " + detail,
                    e,
                    retryable);
        }
        if (e instanceof RuntimeException r && e instanceof dev.sandbox.SandboxException) {
            return r;
        }
        return new BackendException(
                "Kubernetes '" + verb + "' on '" + resource + "' in namespace '" + namespace + "' failed: " + e,
                e,
                transport(e));
    }

    private static String detail(KubernetesClientException k) {
        if (k.getStatus() != null && k.getStatus().getMessage() != null) {
            return k.getStatus().getMessage();
        }
        return String.valueOf(k.getMessage());
    }

    private static boolean transport(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ConnectException || t instanceof IOException) {
                return true;
            }
        }
        return false;
    }
}
