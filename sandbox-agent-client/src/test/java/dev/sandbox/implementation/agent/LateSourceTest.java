package dev.sandbox.implementation.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import reactor.core.publisher.Flux;

/**
 * A write's content or a process's stdin whose publisher calls {@code onSubscribe} only later, on another thread, as
 * a server's request body does (reactor-netty subscribes it on the connection's event loop). The agent's credit may
 * arrive before that: the data must still be sent once the source is subscribed. (A request made before {@code
 * onSubscribe} used to be lost, and such a write through the server hung; a CI run saw it as a 30 s timeout.)
 */
class LateSourceTest {
    private static final Duration T = Duration.ofSeconds(5);
    private static final AgentFileInfo INFO =
            new AgentFileInfo(AgentFileInfo.FILE, 0644, 1000, 1000, 5, 1_700_000_000_000_000_000L, "", "f");

    /** A publisher that keeps its subscriber until the test hands it the real source. */
    private static final class Late implements Publisher<ByteBuffer> {
        final CompletableFuture<Subscriber<? super ByteBuffer>> subscriber = new CompletableFuture<>();

        @Override
        public void subscribe(Subscriber<? super ByteBuffer> s) {
            subscriber.complete(s);
        }

        /** Subscribes the held subscriber to the real bytes, on another thread. */
        void release(String text) throws Exception {
            Subscriber<? super ByteBuffer> s = subscriber.get(T.toMillis(), TimeUnit.MILLISECONDS);
            Thread t = Thread.ofPlatform()
                    .start(() -> Flux.just(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)))
                            .subscribe(s));
            t.join(T.toMillis());
        }
    }

    private static AgentConnection connect(FakeAgent agent) {
        return AgentConnection.open(agent, AgentConnection.Options.defaults().withSessionId("s1"))
                .block(T);
    }

    @Test
    void aWriteWhoseContentSubscribesAfterReadyIsSentWhole() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        Late content = new Late();
        CompletableFuture<AgentFileInfo> written =
                c.files().write("/w/f", 0644, true, content).toFuture();
        ClientFrame.Write w = agent.next(ClientFrame.Write.class);
        agent.send(new AgentFrame.Ready(w.stream(), 1 << 20));
        c.ping().block(T); // READY has been handled, its credit is there
        content.release("hello");

        ClientFrame.Data data = agent.next(ClientFrame.Data.class);
        assertThat(new String(data.bytes(), StandardCharsets.UTF_8)).isEqualTo("hello");
        assertThat(agent.next(ClientFrame.Eof.class).stream()).isEqualTo(w.stream());
        agent.send(new AgentFrame.Ok(w.stream(), INFO));
        assertThat(written.get(T.toMillis(), TimeUnit.MILLISECONDS)).isEqualTo(INFO);
    }

    @Test
    void stdinThatSubscribesAfterStartedIsSentWhole() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        Late stdin = new Late();
        AgentProcess p = c.processes().spawn(AgentSpawn.of("cat").withStdin(stdin));
        p.events().subscribe();
        ClientFrame.Spawn spawn = agent.next(ClientFrame.Spawn.class);
        agent.send(new AgentFrame.Started(spawn.stream(), 7, "", 1 << 20));
        c.ping().block(T);
        stdin.release("typed");

        ClientFrame.Data data = agent.next(ClientFrame.Data.class);
        assertThat(new String(data.bytes(), StandardCharsets.UTF_8)).isEqualTo("typed");
        assertThat(agent.next(ClientFrame.Eof.class).stream()).isEqualTo(spawn.stream());
    }
}
