package dev.sandbox.implementation.wire;

import java.nio.charset.StandardCharsets;

/**
 * The frames of the command channel: one WebSocket ({@code GET /v1/channel}) per client carrying many commands at
 * once, each on a stream the client numbers. Every frame is a 9-byte header and a payload:
 *
 * <pre>
 *   type    u8    what the frame is (below)
 *   stream  u32   the stream, chosen by the client: 1 to 2^31-1 (0 and larger values are refused)
 *   length  u32   the payload's length, at most the reader's limit; the payload follows
 * </pre>
 *
 * Integers are big-endian. A WebSocket message carries one frame or more, back to back, and nothing else.
 *
 * <p>From the client:
 *
 * <ul>
 *   <li>{@link #OPEN_EXEC} and {@link #OPEN_RUN}: a command on a new stream. Payload: the session id's length (u16,
 *       1 to {@value #MAX_SESSION_ID} bytes), the session id in UTF-8, then the exec body exactly as {@code POST
 *       /v1/sessions/{id}/exec} takes it (JSON, with the exec id the client chose for a REST resume).
 *   <li>{@link #RESUME_EXEC}: an exec opened earlier (on a connection that broke, or over REST) continued on a new
 *       stream, from the offsets (i64 each, -1 for none) of the last stdout and stderr line the client delivered.
 *       Payload: the session id as in an open, the two offsets, then the exec's id in UTF-8 (1 to {@value
 *       #MAX_EXEC_ID} bytes).
 *   <li>{@link #ACK}: what the client delivered of an exec: the offsets (i64 each, -1 for none) of the last stdout
 *       and stderr line. The server keeps at most its window of unacknowledged output per exec, so a stream whose
 *       reader stops stops its command only.
 *   <li>{@link #CANCEL}: ends the stream: kills the command if it runs and forgets the exec. Empty payload.
 * </ul>
 *
 * <p>From the server:
 *
 * <ul>
 *   <li>{@link #OPENED}: the exec started; payload: the window (u32 bytes) the client acknowledges against.
 *   <li>{@link #EVENT}: one item of an exec's stream, the JSON of one line of its NDJSON stream (a {@code lines} batch,
 *       a line, a chunk, the exit or an in-band error).
 *   <li>{@link #RESULT}: a run's result, the JSON {@code POST .../run} answers.
 *   <li>{@link #ERROR}: the command could not start (or a run failed): the HTTP status (u16) the REST route would
 *       answer, then its JSON error body. It ends the stream.
 * </ul>
 *
 * A frame that breaks these rules is malformed ({@link MalformedFrameException}); the reader closes the connection it
 * came on.
 */
public final class ChannelFrames {
    /** The length of a frame's header. */
    public static final int HEADER = 9;
    /** The longest session id an open frame may name, in UTF-8 bytes. */
    public static final int MAX_SESSION_ID = 256;
    /** The longest exec id a resume frame may name, in UTF-8 bytes. */
    public static final int MAX_EXEC_ID = 128;

    /** Client: start a streaming exec. */
    public static final byte OPEN_EXEC = 1;
    /** Client: start a run (one result). */
    public static final byte OPEN_RUN = 2;
    /** Client: continue an exec from offsets on a new stream. */
    public static final byte RESUME_EXEC = 5;
    /** Client: acknowledge what was delivered of an exec. */
    public static final byte ACK = 3;
    /** Client: end a stream, killing its command. */
    public static final byte CANCEL = 4;
    /** Server: an exec started. */
    public static final byte OPENED = 65;
    /** Server: one item of an exec's stream. */
    public static final byte EVENT = 66;
    /** Server: a run's result. */
    public static final byte RESULT = 67;
    /** Server: a command could not start, or a run failed. */
    public static final byte ERROR = 68;

    private ChannelFrames() {}

    /** A frame that breaks the format: the connection it came on ends. */
    public static final class MalformedFrameException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        /**
         * Creates the error.
         *
         * @param message what was wrong
         */
        public MalformedFrameException(String message) {
            super(message);
        }
    }

    /**
     * One decoded frame; its payload is a slice of the message it came in, which must not change afterwards.
     *
     * @param type the type
     * @param stream the stream id
     * @param bytes the message
     * @param offset where the payload starts
     * @param length the payload's length
     */
    public record Frame(byte type, int stream, byte[] bytes, int offset, int length) {
        /**
         * Where the next frame of the message starts.
         *
         * @return the offset after this frame
         */
        public int end() {
            return offset + length;
        }
    }

    /**
     * Decodes the frame at an offset of a message, checking its header and, for the types the reader accepts, its
     * payload's shape.
     *
     * @param message the message
     * @param offset where the frame starts
     * @param maxPayload the longest payload accepted
     * @param fromClient whether the reader is the server (accepting the client's types) or the client
     * @return the frame
     * @throws MalformedFrameException when the frame is truncated, too long, of an unknown type or on a bad stream
     */
    public static Frame decode(byte[] message, int offset, int maxPayload, boolean fromClient) {
        int left = message.length - offset;
        if (left < HEADER) {
            throw new MalformedFrameException(
                    "a channel frame needs a " + HEADER + "-byte header, got " + left + " bytes");
        }
        byte type = message[offset];
        long stream = u32(message, offset + 1);
        long length = u32(message, offset + 5);
        if (stream < 1 || stream > Integer.MAX_VALUE) {
            throw new MalformedFrameException(
                    "a channel frame's stream must be 1 to " + Integer.MAX_VALUE + ", got " + stream);
        }
        if (length > maxPayload) {
            throw new MalformedFrameException(
                    "a channel frame's payload may be at most " + maxPayload + " bytes, got " + length);
        }
        if (length > left - HEADER) {
            throw new MalformedFrameException(
                    "a channel frame says " + length + " payload bytes but " + (left - HEADER) + " follow");
        }
        Frame f = new Frame(type, (int) stream, message, offset + HEADER, (int) length);
        check(f, fromClient);
        return f;
    }

    private static void check(Frame f, boolean fromClient) {
        int len = f.length();
        switch (f.type()) {
            case OPEN_EXEC, OPEN_RUN, RESUME_EXEC -> {
                client(f, fromClient);
                if (len < 2) {
                    throw new MalformedFrameException("an open frame needs a session id");
                }
                int idLen = u16(f.bytes(), f.offset());
                if (idLen < 1 || idLen > MAX_SESSION_ID || idLen > len - 2) {
                    throw new MalformedFrameException("an open frame's session id must be 1 to " + MAX_SESSION_ID
                            + " bytes within the payload, got " + idLen);
                }
                if (f.type() == RESUME_EXEC) {
                    int rest = len - 2 - idLen;
                    if (rest < 17 || rest > 16 + MAX_EXEC_ID) {
                        throw new MalformedFrameException("a resume frame needs two offsets and an exec id of 1 to "
                                + MAX_EXEC_ID + " bytes, got " + rest + " bytes");
                    }
                    if (resumeStdout(f) < -1 || resumeStderr(f) < -1) {
                        throw new MalformedFrameException("a resume offset must be -1 or more");
                    }
                }
            }
            case ACK -> {
                client(f, fromClient);
                exactly(f, 16);
                if (ackStdout(f) < -1 || ackStderr(f) < -1) {
                    throw new MalformedFrameException("an acknowledged offset must be -1 or more");
                }
            }
            case CANCEL -> {
                client(f, fromClient);
                exactly(f, 0);
            }
            case OPENED -> {
                server(f, fromClient);
                exactly(f, 4);
            }
            case EVENT, RESULT -> server(f, fromClient);
            case ERROR -> {
                server(f, fromClient);
                if (len < 2) {
                    throw new MalformedFrameException("an error frame needs a status");
                }
            }
            default -> throw new MalformedFrameException("unknown channel frame type " + (f.type() & 0xff));
        }
    }

    private static void client(Frame f, boolean fromClient) {
        if (!fromClient) {
            throw new MalformedFrameException("frame type " + f.type() + " goes from the client to the server");
        }
    }

    private static void server(Frame f, boolean fromClient) {
        if (fromClient) {
            throw new MalformedFrameException("frame type " + f.type() + " goes from the server to the client");
        }
    }

    private static void exactly(Frame f, int n) {
        if (f.length() != n) {
            throw new MalformedFrameException(
                    "a frame of type " + f.type() + " has a " + n + "-byte payload, got " + f.length());
        }
    }

    // ------------------------------------------------------------------ encoding

    /**
     * A frame's header alone, for a payload sent from its own buffer.
     *
     * @param type the type
     * @param stream the stream
     * @param length the payload's length
     * @return the 9 bytes
     */
    public static byte[] header(byte type, int stream, int length) {
        byte[] h = new byte[HEADER];
        writeHeader(h, type, stream, length);
        return h;
    }

    private static void writeHeader(byte[] b, byte type, int stream, int length) {
        if (stream < 1) {
            throw new IllegalArgumentException("a stream id must be positive, got " + stream);
        }
        b[0] = type;
        putInt(b, 1, stream);
        putInt(b, 5, length);
    }

    /**
     * A whole frame.
     *
     * @param type the type
     * @param stream the stream
     * @param payload the payload
     * @return the frame's bytes
     */
    public static byte[] frame(byte type, int stream, byte[] payload) {
        byte[] b = new byte[HEADER + payload.length];
        writeHeader(b, type, stream, payload.length);
        System.arraycopy(payload, 0, b, HEADER, payload.length);
        return b;
    }

    /**
     * An open frame.
     *
     * @param type {@link #OPEN_EXEC}, {@link #OPEN_RUN} or {@link #RESUME_EXEC}
     * @param stream the stream
     * @param sessionId the session
     * @param body the exec body's JSON
     * @return the frame's bytes
     */
    public static byte[] open(byte type, int stream, String sessionId, byte[] body) {
        byte[] id = sessionId.getBytes(StandardCharsets.UTF_8);
        if (id.length < 1 || id.length > MAX_SESSION_ID) {
            throw new IllegalArgumentException("a session id must be 1 to " + MAX_SESSION_ID + " bytes");
        }
        byte[] b = new byte[HEADER + 2 + id.length + body.length];
        writeHeader(b, type, stream, 2 + id.length + body.length);
        b[HEADER] = (byte) (id.length >>> 8);
        b[HEADER + 1] = (byte) id.length;
        System.arraycopy(id, 0, b, HEADER + 2, id.length);
        System.arraycopy(body, 0, b, HEADER + 2 + id.length, body.length);
        return b;
    }

    /**
     * A resume frame.
     *
     * @param stream the new stream
     * @param sessionId the session
     * @param execId the exec's id
     * @param afterStdout the offset of the last stdout line delivered, or -1
     * @param afterStderr the offset of the last stderr line delivered, or -1
     * @return the frame's bytes
     */
    public static byte[] resume(int stream, String sessionId, String execId, long afterStdout, long afterStderr) {
        byte[] id = execId.getBytes(StandardCharsets.UTF_8);
        if (id.length < 1 || id.length > MAX_EXEC_ID) {
            throw new IllegalArgumentException("an exec id must be 1 to " + MAX_EXEC_ID + " bytes");
        }
        byte[] body = new byte[16 + id.length];
        putLong(body, 0, afterStdout);
        putLong(body, 8, afterStderr);
        System.arraycopy(id, 0, body, 16, id.length);
        return open(RESUME_EXEC, stream, sessionId, body);
    }

    /**
     * The stdout offset of a resume.
     *
     * @param f the frame
     * @return the offset
     */
    public static long resumeStdout(Frame f) {
        return getLong(f.bytes(), openBodyOffset(f));
    }

    /**
     * The stderr offset of a resume.
     *
     * @param f the frame
     * @return the offset
     */
    public static long resumeStderr(Frame f) {
        return getLong(f.bytes(), openBodyOffset(f) + 8);
    }

    /**
     * The exec id of a resume.
     *
     * @param f the frame
     * @return the id
     */
    public static String resumeExecId(Frame f) {
        int from = openBodyOffset(f) + 16;
        return new String(f.bytes(), from, f.end() - from, StandardCharsets.UTF_8);
    }

    /**
     * An acknowledgement frame.
     *
     * @param stream the stream
     * @param stdout the offset of the last stdout line delivered, or -1
     * @param stderr the offset of the last stderr line delivered, or -1
     * @return the frame's bytes
     */
    public static byte[] ack(int stream, long stdout, long stderr) {
        byte[] b = new byte[HEADER + 16];
        writeHeader(b, ACK, stream, 16);
        putLong(b, HEADER, stdout);
        putLong(b, HEADER + 8, stderr);
        return b;
    }

    /**
     * A cancel frame.
     *
     * @param stream the stream
     * @return the frame's bytes
     */
    public static byte[] cancel(int stream) {
        return header(CANCEL, stream, 0);
    }

    /**
     * An opened frame.
     *
     * @param stream the stream
     * @param window the exec's window in bytes
     * @return the frame's bytes
     */
    public static byte[] opened(int stream, int window) {
        byte[] b = new byte[HEADER + 4];
        writeHeader(b, OPENED, stream, 4);
        putInt(b, HEADER, window);
        return b;
    }

    /**
     * An error frame.
     *
     * @param stream the stream
     * @param status the HTTP status the REST route would answer
     * @param body the JSON error body
     * @return the frame's bytes
     */
    public static byte[] error(int stream, int status, byte[] body) {
        byte[] b = new byte[HEADER + 2 + body.length];
        writeHeader(b, ERROR, stream, 2 + body.length);
        b[HEADER] = (byte) (status >>> 8);
        b[HEADER + 1] = (byte) status;
        System.arraycopy(body, 0, b, HEADER + 2, body.length);
        return b;
    }

    // ------------------------------------------------------------------ payloads

    /**
     * The session id of an open frame.
     *
     * @param f the frame
     * @return the id
     */
    public static String openSession(Frame f) {
        int idLen = u16(f.bytes(), f.offset());
        return new String(f.bytes(), f.offset() + 2, idLen, StandardCharsets.UTF_8);
    }

    /**
     * Where an open frame's body starts.
     *
     * @param f the frame
     * @return the body's offset in the message
     */
    public static int openBodyOffset(Frame f) {
        return f.offset() + 2 + u16(f.bytes(), f.offset());
    }

    /**
     * The stdout offset of an acknowledgement.
     *
     * @param f the frame
     * @return the offset
     */
    public static long ackStdout(Frame f) {
        return getLong(f.bytes(), f.offset());
    }

    /**
     * The stderr offset of an acknowledgement.
     *
     * @param f the frame
     * @return the offset
     */
    public static long ackStderr(Frame f) {
        return getLong(f.bytes(), f.offset() + 8);
    }

    /**
     * The window of an opened frame.
     *
     * @param f the frame
     * @return the window, at least 1
     */
    public static long openedWindow(Frame f) {
        return Math.max(1, u32(f.bytes(), f.offset()));
    }

    /**
     * The status of an error frame.
     *
     * @param f the frame
     * @return the status
     */
    public static int errorStatus(Frame f) {
        return u16(f.bytes(), f.offset());
    }

    /**
     * The JSON body of an error frame.
     *
     * @param f the frame
     * @return a copy of the body
     */
    public static byte[] errorBody(Frame f) {
        byte[] out = new byte[f.length() - 2];
        System.arraycopy(f.bytes(), f.offset() + 2, out, 0, out.length);
        return out;
    }

    // ------------------------------------------------------------------ integers

    private static int u16(byte[] b, int at) {
        return ((b[at] & 0xff) << 8) | (b[at + 1] & 0xff);
    }

    private static long u32(byte[] b, int at) {
        return ((long) (b[at] & 0xff) << 24)
                | ((b[at + 1] & 0xff) << 16)
                | ((b[at + 2] & 0xff) << 8)
                | (b[at + 3] & 0xff);
    }

    private static long getLong(byte[] b, int at) {
        return (u32(b, at) << 32) | u32(b, at + 4);
    }

    private static void putInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }

    private static void putLong(byte[] b, int at, long v) {
        putInt(b, at, (int) (v >>> 32));
        putInt(b, at + 4, (int) v);
    }
}
