package dev.sandbox.implementation.ports;

/** What {@link PortForwards} keeps of an open forward, either way: it closes. */
interface OpenForward {
    /** Closes it and its connections, on the caller's thread (may block briefly); idempotent. */
    void closeNow();

    /**
     * Whether it is open.
     *
     * @return false once closed
     */
    boolean isOpen();
}
