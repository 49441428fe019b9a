package dev.sandbox.implementation.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * {@code LISTEN}'s connections against an in-JVM agent that breaks the protocol: an {@code ACCEPTED} on a client id
 * or on an open one ends the connection with a typed error; one for a listener the client closed is closed at once;
 * an accepted connection's bytes stay within their credit and flow both ways.
 */
class HostileListenTest {
    private static final Duration T = Duration.ofSeconds(5);
    private static final int AGENT_ID = 0x8000_0000; // 2^31, the agent's first id

    private static AgentConnection connect(FakeAgent agent) {
        return AgentConnection.open(agent, AgentConnection.Options.defaults().withSessionId("s1"))
                .block(T);
    }

    @Test
    void anAcceptedConnectionCarriesBytesBothWaysWithinItsCredit() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        List<AgentListener.Accepted> accepted = new CopyOnWriteArrayList<>();
        boolean[] listening = {false};
        Disposable d = c.net().listen(8080, 4, () -> listening[0] = true).subscribe(accepted::add);
        ClientFrame.Listen l = agent.next(ClientFrame.Listen.class);
        assertThat(l.port()).isEqualTo(8080);
        assertThat(l.maxConns()).isEqualTo(4);
        agent.send(new AgentFrame.Ready(l.stream(), 0));
        agent.send(new AgentFrame.Accepted(AGENT_ID, l.stream(), 40000, 1024));
        c.ping().block(T);
        assertThat(listening[0]).isTrue();
        assertThat(accepted).hasSize(1);
        AgentListener.Accepted a = accepted.get(0);
        assertThat(a.peerPort()).isEqualTo(40000);
        a.send(Flux.just(ByteBuffer.wrap("to the sandbox".getBytes(StandardCharsets.US_ASCII))));
        ClientFrame.Data data = agent.next(ClientFrame.Data.class);
        assertThat(data.stream()).isEqualTo(AGENT_ID);
        assertThat(new String(data.bytes(), StandardCharsets.US_ASCII)).isEqualTo("to the sandbox");
        assertThat(agent.next(ClientFrame.Eof.class).stream()).isEqualTo(AGENT_ID);
        agent.send(new AgentFrame.Data(AGENT_ID, "from the sandbox".getBytes(StandardCharsets.US_ASCII)));
        agent.send(new AgentFrame.End(AGENT_ID));
        String got =
                a.received().map(b -> StandardCharsets.US_ASCII.decode(b).toString()).collectList().block(T).stream()
                        .reduce("", String::concat);
        assertThat(got).isEqualTo("from the sandbox");
        d.dispose();
        assertThat(agent.next(ClientFrame.Close.class).stream()).isEqualTo(l.stream());
        assertThat(c.isClosed()).isFalse();
    }

    @Test
    void anAcceptedOnAClientIdBreaksTheConnection() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        Disposable d = c.net().listen(8080, 4, () -> {}).subscribe(x -> {}, e -> {});
        ClientFrame.Listen l = agent.next(ClientFrame.Listen.class);
        agent.send(new AgentFrame.Ready(l.stream(), 0));
        agent.send(new AgentFrame.Accepted(77, l.stream(), 40000, 1024));
        c.onClose().block(T);
        assertThat(c.isClosed()).isTrue();
        d.dispose();
    }

    @Test
    void anAcceptedOnAnOpenStreamBreaksTheConnection() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        Disposable d = c.net().listen(8080, 4, () -> {}).subscribe(x -> {}, e -> {});
        ClientFrame.Listen l = agent.next(ClientFrame.Listen.class);
        agent.send(new AgentFrame.Ready(l.stream(), 0));
        agent.send(new AgentFrame.Accepted(AGENT_ID, l.stream(), 40000, 1024));
        agent.send(new AgentFrame.Accepted(AGENT_ID, l.stream(), 40001, 1024));
        c.onClose().block(T);
        assertThat(c.isClosed()).isTrue();
        d.dispose();
    }

    @Test
    void anAcceptedForAClosedListenerIsClosedAtOnce() throws Exception {
        FakeAgent agent = new FakeAgent();
        AgentConnection c = connect(agent);
        Disposable d = c.net().listen(8080, 4, () -> {}).subscribe(x -> {}, e -> {});
        ClientFrame.Listen l = agent.next(ClientFrame.Listen.class);
        agent.send(new AgentFrame.Ready(l.stream(), 0));
        d.dispose();
        assertThat(agent.next(ClientFrame.Close.class).stream()).isEqualTo(l.stream());
        // in flight when the listener closed
        agent.send(new AgentFrame.Accepted(AGENT_ID + 1, l.stream(), 40002, 1024));
        assertThat(agent.next(ClientFrame.Close.class).stream()).isEqualTo(AGENT_ID + 1);
        agent.send(new AgentFrame.Data(AGENT_ID + 1, new byte[10])); // after CLOSE: ignored
        c.ping().block(T);
        assertThat(c.isClosed()).isFalse();
        assertThat(c.openStreams()).isZero();
    }
}
