package dev.sandbox.implementation.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox.implementation.process.RawEvent;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import reactor.core.publisher.Flux;

/**
 * The client's cost against the real agent (a local {@code stdio} child): exec round trips of {@code true} and stream
 * throughput of {@code head -c 500M /dev/zero}. A measurement, not a check: run with {@code
 * -Dtest=AgentClientMeasurement -Dsandbox.measure=true}.
 */
@EnabledIfSystemProperty(named = "sandbox.measure", matches = "true")
class AgentClientMeasurement {
    private static final Duration T = Duration.ofSeconds(60);

    /** The client alone: an in-memory agent that sends 64 KiB OUTPUT frames as fast as its credit allows. */
    @Test
    void clientThroughputInMemory() {
        for (int round = 0; round < 3; round++) {
            FakeAgent fake = new FakeAgent();
            long total = 2L * 1024 * 1024 * 1024;
            java.util.concurrent.atomic.AtomicLong sent = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.atomic.AtomicLong credit = new java.util.concurrent.atomic.AtomicLong();
            fake.behaviour = (a, f) -> {
                long more = switch (f) {
                    case ClientFrame.Spawn sp -> {
                        a.send(new AgentFrame.Started(sp.stream(), 1, "", 0));
                        yield sp.credit();
                    }
                    case ClientFrame.Credit c -> c.bytes();
                    default -> 0;
                };
                if (more == 0) {
                    return;
                }
                synchronized (a) {
                    credit.addAndGet(more);
                    int n = (int) Math.min(credit.get() / 65536, (total - sent.get()) / 65536);
                    if (n > 0) {
                        credit.addAndGet(-65536L * n);
                        sent.addAndGet(65536L * n);
                        ByteBuffer frame =
                                FrameEncoder.encode(new AgentFrame.Output(f.stream(), 1, 0, new byte[65536]));
                        a.splice(Flux.range(0, n).map(i -> frame.duplicate()));
                    }
                    if (sent.get() == total) {
                        sent.incrementAndGet();
                        a.send(new AgentFrame.Exit(f.stream(), 0, false, false, 0));
                    }
                }
            };
            AgentConnection c = AgentConnection.open(fake, AgentConnection.Options.defaults())
                    .block(T);
            long start = System.nanoTime();
            long bytes = c.processes()
                    .spawn(AgentSpawn.of("x"))
                    .events()
                    .filter(e -> e instanceof RawEvent.Chunk)
                    .map(e -> (long) ((RawEvent.Chunk) e).bytes().length)
                    .reduce(0L, Long::sum)
                    .block(T);
            double secs = (System.nanoTime() - start) / 1e9;
            assertThat(bytes).isEqualTo(total);
            System.out.printf("COST client alone, 2 GiB of OUTPUT: %.2f s, %.0f MiB/s%n", secs, 2048 / secs);
            c.close();
        }
    }

    @Test
    void measure() throws Exception {
        Path binary = StdioTransport.findBinary();
        assertThat(binary).as("the agent binary").isNotNull();
        StdioTransport transport = new StdioTransport(binary);
        AgentConnection agent = AgentConnection.open(transport, AgentConnection.Options.defaults())
                .block(T);
        try {
            int runs = 500;
            long[] nanos = new long[runs];
            for (int i = 0; i < runs + 100; i++) {
                long t0 = System.nanoTime();
                agent.processes().spawn(AgentSpawn.of("true")).events().blockLast(T);
                if (i >= 100) {
                    nanos[i - 100] = System.nanoTime() - t0;
                }
            }
            Arrays.sort(nanos);
            System.out.printf(
                    "COST exec true: median %.3f ms, p90 %.3f ms, min %.3f ms (%d runs)%n",
                    nanos[runs / 2] / 1e6, nanos[runs * 9 / 10] / 1e6, nanos[0] / 1e6, runs);
            // the same from the JVM directly, for scale on this machine
            long[] direct = new long[100];
            for (int i = 0; i < 120; i++) {
                long t1 = System.nanoTime();
                new ProcessBuilder("true").start().waitFor();
                if (i >= 20) {
                    direct[i - 20] = System.nanoTime() - t1;
                }
            }
            Arrays.sort(direct);
            System.out.printf("COST ProcessBuilder true (no agent): median %.3f ms%n", direct[50] / 1e6);
            long pings = 0;
            long t0 = System.nanoTime();
            for (int i = 0; i < 2000; i++) {
                agent.ping().block(T);
                pings++;
            }
            System.out.printf("COST ping: %.1f us%n", (System.nanoTime() - t0) / 1e3 / pings);
            for (int round = 0; round < 3; round++) {
                long start = System.nanoTime();
                long bytes = agent.processes()
                        .spawn(AgentSpawn.of("head", "-c", "500M", "/dev/zero"))
                        .events()
                        .filter(e -> e instanceof RawEvent.Chunk)
                        .map(e -> (long) ((RawEvent.Chunk) e).bytes().length)
                        .reduce(0L, Long::sum)
                        .block(T);
                double secs = (System.nanoTime() - start) / 1e9;
                assertThat(bytes).isEqualTo(500L * 1024 * 1024);
                System.out.printf("COST head -c 500M: %.2f s, %.0f MiB/s%n", secs, 500 / secs);
            }
        } finally {
            agent.close();
            transport.kill();
        }
    }
}
