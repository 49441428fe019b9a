package dev.sandbox.implementation.ports;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.PortConnectionException;
import dev.sandbox.PortForward;
import dev.sandbox.PortForwardOptions;
import dev.sandbox.SandboxPorts;
import dev.sandbox.SessionClosedException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The forwards of one session, shared by its handles: each handle sees and closes its own ({@link #view}), the
 * session's end closes them all ({@link #closeAll()}).
 *
 * <pre>{@code
 * PortForwards forwards = new PortForwards("session s-1", dialer);
 * SandboxPorts ports = forwards.view(handle, handle::check);
 * }</pre>
 */
public final class PortForwards {
    private final String what;
    private final Dialer dialer;
    /** Open forwards by the handle that opened them, in the order opened. */
    private final Map<ForwardListener, Object> owners = Collections.synchronizedMap(new LinkedHashMap<>());

    private final java.util.concurrent.atomic.AtomicInteger open = new java.util.concurrent.atomic.AtomicInteger();

    private volatile boolean ended;

    /**
     * The forwards of a session.
     *
     * @param what the session, for logs and thread names
     * @param dialer how the provider reaches a port inside the session's sandbox
     */
    public PortForwards(String what, Dialer dialer) {
        this.what = what;
        this.dialer = (port, toServer) -> Flux.defer(() -> {
            open.incrementAndGet();
            return dialer.dial(port, toServer).doFinally(s -> open.decrementAndGet());
        });
    }

    /**
     * The connections open now, through forwards and {@code connect}: like running commands, they keep the session's
     * idle timeout from ending it.
     *
     * @return the count
     */
    public int openConnections() {
        return open.get();
    }

    /**
     * The ports API of one handle.
     *
     * @param owner the handle: its forwards are closed by {@link #closeOwnedBy(Object)}
     * @param guard throws once the handle or session ended (checked on open and on every connection)
     * @return the handle's ports
     */
    public SandboxPorts view(Object owner, Runnable guard) {
        Objects.requireNonNull(owner, "owner");
        return new SandboxPorts() {
            @Override
            public Mono<PortForward> forward(PortForwardOptions options) {
                Objects.requireNonNull(options, "options");
                return Mono.<PortForward>fromCallable(() -> {
                            guard.run();
                            ForwardListener l = ForwardListener.open(options, dialer, guard, what, owners::remove);
                            owners.put(l, owner);
                            if (ended) { // the session ended while this one opened
                                l.closeNow();
                                guard.run();
                            }
                            return l;
                        })
                        .subscribeOn(Schedulers.boundedElastic());
            }

            @Override
            public Flux<ByteBuffer> connect(int sandboxPort, Publisher<ByteBuffer> toServer) {
                Objects.requireNonNull(toServer, "toServer");
                return Flux.defer(() -> {
                    PortForwardOptions.to(sandboxPort); // the port's check, with its message
                    guard.run();
                    return connection(sandboxPort, toServer);
                });
            }

            @Override
            public List<PortForward> forwards() {
                List<PortForward> mine = new ArrayList<>();
                for (ForwardListener l : ownedBy(owner)) {
                    if (l.isOpen()) {
                        mine.add(l);
                    }
                }
                return List.copyOf(mine);
            }
        };
    }

    /**
     * One connection through the dialer, its failures as the API's: the session's end and bad arguments as they are,
     * anything else (a refusal, a reset, the way in failing) as a {@link PortConnectionException} naming the port.
     */
    private Flux<ByteBuffer> connection(int port, Publisher<ByteBuffer> toServer) {
        return dialer.dial(port, toServer)
                .onErrorMap(
                        e -> !(e instanceof PortConnectionException
                                || e instanceof SessionClosedException
                                || e instanceof InvalidArgumentException),
                        e -> new PortConnectionException(
                                port, "connection to port " + port + " in " + what + ": " + e.getMessage(), e));
    }

    private List<ForwardListener> ownedBy(Object owner) {
        List<ForwardListener> mine = new ArrayList<>();
        synchronized (owners) {
            owners.forEach((l, o) -> {
                if (o == owner) {
                    mine.add(l);
                }
            });
        }
        return mine;
    }

    /**
     * Closes the forwards a handle opened (the handle closes).
     *
     * @param owner the handle
     * @return completes once they stopped listening
     */
    public Mono<Void> closeOwnedBy(Object owner) {
        return closing(() -> ownedBy(owner));
    }

    /**
     * Closes every forward of the session (its end) and refuses new ones.
     *
     * @return completes once they stopped listening
     */
    public Mono<Void> closeAll() {
        return closing(() -> {
            ended = true;
            synchronized (owners) {
                return new ArrayList<>(owners.keySet());
            }
        });
    }

    /**
     * How many forwards are open, every handle's.
     *
     * @return the count
     */
    public int openCount() {
        return owners.size();
    }

    private static Mono<Void> closing(java.util.function.Supplier<List<ForwardListener>> which) {
        // closing sockets may block briefly, and the caller may be on an event loop
        return Mono.<Void>fromRunnable(() -> which.get().forEach(ForwardListener::closeNow))
                .subscribeOn(Schedulers.boundedElastic());
    }
}
