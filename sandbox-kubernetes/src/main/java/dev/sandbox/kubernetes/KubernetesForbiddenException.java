package dev.sandbox.kubernetes;

import dev.sandbox.BackendException;

/**
 * The Kubernetes API server refused a call the provider made because the account it runs as may not make it (RBAC):
 * names the verb, the resource and the namespace, so that the missing rule can be added to the provider's Role (the
 * README's "Kubernetes" section lists the rules it needs). Not retryable: the same call fails the same way until the
 * Role changes.
 *
 * <pre>{@code
 * provider.create(SessionOptions.defaults())
 *         .onErrorResume(KubernetesForbiddenException.class, e -> {
 *             log.error("grant {} on {} in {}", e.verb(), e.resource(), e.namespace());
 *             return Mono.empty();
 *         });
 * }</pre>
 */
public final class KubernetesForbiddenException extends BackendException {
    private static final long serialVersionUID = 1L;

    private final String verb;
    private final String resource;
    private final String namespace;

    /**
     * Makes the error.
     *
     * @param verb the verb refused, such as {@code create}
     * @param resource the resource, such as {@code pods} or {@code pods/exec}
     * @param namespace the namespace of the call
     * @param detail what the API server said
     * @param cause the client's error
     */
    public KubernetesForbiddenException(
            String verb, String resource, String namespace, String detail, Throwable cause) {
        super(
                "the Kubernetes API server forbids '" + verb + "' on '" + resource + "' in namespace '" + namespace
                        + "' to this provider's account: " + detail,
                cause,
                false);
        this.verb = verb;
        this.resource = resource;
        this.namespace = namespace;
    }

    /**
     * The verb refused.
     *
     * @return such as {@code create}, {@code delete}, {@code watch}
     */
    public String verb() {
        return verb;
    }

    /**
     * The resource the call was on.
     *
     * @return such as {@code pods}, {@code pods/exec}, {@code leases}
     */
    public String resource() {
        return resource;
    }

    /**
     * The namespace of the call.
     *
     * @return the namespace
     */
    public String namespace() {
        return namespace;
    }
}
