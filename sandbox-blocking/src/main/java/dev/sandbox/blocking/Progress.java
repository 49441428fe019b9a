package dev.sandbox.blocking;

import org.jspecify.annotations.Nullable;

/** Counts a transfer's bytes and tells the listener, at most once per {@link TransferListener#STEP_BYTES}. */
final class Progress {
    private final @Nullable TransferListener listener;
    private final long total;
    private long done;
    private long reported;

    Progress(@Nullable TransferListener listener, long total) {
        this.listener = listener;
        this.total = total;
    }

    /** Counts bytes moved; reports when a step is complete, but never the end before {@link #finish()}. */
    void advance(long bytes) {
        done += bytes;
        if (listener != null && done - reported >= TransferListener.STEP_BYTES && (total < 0 || done < total)) {
            reported = done;
            listener.progress(done, total);
        }
    }

    /** The transfer has completed: the last report, with the final size as the total. */
    void finish() {
        if (listener != null) {
            listener.progress(done, done);
        }
    }

    long done() {
        return done;
    }
}
