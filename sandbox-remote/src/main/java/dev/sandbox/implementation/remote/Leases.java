package dev.sandbox.implementation.remote;

import dev.sandbox.implementation.wire.ResourceBodies;
import io.netty.handler.codec.http.HttpMethod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * Renews the leases of the leased sessions a remote provider holds (open handles of sessions created through the
 * server without a lifetime): one {@code POST /v1/leases} for all of them every third of the shortest lease the server
 * announced, so a renewal may be lost twice before a session expires. When the provider is closed (or its JVM dies)
 * the renewals stop and the server destroys the sessions once their leases run out.
 */
public final class Leases {
    private static final Logger LOG = LoggerFactory.getLogger(Leases.class);
    /** The most ids in one renewal request, keeping its body small. */
    private static final int BATCH = 512;

    private final RemoteTransport transport;
    /** The leased sessions held, with how many open handles each has. */
    private final Map<String, Integer> held = new ConcurrentHashMap<>();

    private final AtomicLong shortestMs = new AtomicLong(Long.MAX_VALUE);
    private final AtomicBoolean running = new AtomicBoolean();
    private volatile boolean closed;
    private volatile Disposable next;

    /**
     * Creates the renewer.
     *
     * @param transport the transport renewals go through
     */
    public Leases(RemoteTransport transport) {
        this.transport = transport;
    }

    /**
     * Starts renewing a session's lease.
     *
     * @param id the session
     * @param leaseMs the lease the server announced
     */
    public void hold(String id, long leaseMs) {
        if (closed || leaseMs <= 0) {
            return;
        }
        held.merge(id, 1, Integer::sum);
        shortestMs.accumulateAndGet(leaseMs, Math::min);
        if (running.compareAndSet(false, true)) {
            schedule();
        }
    }

    /**
     * Notes that one handle of a session was closed; the lease is no longer renewed once none is open.
     *
     * @param id the session
     */
    public void release(String id) {
        held.computeIfPresent(id, (k, n) -> n > 1 ? n - 1 : null);
    }

    /**
     * Stops renewing a session's lease: it was destroyed.
     *
     * @param id the session
     */
    public void forget(String id) {
        held.remove(id);
    }

    /** Stops every renewal; used when the provider closes. */
    public void close() {
        closed = true;
        held.clear();
        Disposable d = next;
        if (d != null) {
            d.dispose();
        }
    }

    private Duration period() {
        long ms = shortestMs.get();
        return Duration.ofMillis(Math.max(50, ms / 3));
    }

    private void schedule() {
        if (closed) {
            return;
        }
        next = Schedulers.parallel()
                .schedule(this::renew, period().toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    private void renew() {
        List<String> ids = new ArrayList<>(held.keySet());
        if (ids.isEmpty() || closed) {
            schedule();
            return;
        }
        List<List<String>> batches = new ArrayList<>();
        for (int i = 0; i < ids.size(); i += BATCH) {
            batches.add(ids.subList(i, Math.min(ids.size(), i + BATCH)));
        }
        reactor.core.publisher.Flux.fromIterable(batches)
                .concatMap(batch -> transport
                        .call(HttpMethod.POST, "/v1/leases", new ResourceBodies.LeaseRenewal(batch))
                        .doOnNext(n -> {
                            ResourceBodies.LeaseAnswer a = ResourceBodies.read(n, ResourceBodies.LeaseAnswer.class);
                            if (a.leaseMs() != null && a.leaseMs() > 0) {
                                shortestMs.accumulateAndGet(a.leaseMs(), Math::min);
                            }
                            if (a.renewed() != null && a.renewed().size() < batch.size()) {
                                java.util.Set<String> renewed = new java.util.HashSet<>(a.renewed());
                                for (String id : batch) {
                                    if (!renewed.contains(id)) {
                                        held.remove(id); // gone, or not leased: nothing to renew
                                    }
                                }
                            }
                        })
                        .onErrorResume(e -> {
                            LOG.debug("renewing {} session leases failed: {}", batch.size(), e.toString());
                            return reactor.core.publisher.Mono.empty();
                        }))
                .doFinally(sig -> schedule())
                .subscribe();
    }
}
