package dev.sandbox.implementation.kubernetes;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease of one provider instance: a {@code coordination.k8s.io/v1} Lease in the session namespace, renewed every
 * third of its duration while the provider is open. Pods of sessions without a chosen lifetime name it as an owner
 * (as every lease holding them: a second provider that attaches adds its own), so when the last of their leases is
 * deleted, Kubernetes' garbage collector deletes them. Expired leases are deleted by every provider instance of the
 * namespace ({@link #sweep}), at start and on each renewal: a client that dies leaves a lease nobody renews, and the
 * next sweep by any live client removes it and, through the collector, its sessions.
 *
 * <p>What protects what: the lease and the pods' owner references live in the API server, where code in a sandbox
 * has no credentials (no service-account token is mounted); the collector and the sweeping clients act from outside.
 * With no client left in the namespace, a leased session ends at its own lifetime (its agent, the session's process
 * 1, ends the pod) and at the latest at the pod's {@code activeDeadlineSeconds}, enforced by the kubelet.
 *
 * <p>Blocking calls: run on a thread that may block.
 */
final class ClientLease {
    private static final Logger LOG = LoggerFactory.getLogger(ClientLease.class);

    /** The label every provider's lease carries, so that sweeps find them. */
    static final String LEASE_LABEL = "dev.sandbox/client-lease";

    /** Beyond its duration, how long an unrenewed lease is left before a sweep deletes it (clock skew). */
    static final Duration SKEW = Duration.ofSeconds(2);

    private final KubernetesClient client;
    private final String namespace;
    private final String name;
    private final Duration duration;
    private volatile Lease lease; // once made

    ClientLease(KubernetesClient client, String namespace, String name, Duration duration) {
        this.client = client;
        this.namespace = namespace;
        this.name = name;
        this.duration = duration;
    }

    String name() {
        return name;
    }

    /** Makes the lease if not made yet; returns the owner reference pods name it by. */
    synchronized OwnerReference owner() {
        if (lease == null) {
            ZonedDateTime now = ZonedDateTime.now();
            Lease l = new LeaseBuilder()
                    .withNewMetadata()
                    .withName(name)
                    .withNamespace(namespace)
                    .addToLabels(LEASE_LABEL, "true")
                    .addToLabels("app.kubernetes.io/managed-by", "dev.sandbox")
                    .endMetadata()
                    .withNewSpec()
                    .withHolderIdentity(holder())
                    .withLeaseDurationSeconds((int) duration.toSeconds())
                    .withAcquireTime(now)
                    .withRenewTime(now)
                    .endSpec()
                    .build();
            try {
                lease = client.leases().inNamespace(namespace).resource(l).create();
            } catch (KubernetesClientException e) {
                throw KubernetesErrors.map(e, "create", "leases", namespace);
            }
        }
        return reference(lease);
    }

    static OwnerReference reference(Lease l) {
        return new OwnerReferenceBuilder()
                .withApiVersion("coordination.k8s.io/v1")
                .withKind("Lease")
                .withName(l.getMetadata().getName())
                .withUid(l.getMetadata().getUid())
                .withController(false)
                .withBlockOwnerDeletion(false)
                .build();
    }

    /** Renews the lease, if made. */
    void renew() {
        Lease current = lease;
        if (current == null) {
            return;
        }
        for (int attempt = 0; attempt < 2; attempt++) {
            try {
                Lease fresh =
                        client.leases().inNamespace(namespace).withName(name).get();
                if (fresh == null) {
                    // swept (this client stalled past its lease): its sessions are gone or going
                    LOG.warn("the lease {} of this provider was deleted; its leased sessions end", name);
                    synchronized (this) {
                        lease = null;
                    }
                    return;
                }
                fresh.getSpec().setRenewTime(ZonedDateTime.now());
                lease = client.leases().inNamespace(namespace).resource(fresh).update();
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || attempt == 1) {
                    throw KubernetesErrors.map(e, "update", "leases", namespace);
                }
            }
        }
    }

    /**
     * Deletes the expired leases of the namespace (any provider's); the garbage collector then deletes the sessions
     * they alone held.
     *
     * @return the names deleted
     */
    List<String> sweep() {
        List<String> deleted = new ArrayList<>();
        List<Lease> all;
        try {
            all = client.leases()
                    .inNamespace(namespace)
                    .withLabel(LEASE_LABEL)
                    .list()
                    .getItems();
        } catch (KubernetesClientException e) {
            throw KubernetesErrors.map(e, "list", "leases", namespace);
        }
        ZonedDateTime now = ZonedDateTime.now();
        for (Lease l : all) {
            if (l.getSpec() == null
                    || l.getSpec().getRenewTime() == null
                    || l.getSpec().getLeaseDurationSeconds() == null) {
                continue;
            }
            ZonedDateTime expires = l.getSpec()
                    .getRenewTime()
                    .plusSeconds(l.getSpec().getLeaseDurationSeconds())
                    .plus(SKEW);
            if (expires.isBefore(now) && !name.equals(l.getMetadata().getName())) {
                try {
                    client.leases().inNamespace(namespace).resource(l).delete();
                    deleted.add(l.getMetadata().getName());
                } catch (KubernetesClientException e) {
                    if (e.getCode() != 404) {
                        throw KubernetesErrors.map(e, "delete", "leases", namespace);
                    }
                }
            }
        }
        return deleted;
    }

    private static String holder() {
        String host = System.getenv().getOrDefault("HOSTNAME", "unknown-host");
        return host + "/" + ManagementFactory.getRuntimeMXBean().getPid();
    }
}
