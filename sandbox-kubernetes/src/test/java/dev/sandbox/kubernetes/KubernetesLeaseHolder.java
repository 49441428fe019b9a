package dev.sandbox.kubernetes;

import dev.sandbox.SandboxSession;
import dev.sandbox.SessionOptions;
import java.time.Duration;

/**
 * A client JVM for KubernetesClientDeathTest: creates one leased session (no chosen lifetime) with a short lease,
 * prints {@code session <id>}, then waits to be killed (at most five minutes).
 */
final class KubernetesLeaseHolder {
    private KubernetesLeaseHolder() {}

    /**
     * Runs the client.
     *
     * @param args the run id to label the session with, the lease in seconds
     * @throws InterruptedException never expected
     */
    public static void main(String[] args) throws InterruptedException {
        String runId = args[0];
        Duration lease = Duration.ofSeconds(Long.parseLong(args[1]));
        KubernetesSandboxProvider provider = KubernetesSandboxProvider.builder()
                .settings(KubernetesTestSupport.settings())
                .lease(lease)
                .build();
        SandboxSession s = provider.create(SessionOptions.defaults().withLabel(KubernetesTestSupport.RUN_LABEL, runId))
                .block(Duration.ofSeconds(90));
        System.out.println("session " + s.id());
        System.out.flush();
        Thread.sleep(Duration.ofMinutes(5));
        provider.close();
    }
}
