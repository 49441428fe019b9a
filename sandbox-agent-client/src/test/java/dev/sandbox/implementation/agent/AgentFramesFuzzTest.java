package dev.sandbox.implementation.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Jazzer on the client's decoder of agent frames ({@link FrameDecoder}: what a hostile sandbox's agent sends). The
 * bytes after the first arrive in pieces of the size the first byte gives. Each frame decodes or the decoder throws an
 * {@link AgentProtocolException}; nothing else may escape, the frames never claim more bytes than arrived, and every
 * frame decoded encodes back ({@link FrameEncoder}) to a frame that decodes to the same. Without JAZZER_FUZZ it
 * replays the kept inputs ({@code AgentFramesFuzzTestInputs/decodeAgent} in the test resources); with it (the
 * module's verify) it fuzzes for the bounded time below.
 */
class AgentFramesFuzzTest {
    @FuzzTest(maxDuration = "20s")
    void decodeAgent(byte[] input) {
        if (input.length == 0) {
            return;
        }
        int piece = (input[0] & 0xFF) == 0 ? input.length : input[0] & 0xFF;
        FrameDecoder<AgentFrame> decoder = FrameDecoder.ofAgent();
        List<AgentFrame> frames = new ArrayList<>();
        long payloadBytes = 0;
        try {
            for (int i = 1; i < input.length; i += piece) {
                ByteBuffer in = ByteBuffer.wrap(input, i, Math.min(piece, input.length - i));
                List<Integer> lengths = new ArrayList<>();
                decoder.feed(in, f -> {
                    frames.add(f);
                    lengths.add(decoder.lastLength());
                });
                assertThat(in.hasRemaining()).as("feed consumes everything").isFalse();
                for (int n : lengths) {
                    payloadBytes += n;
                }
            }
        } catch (AgentProtocolException refused) {
            assertThat(refused.getMessage()).isNotBlank();
        }
        assertThat(payloadBytes + 9L * frames.size()).isLessThanOrEqualTo(input.length - 1L);
        for (AgentFrame f : frames) {
            List<AgentFrame> again = new ArrayList<>();
            FrameDecoder.ofAgent().feed(FrameEncoder.encode(f), again::add);
            assertThat(again).usingRecursiveFieldByFieldElementComparator().containsExactly(f);
        }
    }
}
