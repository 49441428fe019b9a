package dev.sandbox.implementation.agent;

import java.util.Arrays;

/**
 * A stream's flow-control windows, both ways (PROTOCOL.md, "Credit"). Inbound, per fd: what the agent may still send
 * before it must wait, shrunk by every credited frame that arrives and widened as the subscriber consumes; the
 * consumed bytes go back to the agent in steps of a quarter window, so credit frames stay few. Outbound: the agent's
 * credit for this stream's {@code DATA}. Guarded by the connection's lock.
 */
final class StreamWindow {
    /** A ceiling on the agent's credit for our DATA, so a hostile sum cannot overflow. */
    static final long MAX_DATA_CREDIT = 1L << 40;
    /** The largest credit one {@code CREDIT} frame carries ({@code u32}). */
    private static final long MAX_CREDIT_FRAME = 0xFFFF_FFFFL;

    /** Bytes the agent may still send, per fd. */
    private final long[] credit = new long[3];
    /** Bytes consumed since credit last went back, per fd. */
    private final long[] consumed = new long[3];
    /** Credit granted but not yet sent, per fd. */
    private final long[] toSend = new long[3];
    /** Consumed bytes go back as credit once this many accumulated. */
    private long step;
    /** Bytes of {@code DATA} the agent takes now. */
    private long dataCredit;

    /**
     * Sets the initial windows, when the stream opens.
     *
     * @param fd0 the window of fd 0 (a file's content, listed entries, events)
     * @param output the window of fds 1 and 2 (a process's output)
     */
    void open(long fd0, long output) {
        credit[0] = fd0;
        step = Math.max(1, Math.max(fd0, output) / 4);
        credit[1] = output;
        credit[2] = output;
    }

    /** Bytes the agent may still send on {@code fd}. */
    long available(int fd) {
        return credit[fd];
    }

    /**
     * Charges an arriving frame.
     *
     * @return {@code false}, charging nothing, when it carries more than the window allows
     */
    boolean charge(int fd, long cost) {
        if (cost > credit[fd]) {
            return false;
        }
        credit[fd] -= cost;
        return true;
    }

    /**
     * The subscriber consumed {@code cost} bytes of {@code fd}.
     *
     * @return {@code true} when a step accumulated: credit is now waiting to be sent
     */
    boolean consumed(int fd, int cost) {
        consumed[fd] += cost;
        if (consumed[fd] < step) {
            return false;
        }
        toSend[fd] += consumed[fd];
        credit[fd] += consumed[fd];
        consumed[fd] = 0;
        return true;
    }

    /** Credit waiting to be sent for {@code fd}, at most what one frame carries. */
    long creditToSend(int fd) {
        return Math.min(toSend[fd], MAX_CREDIT_FRAME);
    }

    /** {@code n} bytes of credit for {@code fd} went out. */
    void creditSent(int fd, long n) {
        toSend[fd] -= n;
    }

    /** The stream left: no credit goes back any more. */
    void dropCreditToSend() {
        Arrays.fill(toSend, 0);
    }

    /** The agent granted {@code bytes} more of {@code DATA} (capped: a hostile sum cannot overflow). */
    void grantData(long bytes) {
        dataCredit = Math.min(MAX_DATA_CREDIT, dataCredit + bytes);
    }

    /** Bytes of {@code DATA} the agent takes now. */
    long dataCredit() {
        return dataCredit;
    }

    /** {@code n} bytes of {@code DATA} went out. */
    void dataSent(long n) {
        dataCredit -= n;
    }
}
