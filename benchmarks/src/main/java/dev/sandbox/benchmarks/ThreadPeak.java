package dev.sandbox.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Samples {@link ThreadMXBean#getThreadCount()} (live platform threads, daemon or not) every half millisecond on
 * one daemon thread, keeping the peak, until closed. The sampler itself is one of the threads it counts.
 *
 * <pre>{@code
 * try (ThreadPeak peak = ThreadPeak.start()) {
 *     work();
 *     return peak.peak();
 * }
 * }</pre>
 */
public final class ThreadPeak implements AutoCloseable {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final AtomicInteger peak = new AtomicInteger();
    private final Thread sampler;
    private volatile boolean running = true;

    private ThreadPeak() {
        sampler = new Thread(this::sample, "thread-peak-sampler");
        sampler.setDaemon(true);
    }

    /**
     * Starts sampling; the first sample is taken before this returns.
     *
     * @return the running sampler
     */
    public static ThreadPeak start() {
        ThreadPeak p = new ThreadPeak();
        p.sampler.start();
        while (p.peak.get() == 0) {
            Thread.onSpinWait();
        }
        return p;
    }

    private void sample() {
        while (running) {
            peak.accumulateAndGet(THREADS.getThreadCount(), Math::max);
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(500));
        }
    }

    /**
     * The highest count sampled so far, counting the sampler.
     *
     * @return the peak
     */
    public int peak() {
        peak.accumulateAndGet(THREADS.getThreadCount(), Math::max);
        return peak.get();
    }

    /** Stops sampling and waits (up to five seconds) for the sampler to end. */
    @Override
    public void close() {
        running = false;
        try {
            sampler.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
