package dev.sandbox.implementation.files;

import dev.sandbox.FileOperationException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A directory tree as a tar stream and back, streamed: {@link #encode} turns {@link TreeItem}s into ustar blocks (a
 * PAX header carries names and link targets that do not fit, or are not ASCII), {@link #decode} parses an untrusted
 * archive into items while it arrives, holding at most one header (and a bounded PAX record) at a time.
 *
 * <p>The decoder accepts regular files ({@code 0}, NUL, {@code 7}), directories ({@code 5}), symbolic links ({@code
 * 2}), PAX headers ({@code x}: {@code path}, {@code linkpath}, {@code size}; {@code g} is skipped) and GNU long names
 * ({@code L}, {@code K}). Hard links, devices, FIFOs and every other type are refused, as are names and link
 * targets {@link TreeNames} refuses, a bad checksum, more than {@link TreeNames#MAX_ENTRIES} entries or {@link
 * TreeNames#MAX_TOTAL_BYTES} bytes of content, and an archive that ends before its two zero blocks. Nothing after
 * those blocks is read.
 */
public final class TarCodec {
    static final int BLOCK = 512;
    private static final int MAX_PAX = 64 * 1024;
    private static final long MAX_OCTAL_11 = 077777777777L;

    private TarCodec() {}

    // ------------------------------------------------------------------ encoding

    /**
     * Encodes items as a tar stream; each entry's content must have exactly its size.
     *
     * @param items the tree
     * @return the archive's bytes, ending with two zero blocks
     */
    public static Flux<ByteBuffer> encode(Publisher<TreeItem> items) {
        return Flux.defer(() -> {
            long[] remaining = {0};
            long[] size = {0};
            String[] current = {null};
            return Flux.from(items)
                    .concatMapIterable(item -> {
                        List<ByteBuffer> out = new ArrayList<>(2);
                        if (item instanceof TreeItem.Entry e) {
                            closeEntry(current[0], remaining[0], size[0], out);
                            out.add(ByteBuffer.wrap(headers(e)));
                            current[0] = e.name();
                            remaining[0] = e.kind() == TreeItem.Kind.FILE ? e.size() : 0;
                            size[0] = remaining[0];
                        } else if (item instanceof TreeItem.Data d) {
                            int n = d.bytes().remaining();
                            if (current[0] == null || n > remaining[0]) {
                                throw changed(current[0]);
                            }
                            remaining[0] -= n;
                            out.add(d.bytes());
                        }
                        return out;
                    })
                    .concatWith(Mono.fromSupplier(() -> {
                        List<ByteBuffer> out = new ArrayList<>(2);
                        closeEntry(current[0], remaining[0], size[0], out);
                        ByteArrayOutputStream all = new ByteArrayOutputStream();
                        for (ByteBuffer b : out) {
                            all.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
                        }
                        all.writeBytes(new byte[2 * BLOCK]);
                        return ByteBuffer.wrap(all.toByteArray());
                    }));
        });
    }

    private static FileOperationException changed(String name) {
        String shown = TreeNames.printable(name == null ? "" : name);
        return new FileOperationException(
                shown,
                FileOperationException.Reason.IO_ERROR,
                shown + ": the file changed size while it was transferred",
                null);
    }

    private static void closeEntry(String name, long remaining, long size, List<ByteBuffer> out) {
        if (name == null) {
            return;
        }
        if (remaining != 0) {
            throw changed(name);
        }
        int pad = padding(size);
        if (pad > 0) {
            out.add(ByteBuffer.wrap(new byte[pad]));
        }
    }

    /**
     * How many zero bytes follow content of this size to fill its last 512-byte block.
     *
     * @param size the content's size
     * @return the padding, 0 to 511
     */
    public static int padding(long size) {
        int rest = (int) (size % BLOCK);
        return rest == 0 ? 0 : BLOCK - rest;
    }

    /** The header blocks of one entry: a PAX header first when the name or the target needs one. */
    static byte[] headers(TreeItem.Entry e) {
        String name = e.kind() == TreeItem.Kind.DIRECTORY ? e.name() + "/" : e.name();
        String link = e.linkTarget();
        boolean paxName = !fits(name);
        boolean paxLink = !fits(link);
        char type = switch (e.kind()) {
            case FILE -> '0';
            case DIRECTORY -> '5';
            case SYMLINK -> '2';
        };
        byte[] main = header(paxName ? "pax-name" : name, e.size(), e.mode(), type, paxLink ? "" : link);
        if (!paxName && !paxLink) {
            return main;
        }
        ByteArrayOutputStream records = new ByteArrayOutputStream();
        if (paxName) {
            records.writeBytes(paxRecord("path", name));
        }
        if (paxLink) {
            records.writeBytes(paxRecord("linkpath", link));
        }
        byte[] body = records.toByteArray();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(header("pax-header", body.length, 0644, 'x', ""));
        out.writeBytes(body);
        out.writeBytes(new byte[padding(body.length)]);
        out.writeBytes(main);
        return out.toByteArray();
    }

    private static boolean fits(String s) {
        if (s.length() > 100) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) > 0x7e) {
                return false;
            }
        }
        return true;
    }

    static byte[] paxRecord(String key, String value) {
        byte[] kv = (" " + key + "=" + value + "\n").getBytes(StandardCharsets.UTF_8);
        int len = kv.length;
        int digits = Integer.toString(len).length();
        while (Integer.toString(len + digits).length() != digits) {
            digits++;
        }
        return ((len + digits) + new String(kv, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
    }

    static byte[] header(String name, long size, int mode, char type, String link) {
        byte[] h = new byte[BLOCK];
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(n, 0, h, 0, Math.min(100, n.length));
        octal(h, 100, 8, mode & 07777);
        octal(h, 108, 8, 0);
        octal(h, 116, 8, 0);
        if (size <= MAX_OCTAL_11) {
            octal(h, 124, 12, size);
        } else {
            h[124] = (byte) 0x80;
            long v = size;
            for (int i = 135; i > 124; i--) {
                h[i] = (byte) v;
                v >>>= 8;
            }
        }
        octal(h, 136, 12, 0);
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        h[156] = (byte) type;
        byte[] l = link.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(l, 0, h, 157, Math.min(100, l.length));
        System.arraycopy("ustar\0".getBytes(StandardCharsets.US_ASCII), 0, h, 257, 6);
        h[263] = '0';
        h[264] = '0';
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xFF;
        }
        octal(h, 148, 7, sum);
        return h;
    }

    /**
     * Writes a numeric header field: {@code length - 1} zero-padded octal digits and a NUL.
     *
     * @param h the header block
     * @param offset where the field starts
     * @param length the field's length, its NUL included
     * @param value the value, {@code >= 0}
     * @throws IllegalArgumentException when the value needs more digits than the field has
     */
    public static void octal(byte[] h, int offset, int length, long value) {
        String digits = Long.toOctalString(value);
        int width = length - 1;
        if (digits.length() > width) {
            throw new IllegalArgumentException("value " + value + " does not fit a tar field of " + length);
        }
        int pad = width - digits.length();
        for (int i = 0; i < pad; i++) {
            h[offset + i] = '0';
        }
        for (int i = 0; i < digits.length(); i++) {
            h[offset + pad + i] = (byte) digits.charAt(i);
        }
        h[offset + width] = 0;
    }

    // ------------------------------------------------------------------ decoding

    /**
     * Decodes an untrusted tar stream. The stream is cancelled once the end-of-archive blocks have been read.
     *
     * @param archive the bytes, in any pieces
     * @return the tree's items; fails with a {@link FileOperationException} naming the entry on anything refused
     */
    public static Flux<TreeItem> decode(Publisher<ByteBuffer> archive) {
        return Flux.defer(() -> {
            Decoder d = new Decoder();
            return Flux.from(archive)
                    .concatMapIterable(d::feed)
                    .takeUntil(item -> item == Decoder.END)
                    .concatWith(Mono.defer(() -> d.finished() ? Mono.empty() : Mono.error(d.truncated())))
                    .filter(item -> item != Decoder.END);
        });
    }

    /** The push parser behind {@link #decode}; not thread-safe. */
    static final class Decoder {
        /** A marker: the archive's end was read. */
        static final TreeItem END = new TreeItem.Data(ByteBuffer.allocate(0));

        private enum State {
            HEADER,
            META,
            SKIP,
            CONTENT,
            PADDING,
            DONE
        }

        private final byte[] header = new byte[BLOCK];
        private int headerFill;
        private State state = State.HEADER;
        private long remaining;
        private int zeroBlocks;
        private long entries;
        private long totalBytes;
        private String current = "";
        // pending from PAX / GNU headers, for the next entry
        private String paxPath;
        private String paxLink;
        private long paxSize = -1;
        private char metaType;
        private byte[] meta;
        private int metaFill;

        boolean finished() {
            return state == State.DONE;
        }

        FileOperationException truncated() {
            return corrupt(current, "the archive ended early");
        }

        private static FileOperationException corrupt(String name, String why) {
            String shown = TreeNames.printable(name);
            return new FileOperationException(
                    shown, FileOperationException.Reason.IO_ERROR, "corrupt archive at '" + shown + "': " + why, null);
        }

        List<TreeItem> feed(ByteBuffer in) {
            List<TreeItem> out = new ArrayList<>(2);
            while (in.hasRemaining() && state != State.DONE) {
                switch (state) {
                    case HEADER -> {
                        int n = Math.min(in.remaining(), BLOCK - headerFill);
                        in.get(header, headerFill, n);
                        headerFill += n;
                        if (headerFill == BLOCK) {
                            headerFill = 0;
                            onHeader(out);
                        }
                    }
                    case META -> {
                        int n = (int) Math.min(in.remaining(), remaining);
                        in.get(meta, metaFill, n);
                        metaFill += n;
                        remaining -= n;
                        if (remaining == 0) {
                            onMeta();
                        }
                    }
                    case SKIP, PADDING -> {
                        int n = (int) Math.min(in.remaining(), remaining);
                        in.position(in.position() + n);
                        remaining -= n;
                        if (remaining == 0) {
                            state = State.HEADER;
                        }
                    }
                    case CONTENT -> {
                        int n = (int) Math.min(in.remaining(), remaining);
                        byte[] copy = new byte[n];
                        in.get(copy);
                        out.add(new TreeItem.Data(ByteBuffer.wrap(copy)));
                        remaining -= n;
                        if (remaining == 0) {
                            int pad = padding(sizeOfCurrent);
                            remaining = pad;
                            state = pad == 0 ? State.HEADER : State.PADDING;
                        }
                    }
                    case DONE -> {}
                }
            }
            if (state == State.DONE) {
                out.add(END);
            }
            return out;
        }

        private long sizeOfCurrent;

        private long headers;

        private void onHeader(List<TreeItem> out) {
            if (++headers > 3L * TreeNames.MAX_ENTRIES) {
                throw TreeNames.tooLarge(current, "more than " + 3L * TreeNames.MAX_ENTRIES + " headers");
            }
            boolean zero = true;
            for (byte b : header) {
                if (b != 0) {
                    zero = false;
                    break;
                }
            }
            if (zero) {
                if (++zeroBlocks == 2) {
                    if (paxPath != null || paxLink != null || paxSize >= 0) {
                        throw corrupt(current, "an extended header with no entry after it");
                    }
                    state = State.DONE;
                }
                return;
            }
            if (zeroBlocks > 0) {
                throw corrupt(current, "a zero block inside the archive");
            }
            checkSum();
            char type = (char) header[156];
            long size = parseSize();
            switch (type) {
                case 'x', 'L', 'K' -> {
                    long cap = type == 'x' ? MAX_PAX : TreeNames.MAX_NAME_BYTES + 1L;
                    if (size > cap) {
                        throw TreeNames.tooLarge(current, "an extended header of " + size + " bytes");
                    }
                    metaType = type;
                    meta = new byte[(int) size];
                    metaFill = 0;
                    remaining = size;
                    if (size == 0) {
                        onMeta();
                    } else {
                        state = State.META;
                    }
                }
                case 'g' -> {
                    if (size > MAX_PAX) {
                        throw TreeNames.tooLarge(current, "a global header of " + size + " bytes");
                    }
                    skip(size + padding(size));
                }
                case '0', '\0', '7', '5', '2' -> onEntry(type, size, out);
                case '1' -> throw TreeNames.refused(name(), "a hard link");
                case '3', '4' -> throw TreeNames.refused(name(), "a device file");
                case '6' -> throw TreeNames.refused(name(), "a FIFO");
                default ->
                    throw TreeNames.refused(name(), "an entry of unsupported type '" + printableType(type) + "'");
            }
        }

        private static String printableType(char type) {
            return type < 0x20 || type > 0x7e ? String.format("\\x%02x", (int) type) : String.valueOf(type);
        }

        private void onMeta() {
            int pad = padding(meta.length);
            if (metaType == 'x') {
                parsePax(meta);
            } else {
                int end = 0;
                while (end < meta.length && meta[end] != 0) {
                    end++;
                }
                String value = new String(meta, 0, end, StandardCharsets.UTF_8);
                if (metaType == 'L') {
                    paxPath = value;
                } else {
                    paxLink = value;
                }
            }
            meta = null;
            skip(pad);
        }

        private void skip(long n) {
            remaining = n;
            state = n == 0 ? State.HEADER : State.SKIP;
        }

        private String name() {
            if (paxPath != null) {
                return paxPath;
            }
            String name = field(0, 100);
            String prefix = isUstar() ? field(345, 155) : "";
            return prefix.isEmpty() ? name : prefix + "/" + name;
        }

        private boolean isUstar() {
            return header[257] == 'u'
                    && header[258] == 's'
                    && header[259] == 't'
                    && header[260] == 'a'
                    && header[261] == 'r';
        }

        private String field(int offset, int length) {
            int end = offset;
            while (end < offset + length && header[end] != 0) {
                end++;
            }
            return new String(header, offset, end - offset, StandardCharsets.UTF_8);
        }

        private void onEntry(char type, long size, List<TreeItem> out) {
            String raw = name();
            String link = paxLink != null ? paxLink : field(157, 100);
            long sz = paxSize >= 0 ? paxSize : size;
            paxPath = null;
            paxLink = null;
            paxSize = -1;
            current = raw;
            if (++entries > TreeNames.MAX_ENTRIES) {
                throw TreeNames.tooLarge(raw, "more than " + TreeNames.MAX_ENTRIES + " entries");
            }
            String name = raw;
            while (name.startsWith("./")) {
                name = name.substring(2);
            }
            if (type == '5' && name.endsWith("/")) {
                name = name.substring(0, name.length() - 1);
            }
            if (name.isEmpty() || name.equals(".")) {
                if (type != '5') {
                    throw TreeNames.refused(raw, "an entry for the tree's root that is not a directory");
                }
                skipContent(sz);
                return; // the root itself: it is made by the receiver
            }
            TreeNames.check(name);
            int mode = (int) (parseOctal(100, 8) & 07777);
            switch (type) {
                case '5' -> {
                    out.add(new TreeItem.Entry(name, TreeItem.Kind.DIRECTORY, mode, 0, ""));
                    skipContent(sz);
                }
                case '2' -> {
                    TreeNames.checkLink(name, link);
                    out.add(new TreeItem.Entry(name, TreeItem.Kind.SYMLINK, mode, 0, link));
                    skipContent(sz);
                }
                default -> {
                    if (sz > TreeNames.MAX_TOTAL_BYTES - totalBytes) {
                        throw TreeNames.tooLarge(
                                name, "more than " + TreeNames.MAX_TOTAL_BYTES + " bytes of content in all");
                    }
                    totalBytes += sz;
                    out.add(new TreeItem.Entry(name, TreeItem.Kind.FILE, mode, sz, ""));
                    sizeOfCurrent = sz;
                    remaining = sz;
                    state = sz == 0 ? State.HEADER : State.CONTENT;
                }
            }
        }

        /** Directories and links carry no content; some writers give them a size anyway: skipped, bounded. */
        private void skipContent(long size) {
            if (size > MAX_PAX) {
                throw TreeNames.tooLarge(current, "content of " + size + " bytes on an entry that has none");
            }
            skip(size + padding(size));
        }

        private void checkSum() {
            long stored = parseOctal(148, 8);
            long sum = 0;
            for (int i = 0; i < BLOCK; i++) {
                sum += (i >= 148 && i < 156) ? ' ' : header[i] & 0xFF;
            }
            if (sum != stored) {
                throw corrupt(current, "a header with a bad checksum");
            }
        }

        private long parseSize() {
            if ((header[124] & 0x80) != 0) {
                if ((header[124] & 0x40) != 0) {
                    throw corrupt(current, "a negative size");
                }
                long v = 0;
                for (int i = 125; i < 136; i++) {
                    if ((v >>> 55) != 0) {
                        throw corrupt(current, "a size that overflows");
                    }
                    v = (v << 8) | (header[i] & 0xFF);
                }
                if (v < 0) {
                    throw corrupt(current, "a size that overflows");
                }
                return v;
            }
            return parseOctal(124, 12);
        }

        private long parseOctal(int offset, int length) {
            long v = 0;
            boolean digits = false;
            for (int i = offset; i < offset + length; i++) {
                byte b = header[i];
                if (b == 0 || b == ' ') {
                    if (digits) {
                        break;
                    }
                    continue;
                }
                if (b < '0' || b > '7') {
                    throw corrupt(current, "a header with a bad number field");
                }
                digits = true;
                v = (v << 3) | (b - '0');
            }
            return v;
        }

        /** Records are {@code "<length> <key>=<value>\n"}, the length counting bytes. */
        private void parsePax(byte[] pax) {
            int i = 0;
            while (i < pax.length) {
                int space = i;
                int len = 0;
                while (space < pax.length && pax[space] >= '0' && pax[space] <= '9' && space - i < 7) {
                    len = len * 10 + (pax[space] - '0');
                    space++;
                }
                if (space == i
                        || space >= pax.length
                        || pax[space] != ' '
                        || len <= space - i + 1
                        || i + len > pax.length
                        || pax[i + len - 1] != '\n') {
                    throw corrupt(current, "a malformed PAX record");
                }
                String record = new String(pax, space + 1, i + len - space - 2, StandardCharsets.UTF_8);
                int eq = record.indexOf('=');
                if (eq <= 0) {
                    throw corrupt(current, "a malformed PAX record");
                }
                String key = record.substring(0, eq);
                String value = record.substring(eq + 1);
                if (value.indexOf('\0') >= 0) {
                    throw TreeNames.refused(value, "a NUL byte in an extended header's " + key);
                }
                switch (key) {
                    case "path" -> paxPath = value;
                    case "linkpath" -> paxLink = value;
                    case "size" -> {
                        try {
                            paxSize = Long.parseLong(value);
                        } catch (NumberFormatException e) {
                            throw corrupt(current, "a PAX size that is not a number");
                        }
                        if (paxSize < 0) {
                            throw corrupt(current, "a negative PAX size");
                        }
                    }
                    default -> {} // times, owners, attributes: not carried
                }
                i += len;
            }
        }
    }
}
