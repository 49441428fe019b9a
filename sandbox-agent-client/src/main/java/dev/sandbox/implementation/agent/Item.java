package dev.sandbox.implementation.agent;

import java.util.Arrays;

/** A queued item: a chunk of bytes (mergeable) or a value. */
final class Item {
    final int fd;
    final long offset;
    byte[] buf;
    int len;
    final Object value;
    final int cost;

    private Item(int fd, long offset, byte[] buf, Object value, int cost) {
        this.fd = fd;
        this.offset = offset;
        this.buf = buf;
        this.len = buf == null ? 0 : buf.length;
        this.value = value;
        this.cost = cost;
    }

    static Item chunk(int fd, long offset, byte[] bytes) {
        return new Item(fd, offset, bytes, null, 0);
    }

    static Item value(Object value, int cost) {
        return new Item(0, 0, null, value, cost);
    }

    int cost() {
        return value == null ? len : cost;
    }

    void append(Item it) {
        if (len + it.len > buf.length) {
            buf = Arrays.copyOf(buf, Math.min(ItemStream.MAX_MERGED, Math.max(len + it.len, len * 2)));
        }
        System.arraycopy(it.buf, 0, buf, len, it.len);
        len += it.len;
    }

    /** The bytes, exactly. */
    byte[] bytes() {
        return len == buf.length ? buf : Arrays.copyOf(buf, len);
    }
}
