package dev.sandbox.testsupport;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class when Netty's leak detector reported a buffer (or any other tracked resource) that was
 * garbage-collected without being released while or before the class ran.
 *
 * <p>Registered through {@code META-INF/services/org.junit.jupiter.api.extension.Extension}, so it runs for every test
 * class of a module whose surefire {@code argLine} holds {@code ${netty.leak.paranoid}} (see the parent pom): paranoid
 * level, {@link FailingLeakDetector} as Netty's detector, and JUnit's extension autodetection. After each top-level
 * class (after its {@code @AfterAll} methods, so servers and providers are closed) it collects garbage until the
 * collector has queued what it found, makes every detector look at its queue, and throws with Netty's access records
 * of each leaked buffer: where it was created and last touched.
 *
 * <p>A leak is reported by the class that ran when it was collected, which is nearly always the class that leaked it.
 */
public final class NettyLeakCheck implements AfterAllCallback {

    private static volatile boolean configurationChecked;

    /** Built by JUnit. */
    public NettyLeakCheck() {}

    @Override
    public void afterAll(ExtensionContext context) throws InterruptedException {
        if (context.getParent().flatMap(ExtensionContext::getTestClass).isPresent()) {
            return; // a @Nested class: its enclosing class checks once for all of them
        }
        checkConfiguration();
        for (int round = 0; round < 2; round++) {
            collectGarbage();
            FailingLeakDetector.pollAll();
        }
        List<String> leaks = FailingLeakDetector.drainLeaks();
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " Netty resource leak(s) reported by the end of "
                    + context.getRequiredTestClass().getName()
                    + " (a buffer was garbage-collected without release()):\n"
                    + String.join("\n\n", leaks));
        }
    }

    /** Turning on the check without the detector would pass every class without looking: refuse that. */
    private static void checkConfiguration() {
        if (configurationChecked) {
            return;
        }
        ResourceLeakDetector.Level level = ResourceLeakDetector.getLevel();
        if (level != ResourceLeakDetector.Level.PARANOID) {
            throw new ExtensionConfigurationException("NettyLeakCheck needs -Dio.netty.leakDetection.level=paranoid"
                    + " (the level is " + level + "): put ${netty.leak.paranoid} in the module's test.leak.args");
        }
        // the factory is set once, and detectors are made from it as Netty's classes load: ask it for one
        ResourceLeakDetector<?> probe =
                ResourceLeakDetectorFactory.instance().newResourceLeakDetector(NettyLeakCheck.class);
        if (!(probe instanceof FailingLeakDetector)) {
            throw new ExtensionConfigurationException(
                    "Netty's leak detectors are " + probe.getClass().getName()
                            + ", not " + FailingLeakDetector.class.getName()
                            + ": set -Dio.netty.customResourceLeakDetector (${netty.leak.paranoid} in the parent pom)");
        }
        configurationChecked = true;
    }

    /** Returns once a full collection has run and the reference handler has queued what it cleared. */
    private static void collectGarbage() throws InterruptedException {
        ReferenceQueue<Object> queue = new ReferenceQueue<>();
        WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
        System.gc();
        if (queue.remove(2_000) == null) {
            System.gc(); // one more try; a collector that ignores System.gc() still gets the churn of the next class
        }
        sentinel.clear();
        // the sentinel and the leaked buffers' references were discovered by the same collection but are queued by
        // the reference handler one at a time: give it a moment past the sentinel
        Thread.sleep(20);
    }
}
