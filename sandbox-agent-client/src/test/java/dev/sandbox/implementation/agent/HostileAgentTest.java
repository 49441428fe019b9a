package dev.sandbox.implementation.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.ProcessNotFoundException;
import dev.sandbox.SessionTerminatedException;
import dev.sandbox.implementation.process.RawEvent;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

/**
 * The client against an in-JVM agent that breaks the protocol: every malformation and every overrun closes the
 * connection with a typed error, floods stay bounded, and an agent that dies fails every open stream at once.
 */
class HostileAgentTest {
    private static final Duration T = Duration.ofSeconds(5);

    private static AgentConnection connect(FakeAgent agent) {
        return AgentConnection.open(agent, AgentConnection.Options.defaults().withSessionId("s1"))
                .block(T);
    }

    private static ByteBuffer header(long length, int type, int stream) {
        return ByteBuffer.allocate(9)
                .putInt((int) length)
                .put((byte) type)
                .putInt(stream)
                .flip();
    }

    @Test
    void aHugeLengthBreaksTheConnection() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        Flux<AgentWatchEvent> watch = c.files().watch("/w", false);
        StepVerifier.create(watch)
                .then(() -> agent.sendRaw(header(0xFFFF_FFF0L, AgentFrames.A_DATA, 1)))
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOf(AgentProtocolException.class)
                        .hasMessageContaining("length 4294967280, beyond 65600"))
                .verify(T);
        assertThat(c.isClosed()).isTrue();
        assertThat(c.heldBytes()).isZero();
    }

    @Test
    void outputBeyondItsCreditBreaksTheConnection() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        AgentProcess p = c.processes().spawn(AgentSpawn.of("yes"));
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        // a subscriber that requests nothing: no credit comes back
        p.events().subscribe(new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {}

            @Override
            protected void hookOnError(Throwable t) {
                errors.add(t);
            }
        });
        ClientFrame.Spawn spawn = agent.next(ClientFrame.Spawn.class);
        assertThat(spawn.credit()).isEqualTo(AgentConnection.WINDOW);
        agent.send(new AgentFrame.Started(spawn.stream(), 42, "", 0));
        byte[] chunk = new byte[65536];
        for (int i = 0; i < 4; i++) {
            agent.send(new AgentFrame.Output(spawn.stream(), 1, (long) i * chunk.length, chunk));
        }
        agent.send(new AgentFrame.Output(spawn.stream(), 2, 0, new byte[100])); // stderr has its own credit
        c.ping().block(T); // everything so far was within credit: the connection lives
        assertThat(errors).isEmpty();
        agent.send(new AgentFrame.Output(spawn.stream(), 1, 4L * chunk.length, new byte[1]));
        c.onClose().block(T);
        assertThat(errors)
                .singleElement()
                .satisfies(e -> assertThat(e)
                        .isInstanceOf(AgentProtocolException.class)
                        .hasMessageContaining("OUTPUT on stream " + spawn.stream()
                                + " carries 1 bytes for fd 1, beyond its" + " credit of 0"));
    }

    @Test
    void aFloodForUnknownStreamsPassesThroughWithoutBeingKept() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        ByteBuffer frame = FrameEncoder.encode(new AgentFrame.Output(999_999, 1, 0, new byte[65536]));
        int frames = 1600; // 100 MiB
        // split at odd places so that the decoder has to hold partial frames
        agent.splice(Flux.range(0, frames)
                .concatMap(i -> Flux.just(frame.slice(0, 5000), frame.slice(5000, frame.remaining() - 5000))));
        Duration rtt = c.ping().block(T);
        assertThat(rtt).isNotNull();
        assertThat(c.droppedFrames()).isEqualTo(frames);
        assertThat(c.droppedBytes()).isEqualTo(frames * (long) (frame.remaining() - 9));
        assertThat(c.openStreams()).isZero();
        assertThat(c.heldBytes()).isZero(); // nothing kept between buffers
        assertThat(c.isClosed()).isFalse();
    }

    @Test
    void aWatchFloodWithinCreditIsDeliveredAsDemandedAndNeverOverrunsTheWindow() throws Exception {
        FakeAgent agent = new FakeAgent();
        int events = 50_000;
        AtomicLong outstanding = new AtomicLong();
        AtomicLong maxOutstanding = new AtomicLong();
        AtomicLong sent = new AtomicLong();
        // an agent that sends as fast as its credit allows (on the client's thread, when credit arrives)
        agent.behaviour = (a, f) -> {
            long credit = switch (f) {
                case ClientFrame.Watch w -> {
                    a.send(new AgentFrame.Ready(w.stream(), 0));
                    yield w.credit();
                }
                case ClientFrame.Credit cr -> cr.bytes();
                default -> 0;
            };
            if (credit == 0) {
                return;
            }
            synchronized (a) {
                long now = outstanding.addAndGet(credit);
                maxOutstanding.accumulateAndGet(now, Math::max);
                List<ByteBuffer> batch = new ArrayList<>();
                while (sent.get() < events) {
                    ByteBuffer e = FrameEncoder.encode(new AgentFrame.Event(f.stream(), 1, "/w/f" + sent.get()));
                    int cost = e.remaining() - 9;
                    if (outstanding.get() < cost) {
                        break;
                    }
                    outstanding.addAndGet(-cost);
                    sent.incrementAndGet();
                    batch.add(e);
                }
                a.splice(Flux.fromIterable(batch));
            }
        };
        AgentConnection c = connect(agent);
        StepVerifier.create(
                        c.files().watch("/w", true).map(AgentWatchEvent::kind).limitRate(7), 0)
                .thenRequest(1)
                .expectNext(AgentWatchEvent.Kind.READY)
                .thenAwait(Duration.ofMillis(50))
                .then(() -> assertThat(sent.get()).isLessThan(events)) // the window stopped the agent
                .thenRequest(Long.MAX_VALUE)
                .expectNextCount(events)
                .thenCancel()
                .verify(Duration.ofSeconds(30));
        assertThat(maxOutstanding.get()).isLessThanOrEqualTo(AgentConnection.ITEM_WINDOW);
        assertThat(agent.next(ClientFrame.Close.class)).isNotNull();
    }

    @Test
    void aWatchFloodBeyondItsCreditBreaksTheConnection() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        c.files().watch("/w", false).subscribe(new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                s.request(1); // one, then nothing: the agent must stop at its credit
            }

            @Override
            protected void hookOnError(Throwable t) {
                errors.add(t);
            }
        });
        ClientFrame.Watch w = agent.next(ClientFrame.Watch.class);
        ByteBuffer event = FrameEncoder.encode(new AgentFrame.Event(w.stream(), 2, "/w/x"));
        agent.splice(Flux.range(0, 1_000_000).map(i -> event.duplicate()));
        c.onClose().block(T);
        assertThat(errors)
                .singleElement()
                .satisfies(e -> assertThat(e)
                        .isInstanceOf(AgentProtocolException.class)
                        .hasMessageContaining("beyond its credit"));
    }

    @Test
    void aSecondReadyOnAWatchIsAProtocolError() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        StepVerifier.create(c.files().watch("/w", false), 0)
                .then(() -> {
                    try {
                        ClientFrame.Watch w = agent.next(ClientFrame.Watch.class);
                        // READY costs no credit: repeated, it would queue without bound
                        agent.splice(
                                Flux.range(0, 3).map(i -> FrameEncoder.encode(new AgentFrame.Ready(w.stream(), 0))));
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                })
                .expectErrorSatisfies(e ->
                        assertThat(e).isInstanceOf(AgentProtocolException.class).hasMessageContaining("a second READY"))
                .verify(T);
    }

    @Test
    void anAgentThatDiesFailsEveryOpenStreamWithTheSuppliedError() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = AgentConnection.open(
                        agent,
                        AgentConnection.Options.defaults()
                                .withLostError(cause -> new SessionTerminatedException("s1", "its container is gone")))
                .block(T);
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        c.processes().spawn(AgentSpawn.of("sleep", "100")).events().subscribe(x -> {}, errors::add);
        c.files().read("/big", 0, -1).subscribe(x -> {}, errors::add);
        c.files().watch("/w", true).subscribe(x -> {}, errors::add);
        c.files().stat("/w").subscribe(x -> {}, errors::add);
        c.files().write("/w/f", 0644, false, Flux.never()).subscribe(x -> {}, errors::add);
        ClientFrame.Spawn spawn = agent.next(ClientFrame.Spawn.class);
        agent.next(ClientFrame.Write.class);
        agent.send(new AgentFrame.Output(spawn.stream(), 1, 0, "half a li".getBytes(StandardCharsets.UTF_8)));
        long start = System.nanoTime();
        agent.end();
        c.onClose().block(Duration.ofSeconds(2));
        while (errors.size() < 5
                && System.nanoTime() - start < Duration.ofSeconds(2).toNanos()) {
            Thread.onSpinWait();
        }
        assertThat(errors)
                .hasSize(5)
                .allSatisfy(e -> assertThat(e)
                        .isInstanceOf(SessionTerminatedException.class)
                        .hasMessageContaining("its container is gone"));
        // and what comes after fails at once with the same error
        StepVerifier.create(c.files().stat("/x"))
                .expectError(SessionTerminatedException.class)
                .verify(T);
    }

    @Test
    void aHelloWithAnotherVersionIsATypedErrorNamingBothRanges() {
        FakeAgent agent = new FakeAgent();
        agent.answerHello = false;
        agent.behaviour = (a, f) -> a.send(new AgentFrame.Hello(0, new AgentHello(2, "future", 1, 0, 0, 0)));
        assertThatThrownBy(() -> connect(agent))
                .isInstanceOf(AgentVersionException.class)
                .hasMessageContaining("version 2")
                .hasMessageContaining("1..1");
        FakeAgent refusing = new FakeAgent();
        refusing.answerHello = false;
        refusing.behaviour = (a, f) ->
                a.send(new AgentFrame.Error(0, AgentErrnoException.VERSION, "the agent speaks 2..3, the client 1..1"));
        assertThatThrownBy(() -> connect(refusing))
                .isInstanceOf(AgentVersionException.class)
                .hasMessageContaining("the client speaks 1..1")
                .hasMessageContaining("the agent speaks 2..3");
    }

    @Test
    void garbageBeforeHelloIsAProtocolError() {
        FakeAgent agent = new FakeAgent();
        agent.answerHello = false;
        agent.behaviour = (a, f) ->
                a.sendRaw(ByteBuffer.wrap("OCI runtime exec failed: exec failed: unable to start container process\n"
                        .getBytes(StandardCharsets.UTF_8)));
        assertThatThrownBy(() -> connect(agent)).isInstanceOf(AgentProtocolException.class);
        FakeAgent early = new FakeAgent();
        early.answerHello = false;
        early.behaviour = (a, f) -> a.send(new AgentFrame.End(1));
        assertThatThrownBy(() -> connect(early))
                .isInstanceOf(AgentProtocolException.class)
                .hasMessageContaining("expected HELLO first, got END on stream 1");
    }

    @Test
    void anAgentThatNeverAnswersHelloTimesOut() {
        FakeAgent agent = new FakeAgent();
        agent.answerHello = false;
        Duration timeout = Duration.ofMillis(200);
        assertThatThrownBy(() -> AgentConnection.open(
                                agent, AgentConnection.Options.defaults().withTimeouts(timeout, timeout))
                        .block(T))
                .hasMessageContaining("did not answer HELLO within PT0.2S");
    }

    @Test
    void theStreamLimitIsATypedErrorAndFreesUpAsStreamsClose() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        List<reactor.core.Disposable> watches = new ArrayList<>();
        for (int i = 0; i < AgentConnection.MAX_STREAMS; i++) {
            watches.add(c.files().watch("/w" + i, false).subscribe());
        }
        assertThat(c.openStreams()).isEqualTo(AgentConnection.MAX_STREAMS);
        StepVerifier.create(c.files().watch("/one-too-many", false))
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOf(AgentErrnoException.class)
                        .hasMessageContaining("LIMIT")
                        .satisfies(x ->
                                assertThat(((AgentErrnoException) x).code()).isEqualTo(AgentErrnoException.LIMIT)))
                .verify(T);
        watches.forEach(reactor.core.Disposable::dispose);
        c.ping().block(T); // the CLOSEs went out before the PING's answer
        assertThat(c.openStreams()).isZero();
        StepVerifier.create(c.files().watch("/again", false))
                .then(() -> agentAnswersReady(agent))
                .expectNext(new AgentWatchEvent(AgentWatchEvent.Kind.READY, "/again"))
                .thenCancel()
                .verify(T);
    }

    private static void agentAnswersReady(FakeAgent agent) {
        try {
            ClientFrame.Watch w;
            do {
                w = agent.next(ClientFrame.Watch.class);
            } while (!w.path().equals("/again"));
            agent.send(new AgentFrame.Ready(w.stream(), 0));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void stdinIsSentOnlyWithinTheAgentsCredit() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        byte[] input = new byte[200_000];
        AgentProcess p = c.processes().spawn(AgentSpawn.of("cat").withStdin(Flux.just(ByteBuffer.wrap(input))));
        p.events().subscribe();
        ClientFrame.Spawn spawn = agent.next(ClientFrame.Spawn.class);
        assertThat(spawn.flags() & AgentFrames.FLAG_STDIN).isNotZero();
        agent.send(new AgentFrame.Started(spawn.stream(), 7, "", 1000));
        assertThat(agent.next(ClientFrame.Data.class).bytes()).hasSize(1000);
        c.ping().block(T);
        assertThat(agent.received.stream().filter(f -> f instanceof ClientFrame.Data))
                .isEmpty();
        agent.send(new AgentFrame.Credit(spawn.stream(), 0, 150_000));
        long got = 0;
        while (got < 150_000) {
            ClientFrame.Data d = agent.next(ClientFrame.Data.class);
            assertThat(d.bytes().length).isLessThanOrEqualTo(65536);
            got += d.bytes().length;
        }
        assertThat(got).isEqualTo(150_000);
        agent.send(new AgentFrame.Credit(spawn.stream(), 0, 1 << 20));
        got = 0;
        while (got < 49_000) {
            got += agent.next(ClientFrame.Data.class).bytes().length;
        }
        assertThat(agent.next(ClientFrame.Eof.class).stream()).isEqualTo(spawn.stream());
        assertThat(p.pid()).isEqualTo(7);
    }

    @Test
    void aLaunchErrorIsAProcessLaunchExceptionWithTheErrno() throws Exception {
        FakeAgent agent = new FakeAgent();
        agent.behaviour = (a, f) -> {
            if (f instanceof ClientFrame.Spawn s) {
                a.send(new AgentFrame.Error(s.stream(), 2, "nosuch: No such file or directory"));
            }
        };
        AgentConnection c = connect(agent);
        StepVerifier.create(c.processes().spawn(AgentSpawn.of("nosuch")).events())
                .expectErrorSatisfies(e -> assertThat(e)
                        .isInstanceOf(ProcessLaunchException.class)
                        .hasMessageContaining("ENOENT")
                        .hasMessageContaining("nosuch: No such file or directory")
                        .hasCauseInstanceOf(AgentErrnoException.class))
                .verify(T);
    }

    @Test
    void anOffsetGoneIsOffsetUnavailableWithTheRingsEnd() throws Exception {
        FakeAgent agent = new FakeAgent();
        agent.behaviour = (a, f) -> {
            switch (f) {
                case ClientFrame.Attach at
                when at.id().equals("p1") ->
                    a.send(new AgentFrame.Error(at.stream(), AgentErrnoException.OFFSET_GONE, "stderr 500"));
                case ClientFrame.Attach at ->
                    a.send(new AgentFrame.Error(at.stream(), AgentErrnoException.NO_PROCESS, "no process " + at.id()));
                case ClientFrame.Procs pr -> {
                    a.send(new AgentFrame.Proc(
                            pr.stream(),
                            new AgentProcInfo("p1", 0, 9, 1, true, 0, false, List.of("x"), 0, 10, 500, 9000)));
                    a.send(new AgentFrame.End(pr.stream()));
                }
                default -> {}
            }
        };
        AgentConnection c = connect(agent);
        StepVerifier.create(c.processes().attach("p1", 0, 3, true))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(OffsetUnavailableException.class);
                    OffsetUnavailableException o = (OffsetUnavailableException) e;
                    assertThat(o.requested()).isEqualTo(3);
                    assertThat(o.firstAvailable()).isEqualTo(500);
                    assertThat(o.end()).isEqualTo(9000);
                })
                .verify(T);
        StepVerifier.create(c.processes().attach("p9", 0, 0, false))
                .expectError(ProcessNotFoundException.class)
                .verify(T);
    }

    @Test
    void outputIsDeliveredAsDemandedAndCreditReturnsAsItIsConsumed() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        AgentProcess p = c.processes().spawn(AgentSpawn.of("yes"));
        List<RawEvent> seen = new CopyOnWriteArrayList<>();
        BaseSubscriber<RawEvent> sub = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {}

            @Override
            protected void hookOnNext(RawEvent e) {
                seen.add(e);
            }
        };
        p.events().subscribe(sub);
        ClientFrame.Spawn spawn = agent.next(ClientFrame.Spawn.class);
        agent.send(new AgentFrame.Started(spawn.stream(), 42, "", 0));
        // 2000 small chunks, alternating stdout and stderr: queued (merged) while nothing is requested
        long[] offsets = new long[3];
        for (int i = 0; i < 2000; i++) {
            int fd = 1 + (i % 2);
            agent.send(new AgentFrame.Output(spawn.stream(), fd, offsets[fd], new byte[] {(byte) fd}));
            offsets[fd]++;
        }
        agent.send(new AgentFrame.Exit(spawn.stream(), 0, false, false, 1));
        c.ping().block(T);
        assertThat(seen).isEmpty();
        assertThat(p.started().block(T)).isEqualTo(42);
        sub.request(Long.MAX_VALUE);
        long out = seen.stream()
                .filter(e -> e instanceof RawEvent.Chunk ch && ch.stream() == RawEvent.STDOUT)
                .mapToLong(e -> ((RawEvent.Chunk) e).bytes().length)
                .sum();
        long err = seen.stream()
                .filter(e -> e instanceof RawEvent.Chunk ch && ch.stream() == RawEvent.STDERR)
                .mapToLong(e -> ((RawEvent.Chunk) e).bytes().length)
                .sum();
        assertThat(out).isEqualTo(1000);
        assertThat(err).isEqualTo(1000);
        assertThat(seen.size()).as("merged chunks").isLessThan(100);
        assertThat(seen.get(seen.size() - 1)).isEqualTo(new RawEvent.Exited(0, false, false));
    }

    @Test
    void cancellingAProcessClosesItsStreamAndKillSendsSigkill() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        AgentProcess p = c.processes().spawn(AgentSpawn.of("sleep", "9"));
        reactor.core.Disposable d = p.events().subscribe();
        ClientFrame.Spawn spawn = agent.next(ClientFrame.Spawn.class);
        agent.send(new AgentFrame.Started(spawn.stream(), 42, "", 0));
        p.started().block(T);
        p.signal(15);
        assertThat(agent.next(ClientFrame.Signal.class).signal()).isEqualTo(15);
        p.kill();
        assertThat(agent.next(ClientFrame.Signal.class).signal()).isEqualTo(9);
        d.dispose();
        assertThat(agent.next(ClientFrame.Close.class).stream()).isEqualTo(spawn.stream());
        // what was in flight is ignored
        agent.send(new AgentFrame.Output(spawn.stream(), 1, 0, new byte[10]));
        c.ping().block(T);
        assertThat(c.droppedFrames()).isEqualTo(1);
        assertThat(c.openStreams()).isZero();
    }
}
