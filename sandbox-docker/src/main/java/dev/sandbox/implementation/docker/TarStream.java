package dev.sandbox.implementation.docker;

import dev.sandbox.implementation.files.TarCodec;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * The little of the tar format that single-file transfers through Docker's archive API need, streamed: a header for
 * one regular file written ahead of its content, and a reader that takes an archive in whatever pieces the network
 * delivers and hands back the content of its first entry as it passes, without ever holding more than one header.
 *
 * <p>The writer emits ustar headers, with the size in base-256 (the GNU extension Go's reader accepts) past the 8 GiB
 * an octal field holds. The reader understands ustar, PAX extended headers ({@code x}: a {@code size} record
 * overrides the header's; {@code g}) and GNU long names ({@code L}, {@code K}), which is what the daemon writes.
 */
public final class TarStream {
    /** Size of a tar block. */
    public static final int BLOCK = 512;

    private static final long MAX_OCTAL_11 = 077777777777L;

    private TarStream() {}

    /**
     * The header of one regular file.
     *
     * @param name the entry name, ASCII, at most 100 bytes
     * @param size the content's size
     * @param mode the permission bits
     * @param mtimeSeconds the modification time
     * @return one 512-byte block
     */
    public static byte[] fileHeader(String name, long size, int mode, long mtimeSeconds) {
        return header(name, size, mode, mtimeSeconds, '0');
    }

    /**
     * The header of one directory.
     *
     * @param name the entry name, ASCII, ending in {@code /}, at most 100 bytes
     * @param mode the permission bits
     * @param mtimeSeconds the modification time
     * @return one 512-byte block
     */
    public static byte[] directoryHeader(String name, int mode, long mtimeSeconds) {
        return header(name, 0, mode, mtimeSeconds, '5');
    }

    private static byte[] header(String name, long size, int mode, long mtimeSeconds, char type) {
        byte[] h = new byte[BLOCK];
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        if (n.length > 100) {
            throw new IllegalArgumentException("tar entry name longer than 100 bytes: " + name);
        }
        System.arraycopy(n, 0, h, 0, n.length);
        TarCodec.octal(h, 100, 8, mode & 07777);
        TarCodec.octal(h, 108, 8, 0);
        TarCodec.octal(h, 116, 8, 0);
        if (size <= MAX_OCTAL_11) {
            TarCodec.octal(h, 124, 12, size);
        } else {
            h[124] = (byte) 0x80; // base-256: the rest of the field is the big-endian value
            long v = size;
            for (int i = 135; i > 124; i--) {
                h[i] = (byte) v;
                v >>>= 8;
            }
        }
        TarCodec.octal(h, 136, 12, mtimeSeconds);
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        h[156] = (byte) type;
        System.arraycopy("ustar\0".getBytes(StandardCharsets.US_ASCII), 0, h, 257, 6);
        h[263] = '0';
        h[264] = '0';
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xFF;
        }
        TarCodec.octal(h, 148, 7, sum); // six digits, a NUL, and the space already there
        return h;
    }

    /**
     * How many zero bytes follow content of this size to fill its last block.
     *
     * @param size the content's size
     * @return the padding, 0 to 511
     */
    public static int padding(long size) {
        return TarCodec.padding(size);
    }

    /**
     * The end of an archive: two zero blocks.
     *
     * @return 1024 zero bytes
     */
    public static byte[] trailer() {
        return new byte[2 * BLOCK];
    }

    /** The first entry of an archive is not a regular file. */
    public static final class NotAFileException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /** The entry's type flag, such as {@code '5'} for a directory or {@code '2'} for a symbolic link. */
        public final char type;

        NotAFileException(char type) {
            super("the archive's first entry is not a regular file (type '" + type + "')", null, false, false);
            this.type = type;
        }
    }

    /** The archive is malformed or ended early. */
    public static final class CorruptArchiveException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CorruptArchiveException(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Reads the content of an archive's first entry as the archive arrives, in pieces. Not thread-safe: feed it from
     * one sequence of signals.
     */
    public static final class Reader {
        private enum State {
            HEADER,
            PAX,
            SKIP,
            CONTENT,
            DONE
        }

        private static final int MAX_PAX = 64 * 1024;

        private final byte[] header = new byte[BLOCK];
        private int headerFill;
        private State state = State.HEADER;
        private long remaining; // bytes of the current entry's content still to come
        private int padding; // zero bytes after it
        private long paxSize = -1;
        private byte[] pax;
        private int paxFill;

        /** Creates a reader at the start of an archive. */
        public Reader() {}

        /**
         * Whether the first entry's content has passed entirely.
         *
         * @return {@code true} once done
         */
        public boolean done() {
            return state == State.DONE;
        }

        /**
         * Takes the next piece of the archive. The first entry's content is one run of bytes, so a piece holds at most
         * one run of it; that run comes back as a retained slice of the piece, not a copy.
         *
         * @param in the bytes, consumed entirely (its reader index moves to its end); not released
         * @return a retained slice of {@code in} with the content bytes it held, which the caller must release; or
         *     {@code null} when it held none
         * @throws NotAFileException when the first entry is not a regular file
         * @throws CorruptArchiveException when the archive is malformed
         */
        public ByteBuf feed(ByteBuf in) {
            ByteBuf content = null;
            while (in.isReadable() && state != State.DONE) {
                switch (state) {
                    case HEADER -> {
                        int n = Math.min(in.readableBytes(), BLOCK - headerFill);
                        in.readBytes(header, headerFill, n);
                        headerFill += n;
                        if (headerFill == BLOCK) {
                            headerFill = 0;
                            onHeader();
                        }
                    }
                    case PAX -> {
                        int n = (int) Math.min(in.readableBytes(), remaining);
                        in.readBytes(pax, paxFill, n);
                        paxFill += n;
                        remaining -= n;
                        if (remaining == 0) {
                            parsePax();
                            skip(padding);
                        }
                    }
                    case SKIP -> {
                        int n = (int) Math.min(in.readableBytes(), remaining);
                        in.skipBytes(n);
                        remaining -= n;
                        if (remaining == 0) {
                            state = State.HEADER;
                        }
                    }
                    case CONTENT -> {
                        int n = (int) Math.min(in.readableBytes(), remaining);
                        content = in.readRetainedSlice(n);
                        remaining -= n;
                        if (remaining == 0) {
                            state = State.DONE;
                        }
                    }
                    case DONE -> {}
                }
            }
            in.skipBytes(in.readableBytes()); // past the first entry: the rest of the archive is not needed
            return content;
        }

        private void onHeader() {
            boolean zero = true;
            for (byte b : header) {
                if (b != 0) {
                    zero = false;
                    break;
                }
            }
            if (zero) {
                throw new CorruptArchiveException("the archive holds no file");
            }
            char type = (char) header[156];
            boolean meta = type == 'x' || type == 'g' || type == 'L' || type == 'K';
            long size = !meta && paxSize >= 0 ? paxSize : parseSize();
            padding = padding(size);
            switch (type) {
                case 'x' -> {
                    if (size > MAX_PAX) {
                        throw new CorruptArchiveException("a PAX header of " + size + " bytes");
                    }
                    pax = new byte[(int) size];
                    paxFill = 0;
                    remaining = size;
                    state = size == 0 ? State.HEADER : State.PAX;
                }
                case 'g', 'L', 'K' -> skip(size + padding);
                case '0', '\0', '7' -> {
                    paxSize = -1;
                    remaining = size;
                    state = size == 0 ? State.DONE : State.CONTENT;
                }
                default -> throw new NotAFileException(type);
            }
        }

        private void skip(long n) {
            remaining = n;
            state = n == 0 ? State.HEADER : State.SKIP;
        }

        private long parseSize() {
            if ((header[124] & 0x80) != 0) {
                long v = 0;
                for (int i = 125; i < 136; i++) {
                    v = (v << 8) | (header[i] & 0xFF);
                }
                return v;
            }
            long v = 0;
            for (int i = 124; i < 136; i++) {
                byte b = header[i];
                if (b == 0 || b == ' ') {
                    if (v > 0) {
                        break;
                    }
                    continue;
                }
                if (b < '0' || b > '7') {
                    throw new CorruptArchiveException("a tar header with a bad size field");
                }
                v = (v << 3) | (b - '0');
            }
            return v;
        }

        /** Records are {@code "<length> <key>=<value>\n"}; only {@code size} matters here. */
        private void parsePax() {
            String text = new String(pax, 0, paxFill, StandardCharsets.UTF_8);
            int i = 0;
            while (i < text.length()) {
                int space = text.indexOf(' ', i);
                if (space < 0) {
                    break;
                }
                int len;
                try {
                    len = Integer.parseInt(text.substring(i, space));
                } catch (NumberFormatException e) {
                    throw new CorruptArchiveException("a PAX record with a bad length");
                }
                if (len <= 0) {
                    break;
                }
                // the length counts bytes; the records the daemon writes for a file's size are ASCII
                String record = text.substring(space + 1, Math.min(text.length(), i + len))
                        .strip();
                if (record.startsWith("size=")) {
                    paxSize = Long.parseLong(record.substring(5));
                }
                i += len;
            }
            pax = null;
        }
    }
}
