package dev.sandbox.testsupport;

/** The fixtures of {@link NettyLeakCheckTest} run only inside its engine runs, even when a test filter selects them. */
public final class NettyLeakCheckFixtures {

    /** The system property that is {@code true} while {@link NettyLeakCheckTest} runs a fixture. */
    public static final String RUNNING = "dev.sandbox.testsupport.fixtures.running";

    private NettyLeakCheckFixtures() {}
}
