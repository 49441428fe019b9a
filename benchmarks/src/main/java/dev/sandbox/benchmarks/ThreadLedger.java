package dev.sandbox.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Remembers which side of a benchmark started which live thread, so that a side's thread count need not include
 * idle threads the other side left behind. Threads alive when the ledger is made belong to nobody and count on both
 * sides. Not thread-safe: used by the harness thread between trials.
 *
 * <pre>{@code
 * ThreadLedger ledger = new ThreadLedger();
 * int foreign = ledger.othersAlive(ThreadLedger.SDK);
 * // ... run the SDK trial ...
 * ledger.claim(ThreadLedger.SDK);
 * }</pre>
 */
public final class ThreadLedger {
    /** The SDK side. */
    public static final String SDK = "sdk";

    /** The baseline side. */
    public static final String BASELINE = "baseline";

    private static final String NOBODY = "";
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final Map<Long, String> owners = new HashMap<>();

    /** Starts a ledger: every thread alive now belongs to nobody. */
    public ThreadLedger() {
        for (long id : THREADS.getAllThreadIds()) {
            owners.put(id, NOBODY);
        }
    }

    /**
     * How many live threads were started by a side other than {@code side}.
     *
     * @param side {@link #SDK} or {@link #BASELINE}
     * @return the count
     */
    public int othersAlive(String side) {
        int n = 0;
        for (long id : THREADS.getAllThreadIds()) {
            String owner = owners.get(id);
            if (owner != null && !owner.equals(NOBODY) && !owner.equals(side)) {
                n++;
            }
        }
        return n;
    }

    /**
     * Records every live thread not yet in the ledger as started by {@code side}; call it right after the side's
     * trial.
     *
     * @param side {@link #SDK} or {@link #BASELINE}
     */
    public void claim(String side) {
        Objects.requireNonNull(side, "side");
        for (long id : THREADS.getAllThreadIds()) {
            owners.putIfAbsent(id, side);
        }
    }
}
