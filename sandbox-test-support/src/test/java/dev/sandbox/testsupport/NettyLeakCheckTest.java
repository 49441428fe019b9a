package dev.sandbox.testsupport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.container;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.instanceOf;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

import dev.sandbox.testsupport.fixtures.LeakingFixture;
import dev.sandbox.testsupport.fixtures.ReleasingFixture;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;

/**
 * The check can fail: a class that leaks a buffer fails (its test itself passes) with Netty's record of where the
 * buffer was created, and a class that releases everything passes. The fixtures run in engine runs of their own, with
 * the extension found the way the modules find it (service file plus autodetection).
 */
class NettyLeakCheckTest {

    private static EngineExecutionResults run(Class<?> fixture) {
        System.setProperty(NettyLeakCheckFixtures.RUNNING, "true");
        try {
            return EngineTestKit.engine("junit-jupiter")
                    .configurationParameter("junit.jupiter.extensions.autodetection.enabled", "true")
                    .selectors(selectClass(fixture))
                    .execute();
        } finally {
            System.clearProperty(NettyLeakCheckFixtures.RUNNING);
        }
    }

    @Test
    void this_suite_runs_with_the_failing_detector_at_paranoid_level() {
        assertThat(ResourceLeakDetector.getLevel()).isEqualTo(ResourceLeakDetector.Level.PARANOID);
        assertThat(System.getProperty("io.netty.customResourceLeakDetector"))
                .isEqualTo(FailingLeakDetector.class.getName());
    }

    @Test
    void a_class_that_leaks_a_buffer_fails() {
        EngineExecutionResults results = run(LeakingFixture.class);

        results.testEvents().assertStatistics(stats -> stats.succeeded(1).failed(0));
        results.containerEvents()
                .assertThatEvents()
                .haveExactly(
                        1,
                        event(
                                container(LeakingFixture.class),
                                finishedWithFailure(
                                        instanceOf(AssertionError.class),
                                        message(m -> m.contains("LEAK: ByteBuf.release() was not called")
                                                && m.contains("by the end of " + LeakingFixture.class.getName())
                                                // paranoid level: the records say where the buffer came from
                                                && m.contains("Created at:")
                                                && m.contains("LeakingFixture.leaks_a_buffer")))));
    }

    @Test
    void a_class_that_releases_its_buffers_passes() {
        EngineExecutionResults results = run(ReleasingFixture.class);

        results.testEvents().assertStatistics(stats -> stats.succeeded(2).failed(0));
        // the engine, the class and its @Nested class
        results.containerEvents().assertStatistics(stats -> stats.succeeded(3).failed(0));
    }
}
