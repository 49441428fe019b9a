package dev.sandbox.implementation.ports;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.PortForward;
import dev.sandbox.PortForwardOptions;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * One open forward: a listening socket on the host and the {@link TunnelRelay} of each connection it accepted. A
 * virtual thread accepts; a connection beyond the forward's bound, or one that comes after the session's end (the
 * guard fails), is closed at once, and the latter closes the forward too.
 */
final class ForwardListener implements PortForward, OpenForward {
    private static final Logger LOG = LoggerFactory.getLogger(ForwardListener.class);
    private static final int BACKLOG = 128;

    private final PortForwardOptions options;
    private final ServerSocket server;
    private final InetSocketAddress local;
    private final Dialer dialer;
    private final Runnable guard;
    private final String what;
    private final Consumer<OpenForward> onClosed;
    private final Set<TunnelRelay> relays = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean open = new AtomicBoolean(true);
    private final AtomicLong accepted = new AtomicLong();
    /** How long a close waits for the accepting thread to let go of the listening socket. */
    private static final long ACCEPT_END_MS = 2000;

    private volatile Thread acceptor;
    /** Counted down once the first close is done. */
    private final java.util.concurrent.CountDownLatch closedDone = new java.util.concurrent.CountDownLatch(1);

    private ForwardListener(
            PortForwardOptions options,
            ServerSocket server,
            Dialer dialer,
            Runnable guard,
            String what,
            Consumer<OpenForward> onClosed) {
        this.options = options;
        this.server = server;
        this.local = (InetSocketAddress) server.getLocalSocketAddress();
        this.dialer = dialer;
        this.guard = guard;
        this.what = what + " port " + options.sandboxPort() + " <- " + local;
        this.onClosed = onClosed;
    }

    /**
     * Binds the host socket and starts accepting; blocks briefly (the bind).
     *
     * @param options what to forward
     * @param dialer the provider's way into the sandbox
     * @param guard run before each connection: throws once the session or handle ended
     * @param what the session, for logs
     * @param onClosed told once when the forward closes
     * @return the open forward
     * @throws InvalidArgumentException when the host address and port cannot be bound, naming them
     */
    static ForwardListener open(
            PortForwardOptions options, Dialer dialer, Runnable guard, String what, Consumer<OpenForward> onClosed) {
        ServerSocket server;
        InetSocketAddress at = new InetSocketAddress(options.hostAddress(), options.hostPort());
        try {
            server = new ServerSocket();
        } catch (IOException e) {
            throw new IllegalStateException("cannot make a server socket: " + e.getMessage(), e);
        }
        try {
            server.bind(at, BACKLOG);
        } catch (IOException e) {
            try {
                server.close();
            } catch (IOException ignored) {
                // nothing was bound
            }
            InvalidArgumentException x = new InvalidArgumentException(
                    options.hostPort() == 0 ? "hostAddress" : "hostPort",
                    "cannot listen on " + options.hostAddress().getHostAddress() + " port " + options.hostPort()
                            + " (hostAddress, hostPort) for a forward to sandbox port " + options.sandboxPort()
                            + ": " + e.getMessage());
            x.initCause(e);
            throw x;
        }
        ForwardListener l = new ForwardListener(options, server, dialer, guard, what, onClosed);
        l.acceptor = Thread.ofVirtual().name("sandbox-forward-accept " + l.what).start(l::acceptLoop);
        return l;
    }

    private void acceptLoop() {
        long n = 0;
        while (open.get()) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                if (open.get()) {
                    LOG.warn("{}: accepting failed, the forward closes", what, e);
                    closeNow();
                }
                return;
            }
            accepted.incrementAndGet();
            n++;
            if (relays.size() >= options.maxConnections()) {
                LOG.debug("{}: {} connections open, the bound: one more is closed", what, relays.size());
                quietClose(s);
                continue;
            }
            try {
                guard.run();
            } catch (RuntimeException e) {
                LOG.debug("{}: the session or its handle ended, the forward closes", what, e);
                quietClose(s);
                closeNow();
                return;
            }
            try {
                s.setTcpNoDelay(true);
            } catch (IOException e) {
                quietClose(s);
                continue;
            }
            TunnelRelay r = TunnelRelay.tracked(s, what + " #" + n, relays);
            if (!open.get()) { // closed while accepting: closeNow may have missed it
                r.abort();
            }
            r.start(dialer, options.sandboxPort());
        }
    }

    private static void quietClose(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            LOG.trace("closing a refused connection", e);
        }
    }

    /**
     * Closes the listening socket and every connection; on the caller's thread (blocks briefly). A second caller
     * returns once the first one's close is done (at most {@value #ACCEPT_END_MS} ms more), so that whoever closes
     * sees the port refuse connections.
     */
    @Override
    public void closeNow() {
        if (!open.compareAndSet(true, false)) {
            try {
                if (!closedDone.await(ACCEPT_END_MS * 2, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                    LOG.warn("{}: another close did not finish within {} ms", what, ACCEPT_END_MS * 2);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        try {
            closing();
        } finally {
            closedDone.countDown();
        }
        onClosed.accept(this);
    }

    private void closing() {
        try {
            server.close();
        } catch (IOException e) {
            LOG.debug("{}: closing the listening socket", what, e);
        }
        // a socket closed while a thread accepts on it is released by that thread, as it leaves accept: once it left,
        // the port is free and refuses connections
        Thread a = acceptor;
        if (a != null && a != Thread.currentThread()) {
            try {
                if (!a.join(java.time.Duration.ofMillis(ACCEPT_END_MS))) {
                    LOG.warn("{}: the accepting thread did not end within {} ms", what, ACCEPT_END_MS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (TunnelRelay r : relays) {
            r.abort();
        }
    }

    @Override
    public int sandboxPort() {
        return options.sandboxPort();
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
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
        return "PortForward[" + what + (open.get() ? "" : ", closed") + "]";
    }
}
