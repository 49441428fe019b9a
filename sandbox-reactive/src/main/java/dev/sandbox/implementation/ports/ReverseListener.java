package dev.sandbox.implementation.ports;

import dev.sandbox.ReverseForward;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * One open reverse forward over a provider's {@link Listener}: each connection accepted in the sandbox is carried to
 * the target by a {@link TunnelRelay} on a host socket dialled on a virtual thread; a target that refuses closes that
 * connection only.
 */
final class ReverseListener implements ReverseForward, OpenForward {
    private static final Logger LOG = LoggerFactory.getLogger(ReverseListener.class);
    /** How long a connect to the target may take. */
    private static final int CONNECT_TIMEOUT_MS = 5000;

    private final int sandboxPort;
    private final InetSocketAddress target;
    private final Runnable guard;
    private final String what;
    private final Consumer<OpenForward> onClosed;
    private final Set<TunnelRelay> relays = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean open = new AtomicBoolean(true);
    private final AtomicLong accepted = new AtomicLong();
    private volatile Disposable listening;

    private final java.util.concurrent.atomic.AtomicInteger openConnections;

    private ReverseListener(
            int sandboxPort,
            InetSocketAddress target,
            Runnable guard,
            String what,
            Consumer<OpenForward> onClosed,
            java.util.concurrent.atomic.AtomicInteger openConnections) {
        this.openConnections = openConnections;
        this.sandboxPort = sandboxPort;
        this.target = target;
        this.guard = guard;
        this.what = what + " port " + sandboxPort + " -> " + target;
        this.onClosed = onClosed;
    }

    /**
     * Listens in the sandbox; completes once it listens.
     *
     * @param sandboxPort the port in the sandbox
     * @param target where each connection goes
     * @param maxConnections connections at once
     * @param listener the provider's listener
     * @param guard run for each connection: throws once the session or handle ended
     * @param what the session, for logs
     * @param onClosed told once when it closes
     * @param openConnections the session's count of open connections, kept
     * @return the open reverse forward
     */
    static Mono<ReverseListener> open(
            int sandboxPort,
            InetSocketAddress target,
            int maxConnections,
            Listener listener,
            Runnable guard,
            String what,
            Consumer<OpenForward> onClosed,
            java.util.concurrent.atomic.AtomicInteger openConnections) {
        return Mono.create(sink -> {
            ReverseListener r = new ReverseListener(sandboxPort, target, guard, what, onClosed, openConnections);
            AtomicBoolean up = new AtomicBoolean();
            r.listening = listener.listen(sandboxPort, maxConnections, () -> {
                        up.set(true);
                        sink.success(r);
                    })
                    .subscribe(r::incoming, e -> {
                        if (!up.get()) {
                            r.open.set(false);
                            sink.error(e);
                        } else {
                            LOG.warn("{}: the listener in the sandbox failed, the reverse forward closes", r.what, e);
                            r.closeNow();
                        }
                    });
            sink.onCancel(() -> {
                if (!up.get()) {
                    r.closeNow();
                }
            });
        });
    }

    private void incoming(Listener.Incoming in) {
        long n = accepted.incrementAndGet();
        try {
            guard.run();
        } catch (RuntimeException e) {
            in.close();
            closeNow();
            return;
        }
        if (!open.get()) {
            in.close();
            return;
        }
        Thread.ofVirtual().name("sandbox-reverse-dial " + what).start(() -> dial(in, n));
    }

    private void dial(Listener.Incoming in, long n) {
        Socket s = new Socket();
        try {
            s.connect(target, CONNECT_TIMEOUT_MS);
            s.setTcpNoDelay(true);
        } catch (IOException e) {
            LOG.debug("{}: the target refused connection #{}", what, n, e);
            in.close();
            try {
                s.close();
            } catch (IOException ignored) {
                // never connected
            }
            return;
        }
        TunnelRelay r = TunnelRelay.tracked(s, what + " #" + n, relays);
        if (!open.get()) {
            r.abort();
        }
        r.start(
                (port, toSandbox) -> {
                    in.send(toSandbox);
                    return in.received()
                            .doOnSubscribe(x -> openConnections.incrementAndGet())
                            .doFinally(x -> openConnections.decrementAndGet());
                },
                sandboxPort);
    }

    @Override
    public void closeNow() {
        if (!open.compareAndSet(true, false)) {
            return;
        }
        Disposable d = listening;
        if (d != null) {
            d.dispose();
        }
        for (TunnelRelay r : relays) {
            r.abort();
        }
        onClosed.accept(this);
    }

    @Override
    public int sandboxPort() {
        return sandboxPort;
    }

    @Override
    public InetSocketAddress target() {
        return target;
    }

    @Override
    public int openConnections() {
        return relays.size();
    }

    @Override
    public long acceptedConnections() {
        return accepted.get();
    }

    @Override
    public boolean isOpen() {
        return open.get();
    }

    @Override
    public Mono<Void> close() {
        return Mono.<Void>fromRunnable(this::closeNow).subscribeOn(Schedulers.boundedElastic());
    }

    @Override
    public String toString() {
        return "ReverseForward[" + what + (open.get() ? "" : ", closed") + "]";
    }
}
