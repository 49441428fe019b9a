package dev.sandbox.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy on loopback that forwards to a server and can drop every connection it carries at once, as a broken
 * network would. Plain threads and sockets: it is test scaffolding, never on an event loop.
 */
final class DroppingProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int targetPort;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger accepted = new AtomicInteger();
    private final Thread acceptor;
    private volatile boolean closed;

    DroppingProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.acceptor = Thread.ofPlatform().daemon().name("proxy-accept").start(this::acceptLoop);
    }

    int port() {
        return listener.getLocalPort();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port();
    }

    /** How many connections the proxy has accepted. */
    int accepted() {
        return accepted.get();
    }

    /** Closes every connection it carries now; new ones are accepted as before. Returns how many it closed. */
    int dropAll() {
        int n = 0;
        for (Socket s : Set.copyOf(open)) {
            try {
                s.close();
                n++;
            } catch (IOException ignored) {
                // closing anyway
            }
            open.remove(s);
        }
        return n;
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                accepted.incrementAndGet();
                Socket server = new Socket();
                server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 5000);
                open.add(client);
                open.add(server);
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                if (!closed) {
                    continue;
                }
                return;
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread.ofPlatform().daemon().name("proxy-pump").start(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    out.write(buf, 0, n);
                }
            } catch (IOException e) {
                // dropped or closed
            } finally {
                close(from);
                close(to);
            }
        });
    }

    private void close(Socket s) {
        open.remove(s);
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        dropAll();
        try {
            acceptor.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
