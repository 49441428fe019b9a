package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Builds one frame: the header, then the payload's fields, each checked against the direction's limit; {@link
 * #finish()} patches the length in.
 */
final class PayloadWriter {
    private ByteBuffer buf;
    private final int limit;
    private final String what;

    PayloadWriter(int type, int stream, int sizeHint, int limit) {
        this.buf = ByteBuffer.allocate(AgentFrames.HEADER + Math.min(Math.max(sizeHint, 16), limit));
        this.limit = limit;
        this.what = AgentFrames.typeName(type, limit == AgentFrames.MAX_AGENT_PAYLOAD) + " on stream "
                + Integer.toUnsignedString(stream);
        buf.putInt(0).put((byte) type).putInt(stream);
    }

    private void room(int n) {
        if (buf.remaining() >= n) {
            return;
        }
        long need = (long) buf.position() + n;
        if (need - AgentFrames.HEADER > limit) {
            throw new IllegalArgumentException(what + ": payload larger than " + limit + " bytes");
        }
        int size = (int) Math.min(Math.max(need, buf.capacity() * 2L), (long) AgentFrames.HEADER + limit);
        ByteBuffer bigger = ByteBuffer.allocate(size);
        buf.flip();
        bigger.put(buf);
        buf = bigger;
    }

    PayloadWriter u8(int v) {
        room(1);
        buf.put((byte) v);
        return this;
    }

    PayloadWriter u16(int v) {
        room(2);
        buf.putShort((short) v);
        return this;
    }

    PayloadWriter u32(long v) {
        room(4);
        buf.putInt((int) v);
        return this;
    }

    PayloadWriter u64(long v) {
        room(8);
        buf.putLong(v);
        return this;
    }

    PayloadWriter str(String field, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length > AgentFrames.MAX_STR) {
            throw new IllegalArgumentException(
                    what + ": " + field + " is " + b.length + " bytes, more than " + AgentFrames.MAX_STR);
        }
        room(4 + b.length);
        buf.putInt(b.length).put(b);
        return this;
    }

    PayloadWriter strs(String field, List<String> list) {
        if (list.size() > AgentFrames.MAX_STRS) {
            throw new IllegalArgumentException(
                    what + ": " + field + " has " + list.size() + " elements, more than " + AgentFrames.MAX_STRS);
        }
        u32(list.size());
        for (String s : list) {
            str(field, s);
        }
        return this;
    }

    PayloadWriter bytes(byte[] b) {
        room(b.length);
        buf.put(b);
        return this;
    }

    PayloadWriter info(AgentFileInfo i) {
        return u8(i.type())
                .u32(i.mode())
                .u32(i.uid())
                .u32(i.gid())
                .u64(i.size())
                .u64(i.mtimeNs())
                .str("path", i.path())
                .str("link_target", i.linkTarget());
    }

    ByteBuffer finish() {
        int payload = buf.position() - AgentFrames.HEADER;
        if (payload > limit) {
            throw new IllegalArgumentException(what + ": payload larger than " + limit + " bytes");
        }
        buf.putInt(0, payload);
        return buf.flip();
    }
}
