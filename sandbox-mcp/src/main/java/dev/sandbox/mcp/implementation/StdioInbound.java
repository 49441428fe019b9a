package dev.sandbox.mcp.implementation;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a stdio client's lines before the SDK's stdio transport does. The SDK's reader stops for good at the first line
 * it cannot read as a JSON-RPC message (it logs a trace, answers nothing and never reads on, so the end of the input
 * goes unseen). Here each line is checked first: one that is not JSON is answered with a JSON-RPC parse error
 * ({@code -32700}, id {@code null}); JSON that is not a JSON-RPC 2.0 message (an array, a number, an object with
 * neither method nor result nor error, another {@code jsonrpc} version) with an invalid request error ({@code -32600},
 * the message's id when it has a usable one); a line over the size bound with {@code -32600} too. Only good lines go
 * on, through a pipe, to the transport, which therefore always reads on to the end of the input. Blank lines are
 * skipped.
 */
public final class StdioInbound {
    /** The longest line taken, in bytes: the SDK's own bound (16 MiB). */
    public static final int MAX_LINE_BYTES = 16 * 1024 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(StdioInbound.class);
    private static final int PIPE_BYTES = 64 * 1024;

    private final InputStream in;
    private final OutputStream out;
    private final McpJsonMapper json;
    private final PipedInputStream forwarded;
    private final PipedOutputStream toTransport;
    private final Runnable onEnd;
    private final int maxLineBytes;

    /**
     * Prepares the filter; nothing is read until {@link #start()}.
     *
     * @param in the client's input
     * @param out the client's output, shared with the SDK's transport (both write whole lines under its lock)
     * @param json the mapper the transport reads with
     * @param maxLineBytes the longest line taken
     * @param onEnd run once the input has ended (or failed) and the transport has been handed its end
     * @throws IOException when the pipe cannot be made
     */
    public StdioInbound(InputStream in, OutputStream out, McpJsonMapper json, int maxLineBytes, Runnable onEnd)
            throws IOException {
        this.in = in;
        this.out = out;
        this.json = json;
        this.maxLineBytes = maxLineBytes;
        this.onEnd = onEnd;
        this.forwarded = new PipedInputStream(PIPE_BYTES);
        this.toTransport = new PipedOutputStream(forwarded);
    }

    /**
     * The good lines, for the SDK's stdio transport to read.
     *
     * @return the input the transport reads
     */
    public InputStream forwarded() {
        return forwarded;
    }

    /** Starts reading the client's input on a daemon thread of its own (its reads block). */
    public void start() {
        Thread reader = new Thread(this::run, "sandbox-mcp-stdin");
        reader.setDaemon(true);
        reader.start();
    }

    /** Stops handing lines on: the transport has stopped reading, so a write to the pipe would wait for nothing. */
    public void stop() {
        try {
            forwarded.close();
        } catch (IOException e) {
            LOG.debug("closing the stdio pipe failed: {}", e.toString());
        }
    }

    private void run() {
        boolean forwarding = true;
        try {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            boolean tooLong = false;
            byte[] buffer = new byte[8192];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                int start = 0;
                for (int i = 0; i < n; i++) {
                    if (buffer[i] != '\n') {
                        continue;
                    }
                    if (!tooLong && line.size() + (i - start) > maxLineBytes) {
                        tooLong = true;
                    } else if (!tooLong) {
                        line.write(buffer, start, i - start);
                    }
                    forwarding = handle(line, tooLong, forwarding);
                    line.reset();
                    tooLong = false;
                    start = i + 1;
                }
                if (!tooLong) {
                    if (line.size() + (n - start) > maxLineBytes) {
                        tooLong = true;
                        line.reset();
                    } else {
                        line.write(buffer, start, n - start);
                    }
                }
            }
            if (tooLong || line.size() > 0) {
                handle(line, tooLong, forwarding); // the last line, without its newline
            }
        } catch (IOException e) {
            LOG.debug("reading the MCP client's input failed: {}", e.toString());
        } finally {
            try {
                toTransport.close(); // the transport reads the end of its input, and ends
            } catch (IOException e) {
                LOG.debug("closing the stdio pipe failed: {}", e.toString());
            }
            onEnd.run();
        }
    }

    /** Answers a bad line or hands a good one on; whether lines are still handed on. */
    private boolean handle(ByteArrayOutputStream bytes, boolean tooLong, boolean forwarding) throws IOException {
        if (tooLong) {
            answer(null, -32600, "Invalid Request: a message over " + maxLineBytes + " bytes");
            return forwarding;
        }
        String line = bytes.toString(StandardCharsets.UTF_8);
        if (line.isBlank()) {
            return forwarding;
        }
        String refusal = refusal(line);
        if (refusal == null) {
            if (!forwarding) {
                return false;
            }
            try {
                toTransport.write(line.getBytes(StandardCharsets.UTF_8));
                toTransport.write('\n');
                toTransport.flush();
                return true;
            } catch (IOException e) {
                LOG.debug("the stdio transport stopped reading: {}", e.toString());
                return false; // the server is closing: read on only to see the input's end
            }
        }
        return forwarding;
    }

    /** {@code null} when the SDK reads the line as a JSON-RPC message; else the refusal, already answered. */
    private String refusal(String line) throws IOException {
        Object value;
        try {
            value = json.readValue(line, Object.class);
        } catch (IOException | RuntimeException e) {
            String reason = firstLine(e.getMessage());
            answer(null, -32700, "Parse error: not JSON" + (reason.isEmpty() ? "" : " (" + reason + ")"));
            return "parse error";
        }
        Object id = value instanceof Map<?, ?> map ? usableId(map.get("id")) : null;
        String invalid = invalidReason(value);
        if (invalid == null) {
            try {
                McpSchema.deserializeJsonRpcMessage(json, line);
                return null;
            } catch (IOException | RuntimeException e) {
                invalid = "not a JSON-RPC message (" + firstLine(e.getMessage()) + ")";
            }
        }
        answer(id, -32600, "Invalid Request: " + invalid);
        return invalid;
    }

    private static String invalidReason(Object value) {
        if (value instanceof java.util.List<?>) {
            return "batches (JSON arrays) are not supported; send one message per line";
        }
        if (!(value instanceof Map<?, ?> map)) {
            return "a JSON-RPC message is a JSON object";
        }
        if (!"2.0".equals(map.get("jsonrpc"))) {
            return "\"jsonrpc\" must be \"2.0\"";
        }
        if (map.containsKey("method")) {
            return map.get("method") instanceof String ? null : "\"method\" must be a string";
        }
        if (map.containsKey("result") || map.containsKey("error")) {
            return null;
        }
        return "an object with neither \"method\" nor \"result\" nor \"error\"";
    }

    /** The id to answer with: a string or a number, as JSON-RPC allows; else none. */
    private static Object usableId(Object id) {
        return id instanceof String || id instanceof Number ? id : null;
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "";
        }
        int end = message.indexOf('\n');
        String first = end < 0 ? message : message.substring(0, end);
        return Escape.line(first.strip());
    }

    /** Writes one JSON-RPC error answer as a line, under the lock the SDK's transport writes under. */
    private void answer(Object id, int code, String message) throws IOException {
        String idJson = id == null ? "null" : json.writeValueAsString(id);
        String line = "{\"jsonrpc\":\"2.0\",\"id\":" + idJson + ",\"error\":{\"code\":" + code + ",\"message\":"
                + json.writeValueAsString(message) + "}}\n";
        LOG.debug("answered a bad MCP message: {} {}", code, message);
        synchronized (out) {
            out.write(line.getBytes(StandardCharsets.UTF_8));
            out.flush();
        }
    }
}
