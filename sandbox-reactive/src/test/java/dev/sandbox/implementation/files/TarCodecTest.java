package dev.sandbox.implementation.files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sandbox.FileOperationException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/** The tar codec against archives a hostile sandbox (or a broken peer) could send. */
class TarCodecTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    /** An archive built block by block. */
    private static final class Archive {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Archive entry(String name, char type, byte[] content, String link) {
            out.writeBytes(TarCodec.header(name, content.length, 0644, type, link));
            out.writeBytes(content);
            out.writeBytes(new byte[TarCodec.padding(content.length)]);
            return this;
        }

        Archive file(String name, String content) {
            return entry(name, '0', content.getBytes(StandardCharsets.UTF_8), "");
        }

        Archive pax(String... records) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            for (int i = 0; i < records.length; i += 2) {
                body.writeBytes(TarCodec.paxRecord(records[i], records[i + 1]));
            }
            return entry("pax", 'x', body.toByteArray(), "");
        }

        Archive raw(byte[] block) {
            out.writeBytes(block);
            return this;
        }

        Archive end() {
            out.writeBytes(new byte[1024]);
            return this;
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }

    /** Decodes, feeding the archive in pieces of 7 bytes so that every state meets a split. */
    private static List<TreeItem> decode(byte[] archive) {
        List<ByteBuffer> pieces = new ArrayList<>();
        for (int i = 0; i < archive.length; i += 7) {
            pieces.add(ByteBuffer.wrap(archive, i, Math.min(7, archive.length - i)));
        }
        return TarCodec.decode(Flux.fromIterable(pieces)).collectList().block(WAIT);
    }

    private static FileOperationException failure(byte[] archive) {
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(() -> decode(archive));
        assertThat(t).isInstanceOf(FileOperationException.class);
        return (FileOperationException) t;
    }

    private static void refused(byte[] archive, String shownName) {
        FileOperationException e = failure(archive);
        assertThat(e.reason()).isEqualTo(FileOperationException.Reason.PERMISSION_DENIED);
        assertThat(e.path()).isEqualTo(shownName);
        assertThat(e).hasMessageContaining(shownName);
    }

    @Test
    void encodedTreesDecodeToTheSameItems() {
        String longName = "d/" + "n".repeat(150) + "/é.txt";
        List<TreeItem> items = List.of(
                new TreeItem.Entry("d", TreeItem.Kind.DIRECTORY, 0755, 0, ""),
                new TreeItem.Entry("d/" + "n".repeat(150), TreeItem.Kind.DIRECTORY, 0700, 0, ""),
                new TreeItem.Entry(longName, TreeItem.Kind.FILE, 0755, 3, ""),
                new TreeItem.Data(ByteBuffer.wrap("abc".getBytes(StandardCharsets.UTF_8))),
                new TreeItem.Entry("d/empty", TreeItem.Kind.FILE, 0600, 0, ""),
                new TreeItem.Entry("d/l", TreeItem.Kind.SYMLINK, 0777, 0, "n".repeat(150)));
        byte[] archive = TarCodec.encode(Flux.fromIterable(items))
                .reduce(new ByteArrayOutputStream(), (out, b) -> {
                    byte[] copy = new byte[b.remaining()];
                    b.get(copy);
                    out.writeBytes(copy);
                    return out;
                })
                .block(WAIT)
                .toByteArray();
        List<TreeItem> back = decode(archive);
        assertThat(back).hasSize(6);
        assertThat(back.get(2)).isEqualTo(items.get(2));
        assertThat(StandardCharsets.UTF_8
                        .decode(((TreeItem.Data) back.get(3)).bytes())
                        .toString())
                .isEqualTo("abc");
        assertThat(back.get(5)).isEqualTo(items.get(5));
        assertThat(back.get(0)).isEqualTo(items.get(0));
    }

    @Test
    void theEncoderRefusesContentThatIsNotTheAnnouncedSize() {
        Flux<TreeItem> longer = Flux.just(
                new TreeItem.Entry("f", TreeItem.Kind.FILE, 0644, 1, ""), new TreeItem.Data(ByteBuffer.allocate(2)));
        assertThatThrownBy(() -> TarCodec.encode(longer).blockLast(WAIT)).hasMessageContaining("changed size");
        Flux<TreeItem> shorter = Flux.just(new TreeItem.Entry("f", TreeItem.Kind.FILE, 0644, 5, ""));
        assertThatThrownBy(() -> TarCodec.encode(shorter).blockLast(WAIT)).hasMessageContaining("changed size");
    }

    @Test
    void namesThatClimbOrAreAbsoluteAreRefused() {
        refused(new Archive().file("../escape", "x").end().bytes(), "../escape");
        refused(new Archive().file("a/../../escape", "x").end().bytes(), "a/../../escape");
        refused(new Archive().file("/etc/passwd", "x").end().bytes(), "/etc/passwd");
        refused(new Archive().file("a//b", "x").end().bytes(), "a//b");
        // the same through a PAX path and a GNU long name, which override the header's
        refused(new Archive().pax("path", "../../x").file("ok", "x").end().bytes(), "../../x");
        refused(
                new Archive()
                        .entry("././@LongLink", 'L', "../gnu\0".getBytes(StandardCharsets.UTF_8), "")
                        .file("ok", "x")
                        .end()
                        .bytes(),
                "../gnu");
    }

    @Test
    void namesWithControlCharactersOrNulAreRefused() {
        refused(new Archive().file("bad\nname", "x").end().bytes(), "bad\\x0aname");
        refused(new Archive().file("esc\u001b[2J", "x").end().bytes(), "esc\\x1b[2J");
        refused(new Archive().pax("path", "nul\0inside").file("ok", "x").end().bytes(), "nul\\x00inside");
    }

    @Test
    void linksThatLeadOutOfTheTreeAreRefused() {
        refused(new Archive().entry("l", '2', new byte[0], "/etc").end().bytes(), "l");
        refused(new Archive().entry("l", '2', new byte[0], "..").end().bytes(), "l");
        refused(new Archive().entry("d/l", '2', new byte[0], "../..").end().bytes(), "d/l");
        // a ".." after a name climbs from wherever that name leads, which may be a link itself
        refused(new Archive().entry("d/l", '2', new byte[0], "s/../..").end().bytes(), "d/l");
        refused(
                new Archive()
                        .pax("linkpath", "/abs")
                        .entry("l", '2', new byte[0], "fine")
                        .end()
                        .bytes(),
                "l");
        // inside: allowed
        List<TreeItem> ok = decode(
                new Archive().entry("d/l", '2', new byte[0], "../x/y").end().bytes());
        assertThat(ok).containsExactly(new TreeItem.Entry("d/l", TreeItem.Kind.SYMLINK, 0644, 0, "../x/y"));
    }

    @Test
    void hardLinksDevicesAndFifosAreRefused() {
        refused(new Archive().entry("h", '1', new byte[0], "/etc/shadow").end().bytes(), "h");
        refused(new Archive().entry("c", '3', new byte[0], "").end().bytes(), "c");
        refused(new Archive().entry("b", '4', new byte[0], "").end().bytes(), "b");
        refused(new Archive().entry("p", '6', new byte[0], "").end().bytes(), "p");
        refused(new Archive().entry("s", 'S', new byte[0], "").end().bytes(), "s");
    }

    @Test
    void hugeHeadersAreRefusedBeforeTheyAreRead() {
        byte[] paxHeader = TarCodec.header("pax", 100L << 20, 0644, 'x', "");
        FileOperationException e = failure(new Archive().raw(paxHeader).bytes());
        assertThat(e.reason()).isEqualTo(FileOperationException.Reason.TOO_LARGE);
        byte[] longName = TarCodec.header("././@LongLink", 1 << 20, 0644, 'L', "");
        assertThat(failure(new Archive().raw(longName).bytes()).reason())
                .isEqualTo(FileOperationException.Reason.TOO_LARGE);
        String tooLong = "n/".repeat(3000) + "x";
        assertThat(failure(new Archive()
                                .pax("path", tooLong)
                                .file("ok", "")
                                .end()
                                .bytes())
                        .reason())
                .isEqualTo(FileOperationException.Reason.TOO_LARGE);
    }

    @Test
    void aFileOverTheTotalLimitIsRefusedFromItsHeader() {
        byte[] header = TarCodec.header("big", TreeNames.MAX_TOTAL_BYTES + 1, 0644, '0', "");
        FileOperationException e = failure(new Archive().raw(header).bytes());
        assertThat(e.reason()).isEqualTo(FileOperationException.Reason.TOO_LARGE);
        assertThat(e.path()).isEqualTo("big");
    }

    @Test
    void anEndlessStreamOfEntriesStopsAtTheEntryLimit() {
        byte[] entry = TarCodec.header("f", 0, 0644, '0', "");
        AtomicLong sent = new AtomicLong();
        // names repeat: the decoder does not keep names (the writer does); it counts
        Flux<ByteBuffer> endless = Flux.generate(sink -> {
            sent.incrementAndGet();
            sink.next(ByteBuffer.wrap(entry));
        });
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(
                () -> TarCodec.decode(endless).then().block(WAIT));
        assertThat(t).isInstanceOf(FileOperationException.class);
        assertThat(((FileOperationException) t).reason()).isEqualTo(FileOperationException.Reason.TOO_LARGE);
        assertThat(sent.get()).isLessThanOrEqualTo(TreeNames.MAX_ENTRIES + 300L);
    }

    @Test
    void anEndlessStreamOfGlobalHeadersStopsAtTheHeaderLimit() {
        byte[] global = TarCodec.header("g", 0, 0644, 'g', "");
        Flux<ByteBuffer> endless = Flux.generate(sink -> sink.next(ByteBuffer.wrap(global)));
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(
                () -> TarCodec.decode(endless).then().block(WAIT));
        assertThat(((FileOperationException) t).reason()).isEqualTo(FileOperationException.Reason.TOO_LARGE);
    }

    @Test
    void nothingAfterTheEndOfTheArchiveIsRead() {
        byte[] archive = new Archive().file("a", "x").end().bytes();
        AtomicLong extra = new AtomicLong();
        Flux<ByteBuffer> then = Flux.<ByteBuffer>generate(sink -> sink.next(ByteBuffer.allocate(512)))
                .doOnNext(b -> extra.incrementAndGet());
        List<TreeItem> items = TarCodec.decode(Flux.concat(Flux.just(ByteBuffer.wrap(archive)), then))
                .collectList()
                .block(WAIT);
        assertThat(items).hasSize(2);
        assertThat(extra.get()).isLessThan(300);
    }

    @Test
    void aTruncatedArchiveFailsNamingWhereItStopped() {
        byte[] archive = new Archive().file("a", "x".repeat(1000)).end().bytes();
        byte[] cut = java.util.Arrays.copyOf(archive, 700);
        FileOperationException e = failure(cut);
        assertThat(e.reason()).isEqualTo(FileOperationException.Reason.IO_ERROR);
        assertThat(e).hasMessageContaining("'a'").hasMessageContaining("ended early");
        assertThat(failure(new Archive().file("a", "x").bytes())).hasMessageContaining("ended early");
    }

    @Test
    void badChecksumsNegativeSizesAndBadPaxRecordsAreCorrupt() {
        byte[] h = TarCodec.header("a", 1, 0644, '0', "");
        h[0] = 'b';
        assertThat(failure(new Archive().raw(h).bytes())).hasMessageContaining("checksum");
        byte[] negative = TarCodec.header("n", 0, 0644, '0', "");
        negative[124] = (byte) 0xff;
        // fix the checksum so that only the size is wrong
        java.util.Arrays.fill(negative, 148, 156, (byte) ' ');
        long sum = 0;
        for (byte b : negative) {
            sum += b & 0xff;
        }
        byte[] digits = String.format("%06o\0 ", sum).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(digits, 0, negative, 148, 8);
        assertThat(failure(new Archive().raw(negative).bytes())).hasMessageContaining("negative size");
        byte[] badPax = "99999 path=x\n".getBytes(StandardCharsets.US_ASCII);
        assertThat(failure(new Archive()
                        .entry("p", 'x', badPax, "")
                        .file("a", "")
                        .end()
                        .bytes()))
                .hasMessageContaining("PAX");
    }
}
