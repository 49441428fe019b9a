package dev.sandbox.implementation.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.InvalidArgumentException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The label files in the reaper's state: what is written reads back the same, and what is read is bounded and checked
 * (the state is the daemon's, and any program with its socket can write there).
 */
class ReaperLabelsTest {
    private static byte[] archive(Object... nameTypeContent) {
        ByteArrayOutputStream tar = new ByteArrayOutputStream();
        tar.writeBytes(TarStream.directoryHeader("labels/", 0755, 0));
        for (int i = 0; i < nameTypeContent.length; i += 2) {
            byte[] content = ((String) nameTypeContent[i + 1]).getBytes(StandardCharsets.US_ASCII);
            tar.writeBytes(TarStream.fileHeader((String) nameTypeContent[i], content.length, 0644, 0));
            tar.writeBytes(content);
            tar.writeBytes(new byte[TarStream.padding(content.length)]);
        }
        tar.writeBytes(TarStream.trailer());
        return tar.toByteArray();
    }

    @Test
    void labelsReadBackAsWritten() throws IOException {
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("a=b", "c=d\ne");
        labels.put("tenant", "acme \u2603");
        labels.put("empty", "");
        String text = ReaperLabels.encode(labels);
        assertThat(text).isASCII().doesNotContain("\u2603");
        Map<String, Map<String, String>> read =
                ReaperLabels.readArchive(new ByteArrayInputStream(archive("labels/s-1", text + "\n")));
        assertThat(read).containsOnlyKeys("s-1");
        assertThat(read.get("s-1")).containsExactlyEntriesOf(labels);
    }

    @Test
    void theProvidersOwnKeysBadLinesAndBadNamesAreDropped() throws IOException {
        String text = "dev.sandbox.session=other\nno-equals\n=novalue\nbad%zz=1\nok=1";
        Map<String, Map<String, String>> read = ReaperLabels.readArchive(new ByteArrayInputStream(
                archive("labels/s-1", text, "labels/../x", "ok=1", "other/s-2", "ok=1", "labels/.hidden", "ok=1")));
        assertThat(read).containsOnlyKeys("s-1");
        assertThat(read.get("s-1")).containsExactly(Map.entry("ok", "1"));
    }

    @Test
    void anOversizedFileIsSkippedAndTheRestStillRead() throws IOException {
        String big = "k=" + "v".repeat(ReaperLabels.MAX_FILE);
        Map<String, Map<String, String>> read =
                ReaperLabels.readArchive(new ByteArrayInputStream(archive("labels/big", big, "labels/small", "k=v")));
        assertThat(read).containsOnlyKeys("small");
    }

    @Test
    void garbageEndsTheReadWithoutFailingOrReadingPastTheBound() throws IOException {
        Random random = new Random(7);
        for (int i = 0; i < 200; i++) {
            byte[] junk = new byte[random.nextInt(4096)];
            random.nextBytes(junk);
            assertThat(ReaperLabels.readArchive(new ByteArrayInputStream(junk))).isEmpty();
        }
        // a header whose size field claims more than the bound: not followed
        byte[] header = TarStream.fileHeader("labels/s-1", 077777777777L, 0644, 0);
        assertThat(ReaperLabels.readArchive(new ByteArrayInputStream(header))).isEmpty();
        // an endless stream of valid headers stops at the bound
        long[] served = {0};
        InputStream endless = new InputStream() {
            private final byte[] block = TarStream.fileHeader("labels/x", 0, 0644, 0);
            private int at;

            @Override
            public int read() {
                served[0]++;
                int b = block[at] & 0xff;
                at = (at + 1) % block.length;
                return b;
            }
        };
        assertThat(ReaperLabels.readArchive(endless)).containsOnlyKeys("x");
        assertThat(served[0]).isLessThanOrEqualTo(ReaperLabels.MAX_ARCHIVE);
    }

    @Test
    void labelsTooLargeForAFileAreATypedError() {
        Map<String, String> labels = new LinkedHashMap<>();
        for (int i = 0; i < 64; i++) {
            labels.put("key" + i, "\u2603".repeat(400)); // 9 bytes each once encoded
        }
        assertThatThrownBy(() -> ReaperLabels.encode(labels))
                .isInstanceOf(InvalidArgumentException.class)
                .hasMessageContaining("labels");
    }
}
