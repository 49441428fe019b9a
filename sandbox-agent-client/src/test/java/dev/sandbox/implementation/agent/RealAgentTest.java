package dev.sandbox.implementation.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.sandbox.FileOperationException;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.ProcessLaunchException;
import dev.sandbox.ProcessNotFoundException;
import dev.sandbox.implementation.process.RawEvent;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * The client against the real agent, a local child in {@code stdio} mode (processes it starts are local too). Skipped
 * only when the binary is absent (the sandbox-agent module builds it).
 */
class RealAgentTest {
    static final Duration T = Duration.ofSeconds(10);

    private StdioTransport transport;
    private AgentConnection agent;

    @TempDir
    Path dir;

    @BeforeEach
    void connect() {
        Path binary = StdioTransport.findBinary();
        assumeThat(binary)
                .as("the sandbox-agent binary (build the sandbox-agent module)")
                .isNotNull();
        transport = new StdioTransport(binary);
        agent = AgentConnection.open(
                        transport, AgentConnection.Options.defaults().withSessionId("t"))
                .block(T);
    }

    @AfterEach
    void disconnect() throws InterruptedException {
        if (agent != null) {
            agent.close();
        }
        if (transport != null) {
            transport.kill();
        }
    }

    static String stdout(List<RawEvent> events) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        events.stream()
                .filter(e -> e instanceof RawEvent.Chunk c && c.stream() == RawEvent.STDOUT)
                .forEach(e -> b.writeBytes(((RawEvent.Chunk) e).bytes()));
        return b.toString(StandardCharsets.UTF_8);
    }

    static RawEvent.Exited exit(List<RawEvent> events) {
        assertThat(events).last().isInstanceOf(RawEvent.Exited.class);
        return (RawEvent.Exited) events.get(events.size() - 1);
    }

    @Test
    void helloDescribesTheAgent() {
        assertThat(agent.hello().version()).isEqualTo(1);
        assertThat(agent.hello().agent()).contains("sandbox-agent");
        assertThat(agent.ping().block(T)).isPositive();
    }

    @Test
    void echoAndExitCodes() {
        List<RawEvent> echo = agent.processes()
                .spawn(AgentSpawn.of("echo", "hello", "agent"))
                .events()
                .collectList()
                .block(T);
        assertThat(stdout(echo)).isEqualTo("hello agent\n");
        assertThat(exit(echo)).isEqualTo(new RawEvent.Exited(0, false, false));
        assertThat(exit(agent.processes()
                        .spawn(AgentSpawn.of("sh", "-c", "echo oops >&2; exit 3"))
                        .events()
                        .collectList()
                        .block(T)))
                .isEqualTo(new RawEvent.Exited(3, false, false));
        assertThat(exit(agent.processes()
                        .spawn(AgentSpawn.of("sh", "-c", "kill -TERM $$"))
                        .events()
                        .collectList()
                        .block(T)))
                .isEqualTo(new RawEvent.Exited(15, true, false));
        List<RawEvent> env = agent.processes()
                .spawn(new AgentSpawn(
                        List.of("sh", "-c", "echo $GREETING; pwd"),
                        java.util.Map.of("GREETING", "hi"),
                        dir.toString(),
                        null,
                        0,
                        0))
                .events()
                .collectList()
                .block(T);
        assertThat(stdout(env)).isEqualTo("hi\n" + dir + "\n");
    }

    @Test
    void aTerminalGetsItsSizeItsInputAndItsResize() {
        Sinks.Many<ByteBuffer> keys = Sinks.many().unicast().onBackpressureBuffer();
        AgentProcess p = agent.processes()
                .spawn(AgentSpawn.of("sh", "-c", "stty size; read x; stty size; echo got $x")
                        .withStdin(keys.asFlux())
                        .withPty(80, 24));
        Flux<String> screen = p.events()
                .filter(e -> e instanceof RawEvent.Chunk)
                .map(e -> new String(((RawEvent.Chunk) e).bytes(), StandardCharsets.UTF_8))
                .scan("", String::concat)
                .replay(1)
                .autoConnect();
        assertThat(screen.filter(s -> s.contains("24 80")).blockFirst(T)).isNotNull();
        p.resize(100, 30);
        keys.tryEmitNext(ByteBuffer.wrap("hi\n".getBytes(StandardCharsets.UTF_8)));
        String last = screen.filter(s -> s.contains("got hi")).blockFirst(T);
        assertThat(last).contains("30 100");
    }

    @Test
    void aProgramThatCannotStartIsAProcessLaunchException() {
        StepVerifier.create(agent.processes()
                        .spawn(AgentSpawn.of("/no/such/program"))
                        .events())
                .expectErrorSatisfies(e ->
                        assertThat(e).isInstanceOf(ProcessLaunchException.class).hasMessageContaining("ENOENT"))
                .verify(T);
    }

    @Test
    void stdinIsFedWithinCreditAndClosedAtItsEnd() {
        byte[] big = new byte[5 * 1024 * 1024 + 17];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) ('a' + i % 26);
        }
        Flux<ByteBuffer> input = Flux.range(0, 6)
                .map(i -> ByteBuffer.wrap(big, i * 1024 * 1024, Math.min(1024 * 1024, big.length - i * 1024 * 1024)));
        List<RawEvent> events = agent.processes()
                .spawn(AgentSpawn.of("sha256sum").withStdin(input))
                .events()
                .collectList()
                .block(T);
        String expected = java.util.HexFormat.of().formatHex(sha256(big));
        assertThat(stdout(events)).startsWith(expected);
        assertThat(exit(events).status()).isZero();
    }

    private static byte[] sha256(byte[] b) {
        try {
            return java.security.MessageDigest.getInstance("SHA-256").digest(b);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aSubscriberThatStopsRequestingBlocksItsProcessWhileOthersRun() throws Exception {
        AgentProcess yes = agent.processes().spawn(AgentSpawn.of("yes"));
        AtomicLong received = new AtomicLong();
        BaseSubscriber<RawEvent> slow = new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                s.request(1);
            }

            @Override
            protected void hookOnNext(RawEvent e) {
                if (e instanceof RawEvent.Chunk c) {
                    received.addAndGet(c.bytes().length);
                }
            }
        };
        yes.events().subscribe(slow);
        long pid = yes.started().block(T);
        // the pipe fills, the window fills: `yes` blocks in write() while another command runs to its end
        for (int i = 0; i < 3; i++) {
            List<RawEvent> other = agent.processes()
                    .spawn(AgentSpawn.of("echo", "still here"))
                    .events()
                    .collectList()
                    .block(T);
            assertThat(stdout(other)).isEqualTo("still here\n");
        }
        assertThat(ProcessHandle.of(pid))
                .hasValueSatisfying(h -> assertThat(h.isAlive()).isTrue());
        String wchan = Files.readString(Path.of("/proc/" + pid + "/wchan"));
        assertThat(received.get()).isLessThanOrEqualTo(64 * 1024);
        // cancelling closes the stream: the agent kills the group
        slow.dispose();
        long deadline = System.nanoTime() + T.toNanos();
        while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                .as("yes killed after cancel (was blocked in %s)", wchan)
                .isFalse();
    }

    @Test
    void files() {
        String f = dir.resolve("sub/f.txt").toString();
        AgentFileInfo written = agent.files()
                .write(
                        f,
                        04755,
                        true,
                        Flux.just(
                                ByteBuffer.wrap("hello ".getBytes(StandardCharsets.UTF_8)),
                                ByteBuffer.wrap(new byte[200_000])))
                .block(T);
        assertThat(written.type()).isEqualTo(AgentFileInfo.FILE);
        assertThat(written.size()).isEqualTo(200_006);
        assertThat(written.mode()).as("mode with the setuid bit").isEqualTo(04755);
        AgentFileInfo stat = agent.files().stat(f).block(T);
        assertThat(stat.size()).isEqualTo(200_006);
        assertThat(stat.toFileInfo().name()).isEqualTo("f.txt");
        long total = agent.files()
                .read(f, 0, -1)
                .map(ByteBuffer::remaining)
                .reduce(0, Integer::sum)
                .block(T);
        assertThat(total).isEqualTo(200_006);
        byte[] head = new byte[5];
        agent.files().read(f, 0, 5).next().block(T).get(head);
        assertThat(new String(head, StandardCharsets.UTF_8)).isEqualTo("hello");
        agent.files().mkdir(dir.resolve("sub/d/e").toString(), 0755, true).block(T);
        List<String> names = agent.files()
                .list(dir.toString(), 3)
                .map(AgentFileInfo::path)
                .collectList()
                .block(T);
        assertThat(names).contains(f, dir.resolve("sub/d/e").toString());
        agent.files().move(f, dir.resolve("g.txt").toString()).block(T);
        StepVerifier.create(agent.files().stat(f))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(AgentErrnoException.class);
                    FileOperationException fe = ((AgentErrnoException) e).toFileOperationException(f);
                    assertThat(fe.reason()).isEqualTo(FileOperationException.Reason.NOT_FOUND);
                })
                .verify(T);
        StepVerifier.create(agent.files().remove(dir.resolve("sub").toString(), false))
                .expectErrorSatisfies(e -> assertThat(((AgentErrnoException) e).reason())
                        .isEqualTo(FileOperationException.Reason.DIRECTORY_NOT_EMPTY))
                .verify(T);
        AgentFileInfo empty = agent.files()
                .write(dir.resolve("empty").toString(), 0600, false, Flux.empty())
                .block(T);
        assertThat(empty.size()).isZero();
        assertThat(empty.mode()).isEqualTo(0600);
        agent.files().remove(dir.resolve("sub").toString(), true).block(T);
        assertThat(Files.exists(dir.resolve("sub"))).isFalse();
    }

    @Test
    void aWatchIsLiveAfterReady() {
        StepVerifier.create(agent.files().watch(dir.toString(), true))
                .expectNext(new AgentWatchEvent(AgentWatchEvent.Kind.READY, dir.toString()))
                .then(() -> agent.files()
                        .write(dir.resolve("new.txt").toString(), 0644, false, Flux.just(ByteBuffer.wrap(new byte[] {1
                        })))
                        .block(T))
                .expectNextMatches(e -> e.path().equals(dir.resolve("new.txt").toString())
                        && (e.kind() == AgentWatchEvent.Kind.CREATED || e.kind() == AgentWatchEvent.Kind.MODIFIED))
                .thenCancel()
                .verify(T);
    }

    @Test
    void backgroundProcessesAndAttach() {
        AgentStarted started = agent.processes()
                .spawnBackground(
                        AgentSpawn.of("sh", "-c", "echo one; echo two >&2; read x; echo got $x")
                                .withStdin(Flux.empty()),
                        65536,
                        false)
                .block(T);
        assertThat(started.id()).isNotEmpty();
        assertThat(agent.processes()
                        .procs()
                        .map(AgentProcInfo::id)
                        .collectList()
                        .block(T))
                .contains(started.id());
        List<AgentAttachEvent> events = new CopyOnWriteArrayList<>();
        StepVerifier.create(agent.processes().attach(started.id(), 0, 0, true))
                .recordWith(() -> events)
                .expectNextMatches(e -> e instanceof AgentAttachEvent.Started s && s.pid() == started.pid())
                .then(() -> agent.processes()
                        .input(started.id(), "x\n".getBytes(StandardCharsets.UTF_8))
                        .block(T))
                .thenConsumeWhile(e -> !(e instanceof AgentAttachEvent.Exit))
                .expectNextMatches(e -> e instanceof AgentAttachEvent.Exit x && x.status() == 0 && !x.signaled())
                .expectComplete()
                .verify(T);
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        for (AgentAttachEvent e : events) {
            if (e instanceof AgentAttachEvent.Output o) {
                (o.fd() == 1 ? out : err).append(new String(o.bytes(), StandardCharsets.UTF_8));
            }
        }
        assertThat(out.toString()).isEqualTo("one\ngot x\n");
        assertThat(err.toString()).isEqualTo("two\n");
        // from an offset: what is left of stdout
        List<AgentAttachEvent> tail = agent.processes()
                .attach(started.id(), 4, 4, false)
                .collectList()
                .block(T);
        assertThat(tail)
                .anySatisfy(e -> assertThat(e)
                        .isInstanceOfSatisfying(
                                AgentAttachEvent.Output.class,
                                o -> assertThat(o.offset()).isEqualTo(4)));
        StepVerifier.create(agent.processes().attach("p999999", 0, 0, false))
                .expectError(ProcessNotFoundException.class)
                .verify(T);
    }

    @Test
    void anOffsetTheRingDroppedIsOffsetUnavailable() {
        AgentStarted started = agent.processes()
                .spawnBackground(AgentSpawn.of("head", "-c", "300000", "/dev/zero"), 65536, false)
                .block(T);
        // wait for its end: a follow attach from the ring's current start would do, but the end is simpler
        List<AgentProcInfo> procs;
        long deadline = System.nanoTime() + T.toNanos();
        do {
            procs = agent.processes()
                    .procs()
                    .filter(p -> p.id().equals(started.id()))
                    .collectList()
                    .block(T);
        } while (procs.get(0).running() && System.nanoTime() < deadline);
        AgentProcInfo info = procs.get(0);
        assertThat(info.outEnd()).isEqualTo(300_000);
        StepVerifier.create(agent.processes().attach(started.id(), 0, 0, false))
                .expectErrorSatisfies(e -> {
                    assertThat(e).isInstanceOf(OffsetUnavailableException.class);
                    OffsetUnavailableException o = (OffsetUnavailableException) e;
                    assertThat(o.firstAvailable()).isEqualTo(info.outStart());
                    assertThat(o.end()).isEqualTo(300_000);
                })
                .verify(T);
    }

    @Test
    void manyStreamsAtOnce() {
        List<Flux<String>> all = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            all.add(agent.processes()
                    .spawn(AgentSpawn.of("echo", "n" + i))
                    .events()
                    .collectList()
                    .map(RealAgentTest::stdout)
                    .flux());
        }
        List<String> outs = Flux.merge(all).collectList().block(T);
        assertThat(outs).hasSize(50).allMatch(s -> s.startsWith("n"));
    }
}
