package dev.sandbox.docker;

import dev.sandbox.SessionInfo;
import dev.sandbox.SessionOptions;
import dev.sandbox.pool.SandboxPool;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The JVM {@code DockerAuthorityTest} kills: it builds a pool of {@value #WARM} warm sessions on a Docker provider
 * with the shortest lease, waits until they are warm, prints their session ids ({@code session <id>}) and {@code
 * ready}, then waits to be killed. Its argument is the test run's label value, which every session carries.
 */
public final class WarmPoolOwner {
    /** The warm sessions the pool keeps. */
    static final int WARM = 3;

    private WarmPoolOwner() {}

    /**
     * Runs it.
     *
     * @param args the value of {@link DockerTestSupport#RUN_LABEL} for the sessions
     * @throws Exception when the pool does not fill in time
     */
    public static void main(String[] args) throws Exception {
        String runId = args[0];
        DockerSandboxProvider provider = DockerSandboxProvider.builder()
                .settings(DockerTestSupport.settings())
                .sweepInterval(null)
                .lease(DockerSandboxProvider.MIN_LEASE)
                .build();
        SandboxPool pool = SandboxPool.builder(provider)
                .template(SessionOptions.defaults().withLabel(DockerTestSupport.RUN_LABEL, runId))
                .warm(WARM)
                .maxSessions(WARM)
                .build();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (pool.stats().warm() < WARM) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the pool did not fill within 60 s: " + pool.stats());
            }
            Thread.sleep(20);
        }
        List<SessionInfo> sessions = provider.list(Map.of(DockerTestSupport.RUN_LABEL, runId))
                .collectList()
                .block(Duration.ofSeconds(30));
        for (SessionInfo s : sessions) {
            System.out.println("session " + s.id());
        }
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Duration.ofMinutes(10)); // until the test kills this JVM with SIGKILL
    }
}
