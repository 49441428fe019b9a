package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * An incremental decoder: feed it buffers as they arrive, it emits each complete frame. It holds at most one
 * frame's bytes (a header and a payload up to the direction's limit) between calls; a whole frame inside one
 * buffer is decoded in place, without a copy.
 *
 * @param <T> the frame type
 */
final class FrameDecoder<T> {
    /** Turns one frame's header and payload into a decoded frame. */
    @FunctionalInterface
    interface PayloadDecoder<F> {
        F decode(int type, int stream, ByteBuffer payload);
    }

    private final int maxPayload;
    private final boolean fromAgent;
    private final PayloadDecoder<T> payloads;
    private final byte[] header = new byte[AgentFrames.HEADER];
    private int headerFill;
    private byte[] payload; // the partial payload, or null
    private int payloadFill;
    private int type;
    private int stream;
    private long frames;
    private int lastLength;

    private FrameDecoder(int maxPayload, boolean fromAgent, PayloadDecoder<T> payloads) {
        this.maxPayload = maxPayload;
        this.fromAgent = fromAgent;
        this.payloads = payloads;
    }

    /** A decoder of the agent's frames, for the client. */
    static FrameDecoder<AgentFrame> ofAgent() {
        return new FrameDecoder<>(AgentFrames.MAX_AGENT_PAYLOAD, true, PayloadDecoders::decodeAgent);
    }

    /** A decoder of the client's frames, for fake agents. */
    static FrameDecoder<ClientFrame> ofClient() {
        return new FrameDecoder<>(AgentFrames.MAX_CLIENT_PAYLOAD, false, PayloadDecoders::decodeClient);
    }

    /** Frames decoded so far. */
    long frames() {
        return frames;
    }

    /** The payload length of the frame being emitted (valid during the consumer's call). */
    int lastLength() {
        return lastLength;
    }

    /** Bytes held between calls (a partial frame). */
    int held() {
        return headerFill + (payload == null ? 0 : AgentFrames.HEADER + payloadFill);
    }

    /**
     * Consumes all of {@code in}, emitting every frame it completes.
     *
     * @param in bytes that arrived; read, not kept
     * @param out receives each frame, in order
     * @throws AgentProtocolException on a malformed frame; the decoder is then unusable
     */
    void feed(ByteBuffer in, Consumer<? super T> out) {
        while (in.hasRemaining()) {
            if (payload == null) {
                if (headerFill == 0 && in.remaining() >= AgentFrames.HEADER) {
                    int length = header(
                            in.getInt(in.position()), in.get(in.position() + 4) & 0xFF, in.getInt(in.position() + 5));
                    if (in.remaining() >= AgentFrames.HEADER + length) {
                        // the common case: a whole frame in the buffer, decoded in place
                        ByteBuffer slice = in.slice(in.position() + AgentFrames.HEADER, length);
                        in.position(in.position() + AgentFrames.HEADER + length);
                        emit(slice, out);
                        continue;
                    }
                    in.position(in.position() + AgentFrames.HEADER);
                    startPayload(length, out);
                    continue;
                }
                int n = Math.min(AgentFrames.HEADER - headerFill, in.remaining());
                in.get(header, headerFill, n);
                headerFill += n;
                if (headerFill < AgentFrames.HEADER) {
                    return;
                }
                headerFill = 0;
                ByteBuffer h = ByteBuffer.wrap(header);
                int length = header(h.getInt(0), h.get(4) & 0xFF, h.getInt(5));
                startPayload(length, out);
            } else {
                int n = Math.min(payload.length - payloadFill, in.remaining());
                in.get(payload, payloadFill, n);
                payloadFill += n;
                if (payloadFill == payload.length) {
                    ByteBuffer whole = ByteBuffer.wrap(payload);
                    payload = null;
                    payloadFill = 0;
                    emit(whole, out);
                }
            }
        }
    }

    /** Checks a header; returns the payload length. */
    private int header(int rawLength, int type, int stream) {
        long length = rawLength & 0xFFFF_FFFFL;
        String what = AgentFrames.typeName(type, fromAgent) + " on stream " + Integer.toUnsignedString(stream);
        if (!(fromAgent ? AgentFrames.knownAgentType(type) : AgentFrames.knownClientType(type))) {
            throw new AgentProtocolException("frame " + what + " is unknown (after " + frames + " frames)");
        }
        if (length > maxPayload) {
            throw new AgentProtocolException("frame " + what + " has length " + length + ", beyond " + maxPayload);
        }
        this.type = type;
        this.stream = stream;
        return (int) length;
    }

    private void startPayload(int length, Consumer<? super T> out) {
        if (length == 0) {
            emit(ByteBuffer.allocate(0), out);
        } else {
            payload = new byte[length];
            payloadFill = 0;
        }
    }

    private void emit(ByteBuffer p, Consumer<? super T> out) {
        int length = p.remaining();
        T frame = payloads.decode(type, stream, p);
        frames++;
        lastLength = length;
        out.accept(frame);
    }
}
