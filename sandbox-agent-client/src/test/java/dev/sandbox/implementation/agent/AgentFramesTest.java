package dev.sandbox.implementation.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every frame type round-trips through its encoder and the incremental decoder; every malformation is refused. */
class AgentFramesTest {
    private static final AgentFileInfo INFO =
            new AgentFileInfo(AgentFileInfo.SYMLINK, 04755, 1000, 100, 12, 1_700_000_000_123_456_789L, "/w/l", "t");

    static List<ClientFrame> clientFrames() {
        return List.of(
                new ClientFrame.Hello(0, 1, 1, "java"),
                new ClientFrame.Ping(0, -2),
                new ClientFrame.Timers(3, 1_700_000_000_000L, 60_000),
                new ClientFrame.Spawn(
                        5, 3, 80, 24, 262144, 65536, 1, "/w", List.of("sh", "-c", "echo é"), List.of("A=1", "B=")),
                new ClientFrame.Eof(5),
                new ClientFrame.Signal(5, 15),
                new ClientFrame.Resize(5, 120, 40),
                new ClientFrame.Credit(5, 2, 0xFFFF_FFFFL),
                new ClientFrame.Close(5),
                new ClientFrame.Read(6, "/etc/hosts", 10, -1, 262144),
                new ClientFrame.Write(7, "/w/x", 0644, 1),
                new ClientFrame.ListDir(8, "/w", 3, 1000),
                new ClientFrame.Stat(9, "/w"),
                new ClientFrame.Mkdir(10, "/w/d", 0755, true),
                new ClientFrame.Remove(11, "/w/d", false),
                new ClientFrame.Move(12, "/a", "/b"),
                new ClientFrame.Watch(13, "/w", true, 4096),
                new ClientFrame.Symlink(16, "/w/l", "../t é"),
                new ClientFrame.Chmod(17, "/w/x", 04755),
                new ClientFrame.Procs(14, 99),
                new ClientFrame.Attach(15, "p1", 5, 6, true, 1 << 18),
                new ClientFrame.Input(0x7FFF_FFFF, "p2", 0, new byte[] {1, 2, 3}));
    }

    static List<AgentFrame> agentFrames() {
        return List.of(
                new AgentFrame.Ok(1, null),
                new AgentFrame.Ok(2, INFO),
                new AgentFrame.Hello(0, new AgentHello(1, "sandbox-agent 0.1", 1, 0, 60_000, 1_700_000_000_000L)),
                new AgentFrame.Pong(0, Long.MIN_VALUE),
                new AgentFrame.Credit(3, 0, 65536),
                new AgentFrame.Started(4, 4242, "p7", 262144),
                new AgentFrame.Exit(4, -1, true, true, 123),
                new AgentFrame.End(6),
                new AgentFrame.Entry(7, INFO),
                new AgentFrame.Event(8, 4, "/w/é"),
                new AgentFrame.Ready(9, 0),
                new AgentFrame.Proc(
                        10, new AgentProcInfo("p1", 1, 77, 5, true, 0, false, List.of("sleep", "9"), 0, 10, 3, 4)),
                new AgentFrame.Error(11, 2, "no such file: /x"));
    }

    @Test
    void everyClientFrameRoundTrips() {
        List<ByteBuffer> encoded =
                clientFrames().stream().map(FrameEncoder::encode).toList();
        List<ClientFrame> decoded = decodeAll(FrameDecoder.ofClient(), concat(encoded), 1 << 20);
        assertThat(decoded).usingRecursiveFieldByFieldElementComparator().isEqualTo(clientFrames());
        // DATA carries bytes: compared by content
        byte[] data = new byte[65536];
        Arrays.fill(data, (byte) 7);
        ClientFrame.Data back = (ClientFrame.Data)
                decodeAll(FrameDecoder.ofClient(), FrameEncoder.encode(new ClientFrame.Data(1, data)), 100)
                        .get(0);
        assertThat(back.bytes()).isEqualTo(data);
    }

    @Test
    void everyAgentFrameRoundTripsWhateverTheBufferBoundaries() {
        List<ByteBuffer> encoded =
                agentFrames().stream().map(FrameEncoder::encode).toList();
        ByteBuffer all = concat(encoded);
        for (int piece : new int[] {1, 2, 3, 7, 9, 10, 64, 1 << 20}) {
            List<AgentFrame> decoded = decodeAll(FrameDecoder.ofAgent(), all.duplicate(), piece);
            assertThat(decoded)
                    .as("pieces of %d bytes", piece)
                    .usingRecursiveFieldByFieldElementComparator()
                    .isEqualTo(agentFrames());
        }
        byte[] out = "hello".getBytes(StandardCharsets.UTF_8);
        AgentFrame.Output o = (AgentFrame.Output)
                decodeAll(FrameDecoder.ofAgent(), FrameEncoder.encode(new AgentFrame.Output(3, 2, 99, out)), 4)
                        .get(0);
        assertThat(o.fd()).isEqualTo(2);
        assertThat(o.offset()).isEqualTo(99);
        assertThat(o.bytes()).isEqualTo(out);
        AgentFrame.Data d = (AgentFrame.Data)
                decodeAll(FrameDecoder.ofAgent(), FrameEncoder.encode(new AgentFrame.Data(3, new byte[65536])), 1000)
                        .get(0);
        assertThat(d.bytes()).hasSize(65536);
    }

    @Test
    void theDecoderHoldsAtMostOneFrame() {
        FrameDecoder<AgentFrame> d = FrameDecoder.ofAgent();
        ByteBuffer frame = FrameEncoder.encode(new AgentFrame.Data(3, new byte[65536]));
        List<AgentFrame> out = new ArrayList<>();
        d.feed(frame.slice(0, 40_000), out::add);
        assertThat(d.held()).isEqualTo(40_000);
        d.feed(frame.slice(40_000, frame.remaining() - 40_000), out::add);
        assertThat(d.held()).isZero();
        assertThat(out).hasSize(1);
    }

    @Test
    void fieldsBeyondTheirLimitsAreNotEncoded() {
        assertThatThrownBy(() -> FrameEncoder.encode(new ClientFrame.Data(1, new byte[65537])))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("65537");
        assertThatThrownBy(() -> FrameEncoder.encode(new ClientFrame.Stat(1, "x".repeat(1024 * 1024 + 1))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("path");
        List<String> env = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            env.add("V" + i + "=" + "x".repeat(1000 * 1000));
        }
        assertThatThrownBy(
                        () -> FrameEncoder.encode(new ClientFrame.Spawn(1, 0, 0, 0, 1, 0, 0, "", List.of("true"), env)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("SPAWN on stream 1")
                .hasMessageContaining("2097152");
    }

    @Test
    void anUnknownTypeIsRefusedFromItsHeader() {
        assertRefused(header(0, 0x7f, 3), "type 0x7f on stream 3");
        // a client type coming from the agent is unknown too
        assertRefused(header(0, AgentFrames.SPAWN, 1), "type 0x10 on stream 1");
    }

    @Test
    void aLengthBeyondTheLimitIsRefusedBeforeAnyPayload() {
        assertRefused(header(65_601, AgentFrames.A_OUTPUT, 3), "length 65601, beyond 65600");
        assertRefused(header(-1, AgentFrames.A_DATA, 3), "length 4294967295");
    }

    @Test
    void malformedPayloadsAreRefusedNamingTheField() {
        // a str longer than its frame
        assertRefused(
                frame(
                        AgentFrames.A_EVENT,
                        4,
                        ByteBuffer.allocate(9).put((byte) 1).putInt(100).putInt(0)),
                "path length 100 beyond the frame");
        // bytes left over
        assertRefused(frame(AgentFrames.A_END, 4, ByteBuffer.allocate(1)), "1 bytes left over");
        assertRefused(frame(AgentFrames.A_PONG, 0, ByteBuffer.allocate(9)), "1 bytes left over");
        // too short
        assertRefused(frame(AgentFrames.A_EXIT, 4, ByteBuffer.allocate(5)), "too short for oom_killed");
        // a strs count beyond what the frame can hold
        ByteBuffer proc = ByteBuffer.allocate(40)
                .putInt(2)
                .put("p1".getBytes())
                .put((byte) 0)
                .putInt(1)
                .putLong(0)
                .put((byte) 1)
                .putInt(0)
                .put((byte) 0)
                .putInt(70_000);
        assertRefused(frame(AgentFrames.A_PROC, 4, proc), "argv count 70000 beyond the limit 65536");
        // an OUTPUT fd that is neither stdout nor stderr
        assertRefused(frame(AgentFrames.A_OUTPUT, 4, ByteBuffer.allocate(9).put((byte) 3)), "fd 3");
        // flags that are not booleans, unknown kinds
        assertRefused(
                frame(AgentFrames.A_EXIT, 4, ByteBuffer.allocate(14).putInt(0).put((byte) 2)), "signaled is 2");
        assertRefused(frame(AgentFrames.A_EVENT, 4, ByteBuffer.allocate(5).put((byte) 9)), "kind 9 unknown");
        ByteBuffer info = ByteBuffer.allocate(41).put((byte) 1).putInt(010000);
        assertRefused(frame(AgentFrames.A_ENTRY, 4, info), "mode 10000 beyond 07777");
    }

    private static ByteBuffer header(int length, int type, int stream) {
        return ByteBuffer.allocate(9)
                .putInt(length)
                .put((byte) type)
                .putInt(stream)
                .flip();
    }

    private static ByteBuffer frame(int type, int stream, ByteBuffer payload) {
        payload.position(payload.capacity()).flip();
        ByteBuffer b = ByteBuffer.allocate(9 + payload.remaining());
        b.putInt(payload.remaining()).put((byte) type).putInt(stream).put(payload);
        return b.flip();
    }

    private static void assertRefused(ByteBuffer bytes, String message) {
        for (int piece : new int[] {1, 5, 1 << 20}) {
            assertThatThrownBy(() -> decodeAll(FrameDecoder.ofAgent(), bytes.duplicate(), piece))
                    .isInstanceOf(AgentProtocolException.class)
                    .hasMessageContaining(message);
        }
    }

    static <T> List<T> decodeAll(FrameDecoder<T> d, ByteBuffer all, int piece) {
        List<T> out = new ArrayList<>();
        while (all.hasRemaining()) {
            int n = Math.min(piece, all.remaining());
            ByteBuffer slice = all.slice(all.position(), n);
            all.position(all.position() + n);
            d.feed(slice, out::add);
            assertThat(slice.hasRemaining()).isFalse();
        }
        assertThat(d.held()).isZero();
        return out;
    }

    static ByteBuffer concat(List<ByteBuffer> parts) {
        int size = parts.stream().mapToInt(ByteBuffer::remaining).sum();
        ByteBuffer all = ByteBuffer.allocate(size);
        parts.forEach(p -> all.put(p.duplicate()));
        return all.flip();
    }
}
