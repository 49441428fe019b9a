package dev.sandbox.implementation.docker;

import dev.sandbox.implementation.process.RawEvent;
import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Decodes the daemon's answer to an exec start on a raw connection: the HTTP/1.1 response head ({@code 101
 * UPGRADED} or {@code 200 OK} for a stream, anything else an error with a JSON body), then {@code
 * application/vnd.docker.raw-stream} frames: an 8-byte header (stream type, three zero bytes, big-endian 32-bit
 * payload size) and the payload. Payload bytes are handed on as they arrive, so a frame never has to be held whole.
 *
 * <p>When an exec cannot start (program not found, missing working directory), the daemon writes its error as the
 * first stdout frame and sets exit code 126. A first stdout frame that starts with {@code OCI runtime} is therefore
 * held back: it is released as output if anything else follows, and otherwise reported through {@link
 * #heldLaunchError()} for the caller to decide with the exit code.
 *
 * <p>Not thread-safe: one instance per connection, fed by its event loop.
 */
public final class ExecStreamDecoder {
    /** Builds the error for a response that is not a stream. */
    @FunctionalInterface
    public interface ErrorMapper {
        /**
         * Makes the error.
         *
         * @param status the HTTP status; 0 when the connection ended before an answer, -1 for an answer that is
         *     not HTTP
         * @param message the daemon's message
         * @return the error to signal
         */
        RuntimeException map(int status, String message);
    }

    private static final int MAX_HEAD = 16 * 1024;
    private static final int MAX_ERROR_BODY = 64 * 1024;
    private static final int MAX_HELD_FRAME = 4096;
    private static final byte[] LAUNCH_ERROR_PREFIX = "OCI runtime".getBytes(StandardCharsets.US_ASCII);

    private enum State {
        HEAD,
        FRAME_HEADER,
        PAYLOAD,
        RAW,
        ERROR_BODY
    }

    private final ErrorMapper errors;
    private final Runnable onStream;
    private final boolean tty;
    private State state = State.HEAD;
    private final ByteArrayOutputStream head = new ByteArrayOutputStream();
    private int lastFour;
    private int status;
    private long errorBodyLength = -1;
    private final ByteArrayOutputStream errorBody = new ByteArrayOutputStream();
    private final byte[] frameHeader = new byte[8];
    private int frameHeaderLength;
    private int frameStream;
    private long payloadRemaining;
    private boolean firstFrame = true;
    private ByteArrayOutputStream firstFrameBytes;
    private byte[] heldLaunchError;
    private ByteArrayOutputStream systemError;

    /**
     * Creates a decoder.
     *
     * @param errors makes the error for a non-stream response
     * @param onStream called once when the head says a stream follows (the moment stdin may be written)
     */
    public ExecStreamDecoder(ErrorMapper errors, Runnable onStream) {
        this(errors, onStream, false);
    }

    /**
     * Creates a decoder for an exec with or without a terminal. A terminal's output is one raw stream, not frames.
     *
     * @param errors makes the error for a non-stream response
     * @param onStream called once when the head says a stream follows (the moment stdin may be written)
     * @param tty whether the exec was created with a terminal
     */
    public ExecStreamDecoder(ErrorMapper errors, Runnable onStream, boolean tty) {
        this.errors = errors;
        this.onStream = onStream;
        this.tty = tty;
    }

    /**
     * Decodes the bytes of one read. Copies what it keeps, so the buffer may be released afterwards.
     *
     * @param buf the bytes read
     * @return the output chunks they complete, possibly none
     * @throws RuntimeException the mapped error once an error response is complete
     */
    public List<RawEvent> decode(ByteBuf buf) {
        List<RawEvent> out = new ArrayList<>(2);
        while (buf.isReadable()) {
            switch (state) {
                case HEAD -> readHead(buf);
                case FRAME_HEADER -> {
                    int n = Math.min(8 - frameHeaderLength, buf.readableBytes());
                    buf.readBytes(frameHeader, frameHeaderLength, n);
                    frameHeaderLength += n;
                    if (frameHeaderLength == 8) {
                        frameHeaderLength = 0;
                        frameStream = frameHeader[0];
                        payloadRemaining = ((frameHeader[4] & 0xFFL) << 24)
                                | ((frameHeader[5] & 0xFFL) << 16)
                                | ((frameHeader[6] & 0xFFL) << 8)
                                | (frameHeader[7] & 0xFFL);
                        startFrame(out);
                        state = payloadRemaining == 0 ? State.FRAME_HEADER : State.PAYLOAD;
                    }
                }
                case PAYLOAD -> {
                    int n = (int) Math.min(payloadRemaining, buf.readableBytes());
                    byte[] bytes = new byte[n];
                    buf.readBytes(bytes);
                    payloadRemaining -= n;
                    payload(bytes, out);
                    if (payloadRemaining == 0) {
                        endFrame(out);
                        state = State.FRAME_HEADER;
                    }
                }
                case RAW -> {
                    byte[] bytes = new byte[buf.readableBytes()];
                    buf.readBytes(bytes);
                    out.add(new RawEvent.Chunk(RawEvent.STDOUT, bytes));
                }
                case ERROR_BODY -> {
                    int n = buf.readableBytes();
                    if (errorBodyLength >= 0) {
                        n = (int) Math.min(n, errorBodyLength - errorBody.size());
                    }
                    n = Math.min(n, MAX_ERROR_BODY - errorBody.size());
                    if (n <= 0) {
                        buf.skipBytes(buf.readableBytes());
                    } else {
                        byte[] bytes = new byte[n];
                        buf.readBytes(bytes);
                        errorBody.writeBytes(bytes);
                    }
                    if (errorBodyLength >= 0 && errorBody.size() >= errorBodyLength) {
                        throw errorResponse();
                    }
                }
            }
        }
        return out;
    }

    /**
     * The connection ended: checks that a stream was under way.
     *
     * @return output still held (the start of a first frame the stream ended inside), possibly none
     * @throws RuntimeException the mapped error when the response was an error or never came
     */
    public List<RawEvent> finish() {
        return switch (state) {
            case HEAD -> throw errors.map(0, "the daemon closed the connection before answering");
            case ERROR_BODY -> throw errorResponse();
            default -> {
                if (firstFrameBytes != null && firstFrameBytes.size() > 0) {
                    byte[] partial = firstFrameBytes.toByteArray();
                    firstFrameBytes = null;
                    yield List.of(new RawEvent.Chunk(RawEvent.STDOUT, partial));
                }
                yield List.of();
            }
        };
    }

    /**
     * The daemon's launch error, when the whole output was one held-back {@code OCI runtime ...} frame.
     *
     * @return the message bytes, or {@code null}
     */
    public byte[] heldLaunchError() {
        return heldLaunchError;
    }

    private void readHead(ByteBuf buf) {
        while (buf.isReadable()) {
            byte b = buf.readByte();
            head.write(b);
            lastFour = (lastFour << 8) | (b & 0xFF);
            if (lastFour == 0x0D0A0D0A) {
                parseHead(head.toString(StandardCharsets.ISO_8859_1));
                return;
            }
            if (head.size() > MAX_HEAD) {
                throw errors.map(-1, "the daemon's response head is longer than " + MAX_HEAD + " bytes");
            }
        }
    }

    private void parseHead(String text) {
        String[] lines = text.split("\r\n");
        String[] statusLine = lines[0].split(" ", 3);
        if (statusLine.length < 2 || !statusLine[0].startsWith("HTTP/")) {
            throw errors.map(-1, "the daemon answered with '" + lines[0] + "'");
        }
        try {
            status = Integer.parseInt(statusLine[1]);
        } catch (NumberFormatException e) {
            throw errors.map(-1, "the daemon answered with '" + lines[0] + "'");
        }
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0
                    && lines[i].substring(0, colon)
                            .trim()
                            .toLowerCase(Locale.ROOT)
                            .equals("content-length")) {
                try {
                    errorBodyLength =
                            Long.parseLong(lines[i].substring(colon + 1).trim());
                } catch (NumberFormatException ignored) {
                    // read to the end of the connection instead
                }
            }
        }
        if (status == 101 || status == 200) {
            state = tty ? State.RAW : State.FRAME_HEADER;
            onStream.run();
        } else {
            state = State.ERROR_BODY;
            if (errorBodyLength == 0) {
                throw errorResponse();
            }
        }
    }

    private RuntimeException errorResponse() {
        String body = errorBody.toString(StandardCharsets.UTF_8).strip();
        int i = body.indexOf("\"message\":\"");
        if (i >= 0) {
            int start = i + 11;
            int end = body.indexOf('"', start);
            body = end > start ? body.substring(start, end) : body.substring(start);
        }
        return errors.map(status, body.isEmpty() ? "HTTP " + status : body);
    }

    private void startFrame(List<RawEvent> out) {
        if (firstFrame) {
            firstFrame = false;
            if (frameStream == 1 && payloadRemaining > 0 && payloadRemaining <= MAX_HELD_FRAME) {
                firstFrameBytes = new ByteArrayOutputStream((int) payloadRemaining);
                return;
            }
        }
        releaseHeld(out);
        if (frameStream == 3) {
            systemError = new ByteArrayOutputStream();
        }
    }

    private void payload(byte[] bytes, List<RawEvent> out) {
        if (firstFrameBytes != null) {
            firstFrameBytes.writeBytes(bytes);
        } else if (systemError != null) {
            if (systemError.size() < MAX_ERROR_BODY) {
                systemError.writeBytes(bytes);
            }
        } else if (bytes.length > 0) {
            out.add(new RawEvent.Chunk(frameStream == 2 ? RawEvent.STDERR : RawEvent.STDOUT, bytes));
        }
    }

    private void endFrame(List<RawEvent> out) {
        if (firstFrameBytes != null) {
            byte[] whole = firstFrameBytes.toByteArray();
            firstFrameBytes = null;
            if (startsWith(whole, LAUNCH_ERROR_PREFIX)) {
                heldLaunchError = whole;
            } else {
                out.add(new RawEvent.Chunk(RawEvent.STDOUT, whole));
            }
        } else if (systemError != null) {
            String message = systemError.toString(StandardCharsets.UTF_8).strip();
            systemError = null;
            throw errors.map(500, message);
        }
    }

    private void releaseHeld(List<RawEvent> out) {
        if (heldLaunchError != null) {
            out.add(new RawEvent.Chunk(RawEvent.STDOUT, heldLaunchError));
            heldLaunchError = null;
        }
    }

    private static boolean startsWith(byte[] bytes, byte[] prefix) {
        if (bytes.length < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (bytes[i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }
}
