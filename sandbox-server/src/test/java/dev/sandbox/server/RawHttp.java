package dev.sandbox.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** One HTTP/1.1 connection over a plain socket, for tests that must see exactly what the server sends and when. */
final class RawHttp implements AutoCloseable {
    /** An answer: its status, its headers (names in lower case) and its body. */
    record Answer(int status, Map<String, String> headers, String body) {}

    private final Socket socket;
    private final InputStream in;

    RawHttp(int port) throws IOException {
        socket = new Socket(InetAddress.getLoopbackAddress(), port);
        in = socket.getInputStream();
    }

    /** Sends {@code GET path}, with the token when one is given. */
    RawHttp get(String path, char[] token) throws IOException {
        String head = "GET " + path + " HTTP/1.1\r\nHost: x\r\n"
                + (token == null ? "" : "Authorization: Bearer " + new String(token) + "\r\n") + "\r\n";
        socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        return this;
    }

    /** Reads one answer (its body by {@code Content-Length}), or fails after {@code wait}. */
    Answer read(Duration wait) throws IOException {
        socket.setSoTimeout((int) wait.toMillis());
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the server closed the connection without an answer");
            }
            head.write(b);
            matched = (b == '\r' && matched % 2 == 0) || (b == '\n' && matched % 2 == 1) ? matched + 1 : 0;
        }
        String[] lines = head.toString(StandardCharsets.US_ASCII).split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                headers.put(
                        lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        lines[i].substring(colon + 1).trim());
            }
        }
        int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
        byte[] body = in.readNBytes(length);
        return new Answer(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    /** Whether nothing arrives within {@code wait} (the connection stays open and silent). */
    boolean silentFor(Duration wait) throws IOException {
        socket.setSoTimeout((int) wait.toMillis());
        try {
            in.read(); // an answer, or the end
            return false;
        } catch (SocketTimeoutException e) {
            return true;
        }
    }

    /** Whether the server closed the connection (end of stream or reset) within {@code wait}, nothing else arriving. */
    boolean closedWithin(Duration wait) throws IOException {
        socket.setSoTimeout((int) wait.toMillis());
        try {
            return in.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
