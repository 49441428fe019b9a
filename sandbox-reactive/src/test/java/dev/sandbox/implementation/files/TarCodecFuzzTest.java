package dev.sandbox.implementation.files;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.sandbox.FileOperationException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import reactor.core.publisher.Flux;

/**
 * Jazzer on the tar decoder: an archive a hostile sandbox sends, cut in pieces of the size the first byte gives. It
 * decodes, or fails with a {@link FileOperationException}; nothing else may escape, and the content it hands out is
 * never more than the archive held. Without JAZZER_FUZZ it replays the kept inputs
 * ({@code TarCodecFuzzTestInputs/decode} in the test resources); with it (the module's verify) it fuzzes for the
 * bounded time below.
 */
class TarCodecFuzzTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @FuzzTest(maxDuration = "20s")
    void decode(byte[] input) {
        if (input.length == 0) {
            return;
        }
        int piece = (input[0] & 0xFF) == 0 ? input.length : input[0] & 0xFF;
        List<ByteBuffer> pieces = new ArrayList<>();
        for (int i = 1; i < input.length; i += piece) {
            pieces.add(
                    ByteBuffer.wrap(input, i, Math.min(piece, input.length - i)).asReadOnlyBuffer());
        }
        List<TreeItem> items;
        try {
            items = TarCodec.decode(Flux.fromIterable(pieces)).collectList().block(WAIT);
        } catch (FileOperationException refused) {
            assertThat(refused.getMessage()).isNotBlank();
            return;
        }
        assertThat(items).isNotNull();
        long content = 0;
        for (TreeItem item : items) {
            if (item instanceof TreeItem.Data d) {
                content += d.bytes().remaining();
            } else if (item instanceof TreeItem.Entry e) {
                assertThat(e.name()).isNotEmpty();
                assertThat(e.size()).isNotNegative();
            }
        }
        assertThat(content).isLessThanOrEqualTo(input.length);
    }
}
