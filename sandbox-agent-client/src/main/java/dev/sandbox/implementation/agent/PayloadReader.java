package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the fields of one payload, each checked against the bytes left and the protocol's limits: anything out of
 * bounds is an {@link AgentProtocolException} naming the frame and the field.
 */
final class PayloadReader {
    private final ByteBuffer p;
    private final String what;

    PayloadReader(ByteBuffer payload, String what) {
        this.p = payload;
        this.what = what;
    }

    private void need(int n, String field) {
        if (p.remaining() < n) {
            throw new AgentProtocolException(what + ": payload too short for " + field + " (" + p.remaining()
                    + " bytes left, " + n + " needed)");
        }
    }

    int u8(String field) {
        need(1, field);
        return p.get() & 0xFF;
    }

    boolean bool(String field) {
        int v = u8(field);
        if (v > 1) {
            throw new AgentProtocolException(what + ": " + field + " is " + v + ", not 0 or 1");
        }
        return v == 1;
    }

    int u16(String field) {
        need(2, field);
        return p.getShort() & 0xFFFF;
    }

    long u32(String field) {
        need(4, field);
        return p.getInt() & 0xFFFF_FFFFL;
    }

    int i32(String field) {
        need(4, field);
        return p.getInt();
    }

    long i64(String field) {
        need(8, field);
        return p.getLong();
    }

    String str(String field) {
        long n = u32(field + " length");
        if (n > AgentFrames.MAX_STR) {
            throw new AgentProtocolException(what + ": " + field + " length " + n + " beyond " + AgentFrames.MAX_STR);
        }
        if (n > p.remaining()) {
            throw new AgentProtocolException(
                    what + ": " + field + " length " + n + " beyond the frame (" + p.remaining() + " bytes left)");
        }
        String s;
        if (p.hasArray()) {
            s = new String(p.array(), p.arrayOffset() + p.position(), (int) n, StandardCharsets.UTF_8);
            p.position(p.position() + (int) n);
        } else {
            byte[] b = new byte[(int) n];
            p.get(b);
            s = new String(b, StandardCharsets.UTF_8);
        }
        return s;
    }

    List<String> strs(String field) {
        long count = u32(field + " count");
        // every str takes 4 bytes at least: a count the frame cannot hold is refused before any allocation
        if (count > AgentFrames.MAX_STRS || count * 4 > p.remaining()) {
            throw new AgentProtocolException(what + ": " + field + " count " + count + " beyond "
                    + (count > AgentFrames.MAX_STRS ? "the limit " + AgentFrames.MAX_STRS : "the frame"));
        }
        List<String> out = new ArrayList<>((int) count);
        for (long i = 0; i < count; i++) {
            out.add(str(field));
        }
        return out;
    }

    byte[] rest() {
        byte[] b = new byte[p.remaining()];
        p.get(b);
        return b;
    }

    int remaining() {
        return p.remaining();
    }

    AgentFileInfo info() {
        int type = u8("info type");
        if (type < 1 || type > 4) {
            throw new AgentProtocolException(what + ": info type " + type + " unknown");
        }
        long mode = u32("info mode");
        if (mode > 07777) {
            throw new AgentProtocolException(what + ": info mode " + Long.toOctalString(mode) + " beyond 07777");
        }
        return new AgentFileInfo(
                type,
                (int) mode,
                u32("info uid"),
                u32("info gid"),
                i64("info size"),
                i64("info mtime_ns"),
                str("info path"),
                str("info link_target"));
    }

    void end() {
        if (p.hasRemaining()) {
            throw new AgentProtocolException(what + ": " + p.remaining() + " bytes left over");
        }
    }
}
