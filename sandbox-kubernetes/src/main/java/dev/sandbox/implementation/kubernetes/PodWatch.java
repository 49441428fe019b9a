package dev.sandbox.implementation.kubernetes;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The provider's one watch on its session pods (an informer: a list, then a watch that is resumed or re-listed when
 * it breaks, 410 Gone included). Every change of a session pod reaches {@code onChange} with the pod as it is now,
 * and {@code true} once it is deleted. Handlers run on the informer's own thread, one event at a time, and must not
 * block.
 */
final class PodWatch implements AutoCloseable {
    private final SharedIndexInformer<Pod> informer;

    PodWatch(KubernetesClient client, String namespace, String selectorLabel, BiConsumer<Pod, Boolean> onChange) {
        this.informer =
                client.pods().inNamespace(namespace).withLabel(selectorLabel).runnableInformer(0);
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                onChange.accept(pod, false);
            }

            @Override
            public void onUpdate(Pod oldPod, Pod pod) {
                onChange.accept(pod, false);
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                onChange.accept(pod, true);
            }
        });
    }

    /**
     * Starts the watch and waits for its first list.
     *
     * @param timeout how long the first list may take
     */
    void start(Duration timeout) throws Exception {
        CompletableFuture<Void> synced = informer.start().toCompletableFuture();
        synced.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * The pod as last seen.
     *
     * @param namespace its namespace
     * @param name its name
     * @return the pod, or {@code null} when not known (deleted, or not a session pod)
     */
    Pod get(String namespace, String name) {
        return informer.getIndexer().getByKey(namespace + "/" + name);
    }

    /**
     * Every session pod as last seen.
     *
     * @return the pods
     */
    java.util.List<Pod> all() {
        return informer.getIndexer().list();
    }

    @Override
    public void close() {
        informer.stop();
    }
}
