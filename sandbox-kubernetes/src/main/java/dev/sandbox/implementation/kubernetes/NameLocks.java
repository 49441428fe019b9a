package dev.sandbox.implementation.kubernetes;

import dev.sandbox.SessionNameInUseException;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The names of a namespace's sessions. A name is taken by creating a {@code coordination.k8s.io/v1} Lease called
 * {@code dev-sandbox-name-<name>} whose holder is the session's id: the API server creates an object of a given name
 * once, and answers any other create with 409 AlreadyExists, so two clients racing for a name (in one JVM or in
 * several) cannot both win, and nobody looks first and creates after. Session ids stay random: a name used again
 * after a destroy gets a new session with a new id, so a handle to the old one never reaches the new one.
 *
 * <p>Until the session's pod exists, the lock is owned by the creating client's own lease (a client that dies there
 * leaves nothing stuck: the sweep of its expired lease lets the garbage collector delete the lock); once it exists,
 * by the pod alone, so the name is free again when the pod is gone, however it went (a destroy, which also deletes
 * the lock at once, the pod's deadline, its leases' sweep). A pod still {@code Terminating} keeps no name after a
 * destroy here; after another ending the lock lasts until the collector sees the pod gone (seconds), and a create in
 * that time is refused with a retryable {@link SessionNameInUseException}.
 *
 * <p>Blocking calls: run on a thread that may block.
 */
final class NameLocks {
    /** The pod label holding a named session's name (a name is a valid label value). */
    static final String NAME_LABEL = "dev.sandbox/name";
    /** The label on every name lock. */
    static final String LOCK_LABEL = "dev.sandbox/name-lock";

    private final KubernetesClient client;
    private final String namespace;

    NameLocks(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
    }

    static String lockName(String name) {
        return "dev-sandbox-name-" + name;
    }

    /**
     * Takes a name for a session, in one create.
     *
     * @param name the session's name
     * @param id the session's id, the lock's holder
     * @param interim the owner of the lock until the pod exists: the creating client's lease
     * @param live whether a session id is a live session (then a taken name is not retryable)
     * @throws SessionNameInUseException when another session holds the name
     */
    void take(String name, String id, OwnerReference interim, Predicate<String> live) {
        Lease lock = new LeaseBuilder()
                .withNewMetadata()
                .withName(lockName(name))
                .withNamespace(namespace)
                .addToLabels(LOCK_LABEL, "true")
                .addToLabels("app.kubernetes.io/managed-by", "dev.sandbox")
                .addToOwnerReferences(interim)
                .endMetadata()
                .withNewSpec()
                .withHolderIdentity(id)
                .endSpec()
                .build();
        try {
            client.leases().inNamespace(namespace).resource(lock).create();
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409) {
                String holder = holder(name);
                throw new SessionNameInUseException(name, holder == null || !live.test(holder));
            }
            throw KubernetesErrors.map(e, "create", "leases", namespace);
        }
    }

    /**
     * Hands the lock to the session's pod: from now on it lives as long as the pod.
     *
     * @param name the session's name
     * @param pod the session's pod, as created
     */
    void bind(String name, Pod pod) {
        OwnerReference owner = new OwnerReferenceBuilder()
                .withApiVersion("v1")
                .withKind("Pod")
                .withName(pod.getMetadata().getName())
                .withUid(pod.getMetadata().getUid())
                .withController(false)
                .withBlockOwnerDeletion(false)
                .build();
        for (int attempt = 0; ; attempt++) {
            try {
                Lease lock = client.leases()
                        .inNamespace(namespace)
                        .withName(lockName(name))
                        .get();
                if (lock == null) {
                    throw new SessionNameInUseException(name, true); // swept with a dead client's lease
                }
                lock.getMetadata().setOwnerReferences(new ArrayList<>(List.of(owner)));
                client.leases().inNamespace(namespace).resource(lock).update();
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt == 2) {
                    throw KubernetesErrors.map(e, "update", "leases", namespace);
                }
            }
        }
    }

    /**
     * Frees a name the session holds; nothing when another session holds it.
     *
     * @param name the session's name
     * @param id the session's id
     */
    void release(String name, String id) {
        try {
            Lease lock = client.leases()
                    .inNamespace(namespace)
                    .withName(lockName(name))
                    .get();
            if (lock != null
                    && lock.getSpec() != null
                    && id.equals(lock.getSpec().getHolderIdentity())) {
                // only the version read: a lock another session took in the meantime is not this one's to delete
                client.leases()
                        .inNamespace(namespace)
                        .resource(lock)
                        .lockResourceVersion()
                        .delete();
            }
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404 && e.getCode() != 409) {
                throw KubernetesErrors.map(e, "delete", "leases", namespace);
            }
        }
    }

    /** The id of the session holding a name, or {@code null} when none does. */
    private String holder(String name) {
        try {
            Lease lock = client.leases()
                    .inNamespace(namespace)
                    .withName(lockName(name))
                    .get();
            return lock == null || lock.getSpec() == null
                    ? null
                    : lock.getSpec().getHolderIdentity();
        } catch (KubernetesClientException e) {
            throw KubernetesErrors.map(e, "get", "leases", namespace);
        }
    }
}
