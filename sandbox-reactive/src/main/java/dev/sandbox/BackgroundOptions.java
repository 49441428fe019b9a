package dev.sandbox;

import java.util.Objects;

/**
 * How a background process keeps its output: the size of each stream's ring buffer and what happens when a ring is
 * full. Immutable.
 *
 * <p>By default each stream keeps the newest {@value #DEFAULT_RING_BYTES} bytes and drops the oldest ({@link
 * Overflow#DROP_OLDEST}), so a process nobody listens to keeps running. With {@link Overflow#THROTTLE} nothing is
 * dropped: bytes leave the ring only when every live subscriber has read them, and while the ring is full the
 * process waits in {@code write}, as it would on a full pipe.
 *
 * <pre>{@code
 * session.start(ExecOptions.of("python3", "train.py"),
 *         BackgroundOptions.defaults().withRingBytes(8 << 20).withOverflow(BackgroundOptions.Overflow.THROTTLE));
 * }</pre>
 */
public final class BackgroundOptions {
    /** Default ring size per stream: 1 MiB. */
    public static final int DEFAULT_RING_BYTES = 1024 * 1024;

    /** Smallest ring allowed: 64 KiB, one read from a pipe. */
    public static final int MIN_RING_BYTES = 64 * 1024;

    /** What a full ring buffer does. */
    public enum Overflow {
        /** Keep reading; the oldest bytes are dropped. */
        DROP_OLDEST,
        /** Stop reading until subscribers have read enough; the process waits. */
        THROTTLE
    }

    private static final BackgroundOptions DEFAULTS = new BackgroundOptions(DEFAULT_RING_BYTES, Overflow.DROP_OLDEST);

    private final int ringBytes;
    private final Overflow overflow;

    private BackgroundOptions(int ringBytes, Overflow overflow) {
        this.ringBytes = ringBytes;
        this.overflow = overflow;
    }

    /**
     * A 1 MiB ring per stream that drops the oldest bytes.
     *
     * @return the defaults
     */
    public static BackgroundOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Sets each stream's ring size.
     *
     * @param ringBytes at least {@link #MIN_RING_BYTES}
     * @return a copy with the size set
     */
    public BackgroundOptions withRingBytes(int ringBytes) {
        return new BackgroundOptions(ringBytes, overflow);
    }

    /**
     * Sets what a full ring does.
     *
     * @param overflow the policy
     * @return a copy with the policy set
     */
    public BackgroundOptions withOverflow(Overflow overflow) {
        return new BackgroundOptions(ringBytes, Objects.requireNonNull(overflow, "overflow"));
    }

    /**
     * Each stream's ring size in bytes.
     *
     * @return the size
     */
    public int ringBytes() {
        return ringBytes;
    }

    /**
     * What a full ring does.
     *
     * @return the policy
     */
    public Overflow overflow() {
        return overflow;
    }

    /**
     * Checks the options.
     *
     * @return these options
     * @throws InvalidArgumentException when the ring is smaller than {@link #MIN_RING_BYTES}
     */
    public BackgroundOptions validate() {
        if (ringBytes < MIN_RING_BYTES) {
            throw new InvalidArgumentException(
                    "ringBytes", "ringBytes must be at least " + MIN_RING_BYTES + ", got " + ringBytes);
        }
        return this;
    }

    @Override
    public String toString() {
        return "BackgroundOptions{ringBytes=" + ringBytes + ", overflow=" + overflow + "}";
    }
}
