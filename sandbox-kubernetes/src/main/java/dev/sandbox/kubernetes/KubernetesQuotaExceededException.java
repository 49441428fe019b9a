package dev.sandbox.kubernetes;

import dev.sandbox.BackendException;

/**
 * A session's pod was refused because it would exceed a {@code ResourceQuota} of its namespace (pods, CPU or
 * memory). Retryable: the call may succeed once other sessions have ended. Nothing was created.
 *
 * <pre>{@code
 * provider.create(options)
 *         .retryWhen(Retry.backoff(5, Duration.ofSeconds(1))
 *                 .filter(KubernetesQuotaExceededException.class::isInstance));
 * }</pre>
 */
public final class KubernetesQuotaExceededException extends BackendException {
    private static final long serialVersionUID = 1L;

    private final String namespace;

    /**
     * Makes the error.
     *
     * @param namespace the namespace whose quota was exceeded
     * @param detail what the API server said (the quota, what was requested, used and allowed)
     * @param cause the client's error
     */
    public KubernetesQuotaExceededException(String namespace, String detail, Throwable cause) {
        super("a session pod would exceed a resource quota of namespace '" + namespace + "': " + detail, cause, true);
        this.namespace = namespace;
    }

    /**
     * The namespace whose quota was exceeded.
     *
     * @return the namespace
     */
    public String namespace() {
        return namespace;
    }
}
