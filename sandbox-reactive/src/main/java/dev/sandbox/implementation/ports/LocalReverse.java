package dev.sandbox.implementation.ports;

import dev.sandbox.ReverseForward;
import java.net.InetSocketAddress;
import reactor.core.publisher.Mono;

/**
 * A reverse forward of the local provider, whose commands run on the host: a listener on the host's loopback at the
 * sandbox port, each connection dialled to the target ({@link ForwardListener} with a {@link LoopbackDialer} of the
 * target's address).
 */
final class LocalReverse implements ReverseForward, OpenForward {
    private final ForwardListener listener;
    private final int sandboxPort;
    private final InetSocketAddress target;

    LocalReverse(ForwardListener listener, int sandboxPort, InetSocketAddress target) {
        this.listener = listener;
        this.sandboxPort = sandboxPort;
        this.target = target;
    }

    @Override
    public void closeNow() {
        listener.closeNow();
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
        return listener.openConnections();
    }

    @Override
    public long acceptedConnections() {
        return listener.acceptedConnections();
    }

    @Override
    public boolean isOpen() {
        return listener.isOpen();
    }

    @Override
    public Mono<Void> close() {
        return listener.close();
    }

    @Override
    public String toString() {
        return "ReverseForward[local port " + sandboxPort + " -> " + target + (isOpen() ? "" : ", closed") + "]";
    }
}
