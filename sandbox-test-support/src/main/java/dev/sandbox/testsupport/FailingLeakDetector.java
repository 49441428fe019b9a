package dev.sandbox.testsupport;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakTracker;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Netty's leak detector, keeping what it reports for {@link NettyLeakCheck} to fail the test class with.
 *
 * <p>Netty builds this class for every resource type it tracks ({@code ByteBuf} first) when the JVM runs with
 * {@code -Dio.netty.customResourceLeakDetector=dev.sandbox.testsupport.FailingLeakDetector}; being named by a
 * system property, it is in place before the first buffer is allocated, whatever the order in which classes load.
 * Reports are kept, not logged here: Netty reports a leak from whichever thread allocates next, often an event loop,
 * where writing to a stream would be a blocking call.
 *
 * @param <T> the type of the tracked resources
 */
public final class FailingLeakDetector<T> extends ResourceLeakDetector<T> {

    private static final List<FailingLeakDetector<?>> DETECTORS = new CopyOnWriteArrayList<>();
    private static final Queue<String> LEAKS = new ConcurrentLinkedQueue<>();

    /**
     * Called by Netty's {@code ResourceLeakDetectorFactory}.
     *
     * @param resourceType the type of the tracked resources
     * @param samplingInterval how often Netty samples below the paranoid level
     */
    public FailingLeakDetector(Class<?> resourceType, int samplingInterval) {
        super(resourceType, samplingInterval);
        DETECTORS.add(this);
    }

    /**
     * Called by Netty's {@code ResourceLeakDetectorFactory} for its deprecated factory method (the factory looks this
     * constructor up too, and logs an error when it is missing).
     *
     * @param resourceType the type of the tracked resources
     * @param samplingInterval how often Netty samples below the paranoid level
     * @param maxActive ignored by Netty
     */
    @Deprecated
    public FailingLeakDetector(Class<?> resourceType, int samplingInterval, long maxActive) {
        this(resourceType, samplingInterval);
    }

    @Override
    protected boolean needReport() {
        // Netty would drop the leaks silently when its logger has errors disabled
        return true;
    }

    @Override
    protected void reportTracedLeak(String resourceType, String records) {
        LEAKS.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected." + records);
    }

    @Override
    protected void reportUntracedLeak(String resourceType) {
        LEAKS.add("LEAK: " + resourceType + ".release() was not called before it was garbage-collected "
                + "(no access records: run at -Dio.netty.leakDetection.level=paranoid to see where).");
    }

    /** Makes every detector look at the references the garbage collector has queued since it last looked. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static void pollAll() {
        for (FailingLeakDetector detector : DETECTORS) {
            Object probe = new Object();
            // tracking forcibly reports the queued leaks first, at every level; the probe itself is released at once
            ResourceLeakTracker<Object> tracker = detector.trackForcibly(probe);
            if (tracker != null) {
                tracker.close(probe);
            }
        }
    }

    /** The leaks reported since the last call, and forgets them. */
    static List<String> drainLeaks() {
        List<String> drained = new ArrayList<>();
        for (String leak; (leak = LEAKS.poll()) != null; ) {
            drained.add(leak);
        }
        return drained;
    }
}
