package dev.sandbox.implementation.kubernetes;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.SessionNotFoundException;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * What a session pod records about its session beside the spec, written after create and read back by every client:
 * the owners holding it (client leases), the user's labels (a JSON annotation, and pod labels where the syntax allows)
 * and the timers (deadline and idle timeout annotations). Edits are blocking calls to the API server; the readers take
 * what the watch saw. Internal: not part of the public API.
 */
final class PodRecords {
    private final KubernetesClient client;
    private final String namespace;

    PodRecords(KubernetesClient client, String namespace) {
        this.client = client;
        this.namespace = namespace;
    }

    /**
     * Adds a client's lease to a session pod's owners (whoever attaches to a leased session holds it too); blocking.
     *
     * @param id the session (its pod)
     * @param mine the client's lease as an owner
     * @return the id
     * @throws SessionNotFoundException when the pod is gone
     */
    String addOwner(String id, OwnerReference mine) {
        return edit(id, p -> {
            List<OwnerReference> owners = p.getMetadata().getOwnerReferences();
            if (owners.stream().noneMatch(o -> mine.getUid().equals(o.getUid()))) {
                owners.add(mine);
            }
            return p;
        });
    }

    /**
     * One edit of a session pod (fabric8 reads it, applies the change, and patches what changed); blocking.
     *
     * @throws SessionNotFoundException when the pod is gone (deleted after the watch last saw it, by a destroy of this
     *     or another client)
     */
    private String edit(String id, UnaryOperator<Pod> change) {
        try {
            client.pods().inNamespace(namespace).withName(id).edit(change);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                throw new SessionNotFoundException(id);
            }
            throw KubernetesErrors.map(e, "patch", "pods", namespace);
        }
        return id;
    }

    /**
     * The labels annotation's JSON for a session's labels.
     *
     * @param labels every label the session will have
     * @return the JSON
     * @throws InvalidArgumentException when it is longer than the annotation read back allows
     */
    static String labelsJson(Map<String, String> labels) {
        String json = Serialization.asJson(new LinkedHashMap<>(labels));
        if (json.length() > KubernetesSessions.MAX_LABELS_JSON) {
            throw new InvalidArgumentException(
                    "labels",
                    "a Kubernetes session's labels must fit in " + KubernetesSessions.MAX_LABELS_JSON
                            + " bytes of JSON, got " + json.length());
        }
        return json;
    }

    /**
     * Records a session's labels after an addition: the JSON annotation every client reads them from, and a pod label
     * for each that Kubernetes's label syntax allows (as at create); blocking.
     *
     * @param id the session
     * @param labels every label the session will have
     * @param json their {@link #labelsJson}
     * @return the id
     * @throws SessionNotFoundException when the pod is gone
     */
    String patchLabels(String id, Map<String, String> labels, String json) {
        return edit(id, p -> {
            labels.forEach((k, v) -> {
                String key = KubernetesSessions.LABEL_PREFIX + k;
                if (LabelSyntax.valid(key, v)) {
                    p.getMetadata().getLabels().put(key, v);
                } else {
                    p.getMetadata().getLabels().remove(key);
                }
            });
            p.getMetadata().getAnnotations().put(KubernetesSessions.LABELS_ANNOTATION, json);
            return p;
        });
    }

    /**
     * Records a session's timers on its pod, so that another client attaching knows them; blocking.
     *
     * @param id the session
     * @param deadline the deadline in epoch seconds, 0 for none
     * @param idle the idle timeout, or {@code null} for none
     * @return the id
     * @throws SessionNotFoundException when the pod is gone
     */
    String patchTimers(String id, long deadline, Duration idle) {
        return edit(id, p -> {
            Map<String, String> annotations = p.getMetadata().getAnnotations();
            annotations.put(KubernetesSessions.EXPIRES_ANNOTATION, deadline > 0 ? Long.toString(deadline) : "never");
            annotations.put(
                    KubernetesSessions.IDLE_ANNOTATION,
                    idle != null ? Long.toString(KubernetesSessions.seconds(idle)) : "none");
            return p;
        });
    }

    /**
     * Whether a client's lease holds the pod (its session was created without a chosen lifetime).
     *
     * @param pod the pod
     * @return whether a Lease is among its owners
     */
    static boolean holdsLease(Pod pod) {
        return pod.getMetadata().getOwnerReferences() != null
                && pod.getMetadata().getOwnerReferences().stream().anyMatch(o -> "Lease".equals(o.getKind()));
    }

    /**
     * The labels a user gave, read back from the pod (written by clients, bounded; what does not parse is none).
     *
     * @param pod the pod
     * @return the labels
     */
    static Map<String, String> labelsOf(Pod pod) {
        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        String json = annotations == null ? null : annotations.get(KubernetesSessions.LABELS_ANNOTATION);
        if (json == null || json.length() > KubernetesSessions.MAX_LABELS_JSON) {
            return Map.of();
        }
        try {
            Map<?, ?> raw = Serialization.unmarshal(json, Map.class);
            Map<String, String> out = new LinkedHashMap<>();
            if (raw != null) {
                raw.forEach((k, v) -> {
                    if (k instanceof String ks && v instanceof String vs) {
                        out.put(ks, vs);
                    }
                });
            }
            return out;
        } catch (RuntimeException e) {
            return Map.of();
        }
    }

    /**
     * When the pod was created.
     *
     * @param pod the pod
     * @return the instant, or the epoch when the pod does not say
     */
    static Instant createdAt(Pod pod) {
        try {
            return Instant.parse(pod.getMetadata().getCreationTimestamp());
        } catch (RuntimeException e) {
            return Instant.EPOCH;
        }
    }

    /**
     * A number from an annotation.
     *
     * @param s the annotation's value, or {@code null}
     * @return the number, 0 when absent or not a number
     */
    static long parseLong(String s) {
        try {
            return s == null ? 0 : Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
