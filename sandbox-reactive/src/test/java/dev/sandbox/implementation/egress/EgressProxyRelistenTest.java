package dev.sandbox.implementation.egress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.InvalidArgumentException;
import dev.sandbox.NetworkPolicy;
import dev.sandbox.implementation.ports.Listener;
import java.time.Duration;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * The proxy's listener across a broken agent connection, which a real sandbox cannot be made to produce on demand: a
 * listener that was up and fails is listened again (the sandbox keeps its egress); one that never came up fails the
 * start; a closed proxy listens no more. The proxy on a real sandbox is {@code DockerEgressTest}.
 */
class EgressProxyRelistenTest {

    /** A listener whose every listen is a sink the test ends. */
    private static final class Listens implements Listener {
        final CopyOnWriteArrayList<Sinks.Many<Incoming>> made = new CopyOnWriteArrayList<>();
        final AtomicInteger cancelled = new AtomicInteger();
        volatile boolean refuse;

        @Override
        public Flux<Incoming> listen(int port, int maxConnections, Runnable listening) {
            if (refuse) {
                return Flux.error(new InvalidArgumentException("sandboxPort", "port " + port + " in use"));
            }
            Sinks.Many<Incoming> sink = Sinks.many().unicast().onBackpressureError();
            made.add(sink);
            return sink.asFlux().doOnSubscribe(x -> listening.run()).doOnCancel(cancelled::incrementAndGet);
        }
    }

    @Test
    void aListenerThatFailsAfterItWasUpIsListenedAgainUntilTheProxyCloses() throws Exception {
        Listens listens = new Listens();
        EgressProxy proxy = new EgressProxy("session t", listens, NetworkPolicy.allowlist());
        proxy.start().block(Duration.ofSeconds(5));
        assertThat(listens.made).hasSize(1);
        listens.made.get(0).tryEmitError(new IllegalStateException("the agent's connection broke"));
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (listens.made.size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(listens.made).as("listened again about 1 s later").hasSize(2);
        listens.made.get(1).tryEmitComplete(); // ended by the agent: again
        deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (listens.made.size() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(listens.made).hasSize(3);
        proxy.close();
        assertThat(listens.cancelled)
                .as("the current listener closed with the proxy")
                .hasValue(1);
        listens.made.get(2).tryEmitError(new IllegalStateException("after close"));
        Thread.sleep(1500);
        assertThat(listens.made).as("nothing listens after close").hasSize(3);
    }

    @Test
    void aProxyPortTakenFailsTheStartNamingIt() {
        Listens listens = new Listens();
        listens.refuse = true;
        EgressProxy proxy =
                new EgressProxy("session t", listens, NetworkPolicy.allowlist().withProxyPort(8123));
        assertThatThrownBy(() -> proxy.start().block(Duration.ofSeconds(5)))
                .isInstanceOfSatisfying(
                        InvalidArgumentException.class,
                        e -> assertThat(e.field()).isEqualTo("proxyPort"))
                .hasMessageContaining("cannot listen on proxyPort 8123");
        assertThat(listens.made).isEmpty();
    }
}
