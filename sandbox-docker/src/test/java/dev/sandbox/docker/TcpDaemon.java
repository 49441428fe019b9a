package dev.sandbox.docker;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * This host's daemon reached over TCP on loopback, as a daemon on another host would be: every connection to the
 * port is joined to the daemon's Unix socket, both directions, half-closes included (an exec's stdin ends with one).
 * A provider given {@code tcp://127.0.0.1:<port>} cannot know the daemon shares its files.
 */
final class TcpDaemon implements AutoCloseable {
    private final ServerSocketChannel server;
    private final Path socket;
    private final List<SocketChannel> open = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    TcpDaemon(Path socket) throws IOException {
        this.socket = socket;
        this.server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        acceptor = Thread.ofPlatform().daemon().name("tcp-daemon-accept").start(this::accept);
    }

    /** The daemon's address for a provider. */
    String dockerHost() throws IOException {
        return "tcp://127.0.0.1:" + ((InetSocketAddress) server.getLocalAddress()).getPort();
    }

    private void accept() {
        while (server.isOpen()) {
            try {
                SocketChannel client = server.accept();
                SocketChannel daemon = SocketChannel.open(StandardProtocolFamily.UNIX);
                daemon.connect(UnixDomainSocketAddress.of(socket));
                open.add(client);
                open.add(daemon);
                copy(client, daemon);
                copy(daemon, client);
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private static void copy(SocketChannel from, SocketChannel to) {
        Thread.ofPlatform().daemon().name("tcp-daemon-copy").start(() -> {
            ByteBuffer buf = ByteBuffer.allocate(256 * 1024);
            try {
                while (from.read(buf) >= 0) {
                    buf.flip();
                    while (buf.hasRemaining()) {
                        to.write(buf);
                    }
                    buf.clear();
                }
                to.shutdownOutput();
            } catch (IOException e) {
                try {
                    from.close();
                    to.close();
                } catch (IOException ignored) {
                    // closing both ends is all that is left to do
                }
            }
        });
    }

    @Override
    public void close() throws IOException {
        server.close();
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (SocketChannel c : open) {
            c.close();
        }
    }
}
