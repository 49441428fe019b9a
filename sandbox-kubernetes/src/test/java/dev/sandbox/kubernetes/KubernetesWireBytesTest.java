package dev.sandbox.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.ExecOptions;
import dev.sandbox.ExecResult;
import dev.sandbox.SandboxSession;
import dev.sandbox.implementation.kubernetes.WireBytes;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** The data plane's byte counter (the benchmarks' per-run wire cost) counts a command's round trip, and only that. */
@RequiresKubernetes
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesWireBytesTest {
    private static final Duration TIMEOUT = Duration.ofMinutes(2);
    private KubernetesTestSupport support;
    private KubernetesSandboxProvider provider;

    @BeforeAll
    void start() {
        support = new KubernetesTestSupport();
        provider = KubernetesTestSupport.provider();
    }

    @AfterAll
    void stop() {
        support.finish(provider);
    }

    @Test
    void aCommandsRoundTripIsCountedBothWaysAndAnIdleConnectionCostsNothing() throws InterruptedException {
        SandboxSession session = provider.create(support.sessionOptions()).block(TIMEOUT);
        try {
            session.run(ExecOptions.of("true")).block(TIMEOUT); // the connection is open and warm
            long sent0 = WireBytes.sent();
            long received0 = WireBytes.received();
            ExecResult r = session.run(ExecOptions.of("echo", "hi")).block(TIMEOUT);
            assertThat(r.stdout()).isEqualTo("hi\n");
            long sent = WireBytes.sent() - sent0;
            long received = WireBytes.received() - received0;
            // the request carries the argv, the reply "hi\n" and the exit; each at least a TLS record's overhead
            assertThat(sent).as("bytes sent for one run").isBetween(30L, 4096L);
            assertThat(received).as("bytes received for one run").isBetween(30L, 4096L);

            long idleSent = WireBytes.sent();
            long idleReceived = WireBytes.received();
            Thread.sleep(1000);
            assertThat(WireBytes.sent() - idleSent).as("bytes sent while idle").isZero();
            assertThat(WireBytes.received() - idleReceived)
                    .as("bytes received while idle")
                    .isZero();
        } finally {
            session.destroy().block(TIMEOUT);
        }
    }
}
