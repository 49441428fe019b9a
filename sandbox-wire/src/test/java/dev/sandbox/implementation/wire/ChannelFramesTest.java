package dev.sandbox.implementation.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The command channel's frames: each one written and read back, and what a hostile peer may send refused. */
class ChannelFramesTest {
    private static final int MAX = 1024;

    private static ChannelFrames.Frame fromClient(byte[] b) {
        return ChannelFrames.decode(b, 0, MAX, true);
    }

    private static ChannelFrames.Frame fromServer(byte[] b) {
        return ChannelFrames.decode(b, 0, MAX, false);
    }

    private static String payload(ChannelFrames.Frame f) {
        return new String(f.bytes(), f.offset(), f.length(), StandardCharsets.UTF_8);
    }

    @Test
    void anOpenCarriesTheSessionAndTheExecBody() {
        byte[] body = "{\"command\":[\"echo\",\"hi\"]}".getBytes(StandardCharsets.UTF_8);
        for (byte type : new byte[] {ChannelFrames.OPEN_EXEC, ChannelFrames.OPEN_RUN}) {
            byte[] wire = ChannelFrames.open(type, 7, "séance-1", body);
            ChannelFrames.Frame f = fromClient(wire);
            assertThat(f.type()).isEqualTo(type);
            assertThat(f.stream()).isEqualTo(7);
            assertThat(f.end()).isEqualTo(wire.length);
            assertThat(ChannelFrames.openSession(f)).isEqualTo("séance-1");
            int from = ChannelFrames.openBodyOffset(f);
            assertThat(new String(wire, from, f.end() - from, StandardCharsets.UTF_8))
                    .isEqualTo("{\"command\":[\"echo\",\"hi\"]}");
        }
    }

    @Test
    void aResumeCarriesTheSessionTheOffsetsAndTheExecId() {
        ChannelFrames.Frame f = fromClient(ChannelFrames.resume(9, "s-1", "0123abcd", 77, -1));
        assertThat(f.type()).isEqualTo(ChannelFrames.RESUME_EXEC);
        assertThat(f.stream()).isEqualTo(9);
        assertThat(ChannelFrames.openSession(f)).isEqualTo("s-1");
        assertThat(ChannelFrames.resumeStdout(f)).isEqualTo(77);
        assertThat(ChannelFrames.resumeStderr(f)).isEqualTo(-1);
        assertThat(ChannelFrames.resumeExecId(f)).isEqualTo("0123abcd");
    }

    @Test
    void aResumeWithoutAnExecIdOrWithABadOffsetIsRefused() {
        byte[] noExecId = ChannelFrames.open(ChannelFrames.RESUME_EXEC, 1, "s", new byte[16]);
        assertThatThrownBy(() -> fromClient(noExecId))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("two offsets and an exec id");
        byte[] badOffset = ChannelFrames.resume(1, "s", "e", -5, 0);
        assertThatThrownBy(() -> fromClient(badOffset))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("-1 or more");
        assertThatThrownBy(() -> ChannelFrames.resume(1, "s", "x".repeat(129), 0, 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void anAckCarriesBothOffsets() {
        ChannelFrames.Frame f = fromClient(ChannelFrames.ack(Integer.MAX_VALUE, 123_456_789_012L, -1));
        assertThat(f.type()).isEqualTo(ChannelFrames.ACK);
        assertThat(f.stream()).isEqualTo(Integer.MAX_VALUE);
        assertThat(ChannelFrames.ackStdout(f)).isEqualTo(123_456_789_012L);
        assertThat(ChannelFrames.ackStderr(f)).isEqualTo(-1);
    }

    @Test
    void aCancelIsAHeaderAlone() {
        byte[] wire = ChannelFrames.cancel(3);
        assertThat(wire).hasSize(ChannelFrames.HEADER);
        ChannelFrames.Frame f = fromClient(wire);
        assertThat(f.type()).isEqualTo(ChannelFrames.CANCEL);
        assertThat(f.stream()).isEqualTo(3);
        assertThat(f.length()).isZero();
    }

    @Test
    void theServersFramesRoundTrip() {
        ChannelFrames.Frame opened = fromServer(ChannelFrames.opened(5, 1 << 20));
        assertThat(opened.type()).isEqualTo(ChannelFrames.OPENED);
        assertThat(ChannelFrames.openedWindow(opened)).isEqualTo(1 << 20);

        byte[] json = "{\"type\":\"exit\",\"code\":0}".getBytes(StandardCharsets.UTF_8);
        byte[] header = ChannelFrames.header(ChannelFrames.EVENT, 5, json.length);
        byte[] event = Arrays.copyOf(header, header.length + json.length);
        System.arraycopy(json, 0, event, header.length, json.length);
        ChannelFrames.Frame e = fromServer(event);
        assertThat(e.type()).isEqualTo(ChannelFrames.EVENT);
        assertThat(payload(e)).isEqualTo("{\"type\":\"exit\",\"code\":0}");

        ChannelFrames.Frame result = fromServer(ChannelFrames.frame(ChannelFrames.RESULT, 5, json));
        assertThat(result.type()).isEqualTo(ChannelFrames.RESULT);
        assertThat(payload(result)).isEqualTo("{\"type\":\"exit\",\"code\":0}");

        byte[] error = "{\"error\":{\"type\":\"SessionNotFoundException\"}}".getBytes(StandardCharsets.UTF_8);
        ChannelFrames.Frame err = fromServer(ChannelFrames.error(5, 404, error));
        assertThat(err.type()).isEqualTo(ChannelFrames.ERROR);
        assertThat(ChannelFrames.errorStatus(err)).isEqualTo(404);
        assertThat(new String(ChannelFrames.errorBody(err), StandardCharsets.UTF_8))
                .isEqualTo("{\"error\":{\"type\":\"SessionNotFoundException\"}}");
    }

    @Test
    void framesFollowEachOtherInOneMessage() {
        byte[] a = ChannelFrames.ack(1, 10, 20);
        byte[] b = ChannelFrames.cancel(2);
        byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        ChannelFrames.Frame first = fromClient(both);
        ChannelFrames.Frame second = ChannelFrames.decode(both, first.end(), MAX, true);
        assertThat(first.stream()).isEqualTo(1);
        assertThat(second.type()).isEqualTo(ChannelFrames.CANCEL);
        assertThat(second.end()).isEqualTo(both.length);
    }

    @Test
    void aTruncatedFrameIsRefused() {
        byte[] ack = ChannelFrames.ack(1, 1, 1);
        assertThatThrownBy(() -> fromClient(Arrays.copyOf(ack, 5)))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("9-byte header");
        assertThatThrownBy(() -> fromClient(Arrays.copyOf(ack, ack.length - 1)))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("says 16 payload bytes but 15 follow");
        byte[] open = ChannelFrames.open(ChannelFrames.OPEN_RUN, 1, "s", new byte[0]);
        open[ChannelFrames.HEADER + 1] = 9; // a session id longer than the payload
        assertThatThrownBy(() -> fromClient(open))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("session id");
    }

    @Test
    void anOversizedFrameIsRefusedBeforeItsPayloadIsRead() {
        byte[] header = ChannelFrames.header(ChannelFrames.OPEN_EXEC, 1, Integer.MAX_VALUE);
        assertThatThrownBy(() -> fromClient(header))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("at most " + MAX + " bytes, got " + Integer.MAX_VALUE);
        byte[] huge = ChannelFrames.header(ChannelFrames.EVENT, 1, 0);
        huge[5] = (byte) 0xff; // 4 GiB - something: read unsigned
        assertThatThrownBy(() -> fromServer(huge))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("at most " + MAX);
    }

    @Test
    void anUnknownTypeOrOneOfTheOtherSideIsRefused() {
        byte[] unknown = ChannelFrames.header((byte) 0x7f, 1, 0);
        assertThatThrownBy(() -> fromClient(unknown))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("unknown channel frame type 127");
        assertThatThrownBy(() -> fromClient(ChannelFrames.opened(1, 10)))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("from the server to the client");
        assertThatThrownBy(() -> fromServer(ChannelFrames.cancel(1)))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("from the client to the server");
    }

    @Test
    void aBadStreamIdIsRefused() {
        byte[] zero = ChannelFrames.cancel(1);
        zero[4] = 0; // stream 0
        assertThatThrownBy(() -> fromClient(zero))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("stream must be 1 to 2147483647, got 0");
        byte[] high = ChannelFrames.cancel(1);
        high[1] = (byte) 0x80; // 2^31 + 1, past a signed int
        assertThatThrownBy(() -> fromClient(high))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("got 2147483649");
        assertThatThrownBy(() -> ChannelFrames.cancel(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aPayloadOfTheWrongShapeIsRefused() {
        byte[] ack = ChannelFrames.ack(1, -2, 0);
        assertThatThrownBy(() -> fromClient(ack))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("-1 or more");
        byte[] cancelWithPayload = ChannelFrames.frame(ChannelFrames.CANCEL, 1, new byte[] {1});
        assertThatThrownBy(() -> fromClient(cancelWithPayload))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("0-byte payload, got 1");
        byte[] emptyOpen = ChannelFrames.frame(ChannelFrames.OPEN_EXEC, 1, new byte[0]);
        assertThatThrownBy(() -> fromClient(emptyOpen))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("needs a session id");
        byte[] noId = ChannelFrames.frame(ChannelFrames.OPEN_EXEC, 1, new byte[] {0, 0, '{', '}'});
        assertThatThrownBy(() -> fromClient(noId))
                .isInstanceOf(ChannelFrames.MalformedFrameException.class)
                .hasMessageContaining("session id must be 1 to 256 bytes");
    }

    @Test
    void everyByteStringEitherDecodesOrIsRefusedWithTheTypedError() {
        java.util.Random r = new java.util.Random(42);
        for (int i = 0; i < 20_000; i++) {
            byte[] b = new byte[r.nextInt(40)];
            r.nextBytes(b);
            if (b.length > 8 && r.nextBoolean()) {
                b[1] = 0; // small stream ids and lengths, so that some frames are whole
                b[5] = 0;
                b[6] = 0;
                b[7] = 0;
            }
            for (boolean client : new boolean[] {true, false}) {
                try {
                    ChannelFrames.Frame f = ChannelFrames.decode(b, 0, MAX, client);
                    assertThat(f.end()).isLessThanOrEqualTo(b.length);
                    assertThat(f.stream()).isPositive();
                } catch (ChannelFrames.MalformedFrameException expected) {
                    assertThat(expected.getMessage()).isNotBlank();
                }
            }
        }
    }
}
