package dev.sandbox.implementation.ports;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.PortConnectionException;
import dev.sandbox.PortForward;
import dev.sandbox.PortForwardOptions;
import dev.sandbox.ReverseForward;
import dev.sandbox.SandboxPorts;
import dev.sandbox.SessionClosedException;
import dev.sandbox.UnsupportedFeatureException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
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
    private final Map<OpenForward, Object> owners = Collections.synchronizedMap(new LinkedHashMap<>());
    /** How the provider listens in the sandbox, or null: none (or the host itself, see {@link #onHost}). */
    private final @Nullable Listener listener;
    /** Whether the sandbox's loopback is the host's (the local provider). */
    private final boolean hostLoopback;

    private final java.util.concurrent.atomic.AtomicInteger open = new java.util.concurrent.atomic.AtomicInteger();

    private volatile boolean ended;

    /**
     * The forwards of a session.
     *
     * @param what the session, for logs and thread names
     * @param dialer how the provider reaches a port inside the session's sandbox
     */
    public PortForwards(String what, Dialer dialer) {
        this(what, dialer, null, false);
    }

    /**
     * The forwards of a session whose provider can also listen in the sandbox (reverse forwards).
     *
     * @param what the session, for logs and thread names
     * @param dialer how the provider reaches a port inside the session's sandbox
     * @param listener how it listens on one
     */
    public PortForwards(String what, Dialer dialer, Listener listener) {
        this(what, dialer, Objects.requireNonNull(listener, "listener"), false);
    }

    private PortForwards(String what, Dialer dialer, @Nullable Listener listener, boolean hostLoopback) {
        this.what = what;
        this.listener = listener;
        this.hostLoopback = hostLoopback;
        this.dialer = (port, toServer) -> counted(dialer.dial(port, toServer));
    }

    /**
     * The forwards of a session whose commands run on the host (the local provider): its loopback is the host's.
     *
     * @param what the session, for logs and thread names
     * @return the forwards
     */
    public static PortForwards onHost(String what) {
        return new PortForwards(what, new LoopbackDialer(), null, true);
    }

    /** A connection's bytes, counted as open from subscription to end. */
    private Flux<ByteBuffer> counted(Flux<ByteBuffer> bytes) {
        return Flux.defer(() -> {
            open.incrementAndGet();
            return bytes.doFinally(s -> open.decrementAndGet());
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
            public Mono<ReverseForward> reverse(int sandboxPort, InetSocketAddress target) {
                Objects.requireNonNull(target, "target");
                return Mono.defer(() -> {
                    if (sandboxPort < 1 || sandboxPort > 65535) {
                        throw new InvalidArgumentException(
                                "sandboxPort", "sandboxPort must be within 1..65535, got " + sandboxPort);
                    }
                    if (target.isUnresolved()) {
                        throw new InvalidArgumentException(
                                "target", "target must be a resolved address, got " + target);
                    }
                    guard.run();
                    int max = PortForwardOptions.DEFAULT_MAX_CONNECTIONS;
                    Mono<OpenForward> opened;
                    if (hostLoopback) {
                        opened = Mono.<OpenForward>fromCallable(() -> {
                                    PortForwardOptions o = new PortForwardOptions(
                                            target.getPort(), InetAddress.getLoopbackAddress(), sandboxPort, max);
                                    LocalReverse[] self = new LocalReverse[1];
                                    ForwardListener l;
                                    try {
                                        l = ForwardListener.open(
                                                o,
                                                (p, up) -> counted(new LoopbackDialer(target.getAddress()).dial(p, up)),
                                                guard,
                                                what,
                                                x -> owners.remove(self[0]));
                                    } catch (InvalidArgumentException e) {
                                        // the sandbox's loopback is the host's: its port is the sandbox port
                                        InvalidArgumentException x = new InvalidArgumentException(
                                                "sandboxPort",
                                                "cannot listen on sandboxPort " + sandboxPort + ": "
                                                        + e.getCause().getMessage());
                                        x.initCause(e);
                                        throw x;
                                    }
                                    self[0] = new LocalReverse(l, sandboxPort, target);
                                    return self[0];
                                })
                                .subscribeOn(Schedulers.boundedElastic());
                    } else if (listener != null) {
                        opened = ReverseListener.open(
                                        sandboxPort, target, max, listener, guard, what, owners::remove, open)
                                .cast(OpenForward.class);
                    } else {
                        return Mono.error(new UnsupportedFeatureException("session's", "reverse port forwards"));
                    }
                    return opened.map(f -> {
                        owners.put(f, owner);
                        if (ended) { // the session ended while it opened
                            f.closeNow();
                            guard.run();
                        }
                        return (ReverseForward) f;
                    });
                });
            }

            @Override
            public List<PortForward> forwards() {
                List<PortForward> mine = new ArrayList<>();
                for (OpenForward l : ownedBy(owner)) {
                    if (l.isOpen() && l instanceof PortForward f) {
                        mine.add(f);
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

    private List<OpenForward> ownedBy(Object owner) {
        List<OpenForward> mine = new ArrayList<>();
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

    private static Mono<Void> closing(java.util.function.Supplier<List<OpenForward>> which) {
        // closing sockets may block briefly, and the caller may be on an event loop
        return Mono.<Void>fromRunnable(() -> which.get().forEach(OpenForward::closeNow))
                .subscribeOn(Schedulers.boundedElastic());
    }
}
