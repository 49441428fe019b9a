package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * An in-JVM agent over an in-memory transport: it decodes what the client sends (with the real decoder), records it,
 * answers {@code HELLO} unless told otherwise, and sends whatever a test scripts, including raw bytes and lazily
 * generated floods (spliced in as the client demands, so a flood costs no memory of its own).
 */
final class FakeAgent implements AgentTransport {
    static final AgentHello HELLO = new AgentHello(1, "fake-agent", 1, 0, 0, 1_700_000_000_000L);

    private final Sinks.Many<Flux<ByteBuffer>> toClient = Sinks.many().unicast().onBackpressureBuffer();
    final BlockingQueue<ClientFrame> received = new LinkedBlockingQueue<>();
    volatile boolean answerHello = true;
    /** Called for every client frame, after it is recorded (on the client's outbound thread). */
    volatile BiConsumer<FakeAgent, ClientFrame> behaviour = (a, f) -> {};

    @Override
    public Flux<ByteBuffer> open(Flux<ByteBuffer> outbound) {
        FrameDecoder<ClientFrame> decoder = FrameDecoder.ofClient();
        outbound.subscribe(buf -> decoder.feed(buf, f -> {
            received.add(f);
            if (f instanceof ClientFrame.Hello && answerHello) {
                send(new AgentFrame.Hello(0, HELLO));
            }
            if (f instanceof ClientFrame.Ping p) {
                send(new AgentFrame.Pong(0, p.token()));
            }
            behaviour.accept(this, f);
        }));
        // one inner flux at a time, each drained as the client demands
        return toClient.asFlux().concatMap(f -> f, 1);
    }

    synchronized void send(AgentFrame f) {
        sendRaw(FrameEncoder.encode(f));
    }

    synchronized void sendRaw(ByteBuffer bytes) {
        splice(Flux.just(bytes));
    }

    synchronized void splice(Flux<ByteBuffer> bytes) {
        toClient.emitNext(bytes, Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
    }

    /** The agent closes its side. */
    synchronized void end() {
        toClient.emitComplete(Sinks.EmitFailureHandler.busyLooping(Duration.ofSeconds(1)));
    }

    /** The pipe breaks. */
    synchronized void die(Throwable t) {
        splice(Flux.error(t));
    }

    /** The next received frame of a type, skipping others; fails after 5 s. */
    <T extends ClientFrame> T next(Class<T> type) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            long left = deadline - System.nanoTime();
            ClientFrame f = left <= 0 ? null : received.poll(left, TimeUnit.NANOSECONDS);
            if (f == null) {
                throw new AssertionError("no " + type.getSimpleName() + " from the client within 5 s");
            }
            if (type.isInstance(f)) {
                return type.cast(f);
            }
        }
    }
}
