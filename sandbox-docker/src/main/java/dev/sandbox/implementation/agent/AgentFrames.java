package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The frames of PROTOCOL.md: a 9-byte header ({@code u32 length, u8 type, u32 stream}) and a payload. Encoders for
 * both directions (the agent's side serves the tests' fake agents) and a bounded incremental {@link Decoder} that
 * validates every count and length against the bytes present and the protocol's limits.
 */
final class AgentFrames {
    /** Header size. */
    static final int HEADER = 9;
    /** Largest payload of a client frame. */
    static final int MAX_CLIENT_PAYLOAD = 2 * 1024 * 1024;
    /** Largest payload of an agent frame. */
    static final int MAX_AGENT_PAYLOAD = 64 * 1024 + 64;
    /** Largest {@code DATA} payload (both directions) and {@code INPUT} stdin bytes. */
    static final int MAX_DATA = 64 * 1024;
    /** Largest {@code str}. */
    static final int MAX_STR = 1024 * 1024;
    /** Largest {@code strs} count. */
    static final int MAX_STRS = 65_536;

    // client -> agent
    static final int HELLO = 0x01;
    static final int PING = 0x02;
    static final int TIMERS = 0x03;
    static final int SPAWN = 0x10;
    static final int DATA = 0x11;
    static final int EOF = 0x12;
    static final int SIGNAL = 0x13;
    static final int RESIZE = 0x14;
    static final int CREDIT = 0x15;
    static final int CLOSE = 0x1F;
    static final int READ = 0x20;
    static final int WRITE = 0x21;
    static final int LIST = 0x22;
    static final int STAT = 0x23;
    static final int MKDIR = 0x24;
    static final int REMOVE = 0x25;
    static final int MOVE = 0x26;
    static final int WATCH = 0x27;
    static final int SYMLINK = 0x28;
    static final int CHMOD = 0x29;
    static final int PROCS = 0x30;
    static final int ATTACH = 0x31;
    static final int INPUT = 0x32;
    // agent -> client
    static final int A_OK = 0x80;
    static final int A_HELLO = 0x81;
    static final int A_PONG = 0x82;
    static final int A_CREDIT = 0x83;
    static final int A_STARTED = 0x90;
    static final int A_OUTPUT = 0x91;
    static final int A_EXIT = 0x92;
    static final int A_DATA = 0x94;
    static final int A_END = 0x95;
    static final int A_ENTRY = 0x96;
    static final int A_EVENT = 0x97;
    static final int A_READY = 0x98;
    static final int A_PROC = 0x99;
    static final int A_ERROR = 0xEE;

    /** SPAWN flags. */
    static final int FLAG_PTY = 1;

    static final int FLAG_STDIN = 2;
    static final int FLAG_BACKGROUND = 4;

    private AgentFrames() {}

    /** The protocol's name of a frame type, for messages. */
    static String typeName(int type, boolean fromAgent) {
        String name = fromAgent
                ? switch (type) {
                    case A_OK -> "OK";
                    case A_HELLO -> "HELLO";
                    case A_PONG -> "PONG";
                    case A_CREDIT -> "CREDIT";
                    case A_STARTED -> "STARTED";
                    case A_OUTPUT -> "OUTPUT";
                    case A_EXIT -> "EXIT";
                    case A_DATA -> "DATA";
                    case A_END -> "END";
                    case A_ENTRY -> "ENTRY";
                    case A_EVENT -> "EVENT";
                    case A_READY -> "READY";
                    case A_PROC -> "PROC";
                    case A_ERROR -> "ERROR";
                    default -> null;
                }
                : switch (type) {
                    case HELLO -> "HELLO";
                    case PING -> "PING";
                    case TIMERS -> "TIMERS";
                    case SPAWN -> "SPAWN";
                    case DATA -> "DATA";
                    case EOF -> "EOF";
                    case SIGNAL -> "SIGNAL";
                    case RESIZE -> "RESIZE";
                    case CREDIT -> "CREDIT";
                    case CLOSE -> "CLOSE";
                    case READ -> "READ";
                    case WRITE -> "WRITE";
                    case LIST -> "LIST";
                    case STAT -> "STAT";
                    case MKDIR -> "MKDIR";
                    case REMOVE -> "REMOVE";
                    case MOVE -> "MOVE";
                    case WATCH -> "WATCH";
                    case SYMLINK -> "SYMLINK";
                    case CHMOD -> "CHMOD";
                    case PROCS -> "PROCS";
                    case ATTACH -> "ATTACH";
                    case INPUT -> "INPUT";
                    default -> null;
                };
        return name != null ? name : String.format("type 0x%02x", type);
    }

    // ---------------------------------------------------------------- encoding

    /** Builds one frame: header, then payload fields; {@link #finish()} patches the length and checks the limit. */
    static final class Writer {
        private ByteBuffer buf;
        private final int limit;
        private final String what;

        Writer(int type, int stream, int sizeHint, int limit) {
            this.buf = ByteBuffer.allocate(HEADER + Math.min(Math.max(sizeHint, 16), limit));
            this.limit = limit;
            this.what = typeName(type, limit == MAX_AGENT_PAYLOAD) + " on stream " + Integer.toUnsignedString(stream);
            buf.putInt(0).put((byte) type).putInt(stream);
        }

        private void room(int n) {
            if (buf.remaining() >= n) {
                return;
            }
            long need = (long) buf.position() + n;
            if (need - HEADER > limit) {
                throw new IllegalArgumentException(what + ": payload larger than " + limit + " bytes");
            }
            int size = (int) Math.min(Math.max(need, buf.capacity() * 2L), (long) HEADER + limit);
            ByteBuffer bigger = ByteBuffer.allocate(size);
            buf.flip();
            bigger.put(buf);
            buf = bigger;
        }

        Writer u8(int v) {
            room(1);
            buf.put((byte) v);
            return this;
        }

        Writer u16(int v) {
            room(2);
            buf.putShort((short) v);
            return this;
        }

        Writer u32(long v) {
            room(4);
            buf.putInt((int) v);
            return this;
        }

        Writer u64(long v) {
            room(8);
            buf.putLong(v);
            return this;
        }

        Writer str(String field, String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            if (b.length > MAX_STR) {
                throw new IllegalArgumentException(
                        what + ": " + field + " is " + b.length + " bytes, more than " + MAX_STR);
            }
            room(4 + b.length);
            buf.putInt(b.length).put(b);
            return this;
        }

        Writer strs(String field, List<String> list) {
            if (list.size() > MAX_STRS) {
                throw new IllegalArgumentException(
                        what + ": " + field + " has " + list.size() + " elements, more than " + MAX_STRS);
            }
            u32(list.size());
            for (String s : list) {
                str(field, s);
            }
            return this;
        }

        Writer bytes(byte[] b) {
            room(b.length);
            buf.put(b);
            return this;
        }

        Writer info(AgentFileInfo i) {
            return u8(i.type())
                    .u32(i.mode())
                    .u32(i.uid())
                    .u32(i.gid())
                    .u64(i.size())
                    .u64(i.mtimeNs())
                    .str("path", i.path())
                    .str("link_target", i.linkTarget());
        }

        ByteBuffer finish() {
            int payload = buf.position() - HEADER;
            if (payload > limit) {
                throw new IllegalArgumentException(what + ": payload larger than " + limit + " bytes");
            }
            buf.putInt(0, payload);
            return buf.flip();
        }
    }

    private static Writer client(int type, int stream, int hint) {
        return new Writer(type, stream, hint, MAX_CLIENT_PAYLOAD);
    }

    private static Writer agent(int type, int stream, int hint) {
        return new Writer(type, stream, hint, MAX_AGENT_PAYLOAD);
    }

    /**
     * Encodes a client frame.
     *
     * @param f the frame
     * @return header and payload, ready to write
     * @throws IllegalArgumentException when a field is beyond its limit (naming it)
     */
    static ByteBuffer encode(ClientFrame f) {
        return switch (f) {
            case ClientFrame.Hello h ->
                client(HELLO, h.stream(), 16)
                        .u16(h.minVersion())
                        .u16(h.maxVersion())
                        .str("client", h.client())
                        .finish();
            case ClientFrame.Ping p ->
                client(PING, p.stream(), 8).u64(p.token()).finish();
            case ClientFrame.Timers t ->
                client(TIMERS, t.stream(), 16)
                        .u64(t.deadlineMs())
                        .u64(t.idleMs())
                        .finish();
            case ClientFrame.Spawn s ->
                client(SPAWN, s.stream(), 64)
                        .u32(s.flags())
                        .u16(s.cols())
                        .u16(s.rows())
                        .u32(s.credit())
                        .u32(s.ringBytes())
                        .u8(s.overflow())
                        .str("cwd", s.cwd())
                        .strs("argv", s.argv())
                        .strs("env", s.env())
                        .finish();
            case ClientFrame.Data d -> {
                if (d.bytes().length < 1 || d.bytes().length > MAX_DATA) {
                    throw new IllegalArgumentException("DATA of " + d.bytes().length + " bytes (1.." + MAX_DATA + ")");
                }
                yield client(DATA, d.stream(), d.bytes().length)
                        .bytes(d.bytes())
                        .finish();
            }
            case ClientFrame.Eof e -> client(EOF, e.stream(), 0).finish();
            case ClientFrame.Signal s ->
                client(SIGNAL, s.stream(), 4).u32(s.signal()).finish();
            case ClientFrame.Resize r ->
                client(RESIZE, r.stream(), 4).u16(r.cols()).u16(r.rows()).finish();
            case ClientFrame.Credit c ->
                client(CREDIT, c.stream(), 5).u8(c.fd()).u32(c.bytes()).finish();
            case ClientFrame.Close c -> client(CLOSE, c.stream(), 0).finish();
            case ClientFrame.Read r ->
                client(READ, r.stream(), 32)
                        .str("path", r.path())
                        .u64(r.offset())
                        .u64(r.length())
                        .u32(r.credit())
                        .finish();
            case ClientFrame.Write w ->
                client(WRITE, w.stream(), 32)
                        .str("path", w.path())
                        .u32(w.mode())
                        .u32(w.flags())
                        .u32(0)
                        .finish();
            case ClientFrame.ListDir l ->
                client(LIST, l.stream(), 32)
                        .str("path", l.path())
                        .u32(l.depth())
                        .u32(l.credit())
                        .finish();
            case ClientFrame.Stat s ->
                client(STAT, s.stream(), 32).str("path", s.path()).finish();
            case ClientFrame.Mkdir m ->
                client(MKDIR, m.stream(), 32)
                        .str("path", m.path())
                        .u32(m.mode())
                        .u8(m.parents() ? 1 : 0)
                        .finish();
            case ClientFrame.Remove r ->
                client(REMOVE, r.stream(), 32)
                        .str("path", r.path())
                        .u8(r.recursive() ? 1 : 0)
                        .finish();
            case ClientFrame.Move m ->
                client(MOVE, m.stream(), 64)
                        .str("from", m.from())
                        .str("to", m.to())
                        .finish();
            case ClientFrame.Symlink l ->
                client(SYMLINK, l.stream(), 64)
                        .str("path", l.path())
                        .str("target", l.target())
                        .finish();
            case ClientFrame.Chmod m ->
                client(CHMOD, m.stream(), 32)
                        .str("path", m.path())
                        .u32(m.mode())
                        .finish();
            case ClientFrame.Watch w ->
                client(WATCH, w.stream(), 32)
                        .str("path", w.path())
                        .u8(w.recursive() ? 1 : 0)
                        .u32(w.credit())
                        .finish();
            case ClientFrame.Procs p ->
                client(PROCS, p.stream(), 4).u32(p.credit()).finish();
            case ClientFrame.Attach a ->
                client(ATTACH, a.stream(), 32)
                        .str("id", a.id())
                        .u64(a.stdoutFrom())
                        .u64(a.stderrFrom())
                        .u8(a.follow() ? 1 : 0)
                        .u32(a.credit())
                        .finish();
            case ClientFrame.Input i ->
                client(INPUT, i.stream(), 16 + i.bytes().length)
                        .str("id", i.id())
                        .u8(i.what())
                        .bytes(i.bytes())
                        .finish();
        };
    }

    /**
     * Encodes an agent frame (for fake agents in tests).
     *
     * @param f the frame
     * @return header and payload
     */
    static ByteBuffer encode(AgentFrame f) {
        return switch (f) {
            case AgentFrame.Ok o ->
                o.info() == null
                        ? agent(A_OK, o.stream(), 0).finish()
                        : agent(A_OK, o.stream(), 64).info(o.info()).finish();
            case AgentFrame.Hello h ->
                agent(A_HELLO, h.stream(), 48)
                        .u16(h.hello().version())
                        .str("agent", h.hello().agent())
                        .u32(h.hello().pid())
                        .u64(h.hello().deadlineMs())
                        .u64(h.hello().idleMs())
                        .u64(h.hello().nowMs())
                        .finish();
            case AgentFrame.Pong p ->
                agent(A_PONG, p.stream(), 8).u64(p.token()).finish();
            case AgentFrame.Credit c ->
                agent(A_CREDIT, c.stream(), 5).u8(c.fd()).u32(c.bytes()).finish();
            case AgentFrame.Started s ->
                agent(A_STARTED, s.stream(), 16)
                        .u32(s.pid())
                        .str("id", s.id())
                        .u32(s.dataCredit())
                        .finish();
            case AgentFrame.Output o ->
                agent(A_OUTPUT, o.stream(), 9 + o.bytes().length)
                        .u8(o.fd())
                        .u64(o.offset())
                        .bytes(o.bytes())
                        .finish();
            case AgentFrame.Exit e ->
                agent(A_EXIT, e.stream(), 14)
                        .u32(e.status())
                        .u8(e.signaled() ? 1 : 0)
                        .u8(e.oomKilled() ? 1 : 0)
                        .u64(e.endedMs())
                        .finish();
            case AgentFrame.Data d ->
                agent(A_DATA, d.stream(), d.bytes().length).bytes(d.bytes()).finish();
            case AgentFrame.End e -> agent(A_END, e.stream(), 0).finish();
            case AgentFrame.Entry e ->
                agent(A_ENTRY, e.stream(), 64).info(e.info()).finish();
            case AgentFrame.Event e ->
                agent(A_EVENT, e.stream(), 32)
                        .u8(e.kind())
                        .str("path", e.path())
                        .finish();
            case AgentFrame.Ready r ->
                agent(A_READY, r.stream(), 4).u32(r.dataCredit()).finish();
            case AgentFrame.Proc p -> {
                AgentProcInfo i = p.info();
                yield agent(A_PROC, p.stream(), 96)
                        .str("id", i.id())
                        .u8(i.kind())
                        .u32(i.pid())
                        .u64(i.startedMs())
                        .u8(i.running() ? 1 : 0)
                        .u32(i.status())
                        .u8(i.signaled() ? 1 : 0)
                        .strs("argv", i.argv())
                        .u64(i.outStart())
                        .u64(i.outEnd())
                        .u64(i.errStart())
                        .u64(i.errEnd())
                        .finish();
            }
            case AgentFrame.Error e ->
                agent(A_ERROR, e.stream(), 32)
                        .u32(e.code())
                        .str("message", e.message())
                        .finish();
        };
    }

    // ---------------------------------------------------------------- decoding

    /** Reads the fields of one payload, each checked against the bytes left. */
    static final class Reader {
        private final ByteBuffer p;
        private final String what;

        Reader(ByteBuffer payload, String what) {
            this.p = payload;
            this.what = what;
        }

        private void need(int n, String field) {
            if (p.remaining() < n) {
                throw new AgentProtocolException(what + ": payload too short for " + field + " (" + p.remaining()
                        + " bytes left, " + n + " needed)");
            }
        }

        int u8(String field) {
            need(1, field);
            return p.get() & 0xFF;
        }

        boolean bool(String field) {
            int v = u8(field);
            if (v > 1) {
                throw new AgentProtocolException(what + ": " + field + " is " + v + ", not 0 or 1");
            }
            return v == 1;
        }

        int u16(String field) {
            need(2, field);
            return p.getShort() & 0xFFFF;
        }

        long u32(String field) {
            need(4, field);
            return p.getInt() & 0xFFFF_FFFFL;
        }

        int i32(String field) {
            need(4, field);
            return p.getInt();
        }

        long i64(String field) {
            need(8, field);
            return p.getLong();
        }

        String str(String field) {
            long n = u32(field + " length");
            if (n > MAX_STR) {
                throw new AgentProtocolException(what + ": " + field + " length " + n + " beyond " + MAX_STR);
            }
            if (n > p.remaining()) {
                throw new AgentProtocolException(
                        what + ": " + field + " length " + n + " beyond the frame (" + p.remaining() + " bytes left)");
            }
            String s;
            if (p.hasArray()) {
                s = new String(p.array(), p.arrayOffset() + p.position(), (int) n, StandardCharsets.UTF_8);
                p.position(p.position() + (int) n);
            } else {
                byte[] b = new byte[(int) n];
                p.get(b);
                s = new String(b, StandardCharsets.UTF_8);
            }
            return s;
        }

        List<String> strs(String field) {
            long count = u32(field + " count");
            // every str takes 4 bytes at least: a count the frame cannot hold is refused before any allocation
            if (count > MAX_STRS || count * 4 > p.remaining()) {
                throw new AgentProtocolException(what + ": " + field + " count " + count + " beyond "
                        + (count > MAX_STRS ? "the limit " + MAX_STRS : "the frame"));
            }
            List<String> out = new ArrayList<>((int) count);
            for (long i = 0; i < count; i++) {
                out.add(str(field));
            }
            return out;
        }

        byte[] rest() {
            byte[] b = new byte[p.remaining()];
            p.get(b);
            return b;
        }

        int remaining() {
            return p.remaining();
        }

        AgentFileInfo info() {
            int type = u8("info type");
            if (type < 1 || type > 4) {
                throw new AgentProtocolException(what + ": info type " + type + " unknown");
            }
            long mode = u32("info mode");
            if (mode > 07777) {
                throw new AgentProtocolException(what + ": info mode " + Long.toOctalString(mode) + " beyond 07777");
            }
            return new AgentFileInfo(
                    type,
                    (int) mode,
                    u32("info uid"),
                    u32("info gid"),
                    i64("info size"),
                    i64("info mtime_ns"),
                    str("info path"),
                    str("info link_target"));
        }

        void end() {
            if (p.hasRemaining()) {
                throw new AgentProtocolException(what + ": " + p.remaining() + " bytes left over");
            }
        }
    }

    static boolean knownAgentType(int type) {
        return switch (type) {
            case A_OK,
                    A_HELLO,
                    A_PONG,
                    A_CREDIT,
                    A_STARTED,
                    A_OUTPUT,
                    A_EXIT,
                    A_DATA,
                    A_END,
                    A_ENTRY,
                    A_EVENT,
                    A_READY,
                    A_PROC,
                    A_ERROR -> true;
            default -> false;
        };
    }

    static boolean knownClientType(int type) {
        return switch (type) {
            case HELLO,
                    PING,
                    TIMERS,
                    SPAWN,
                    DATA,
                    EOF,
                    SIGNAL,
                    RESIZE,
                    CREDIT,
                    CLOSE,
                    READ,
                    WRITE,
                    LIST,
                    STAT,
                    MKDIR,
                    REMOVE,
                    MOVE,
                    WATCH,
                    SYMLINK,
                    CHMOD,
                    PROCS,
                    ATTACH,
                    INPUT -> true;
            default -> false;
        };
    }

    /**
     * Decodes one agent frame's payload.
     *
     * @param type the frame type
     * @param stream the stream id
     * @param payload exactly the payload; read, not kept
     * @return the frame
     * @throws AgentProtocolException when the payload does not parse exactly
     */
    static AgentFrame decodeAgent(int type, int stream, ByteBuffer payload) {
        Reader r = new Reader(payload, typeName(type, true) + " on stream " + Integer.toUnsignedString(stream));
        AgentFrame f = switch (type) {
            case A_OK -> new AgentFrame.Ok(stream, r.remaining() == 0 ? null : r.info());
            case A_HELLO ->
                new AgentFrame.Hello(
                        stream,
                        new AgentHello(
                                r.u16("version"),
                                r.str("agent"),
                                r.u32("pid"),
                                r.i64("deadline_ms"),
                                r.i64("idle_ms"),
                                r.i64("now_ms")));
            case A_PONG -> new AgentFrame.Pong(stream, r.i64("token"));
            case A_CREDIT -> new AgentFrame.Credit(stream, r.u8("fd"), r.u32("bytes"));
            case A_STARTED -> new AgentFrame.Started(stream, r.u32("pid"), r.str("id"), r.u32("data_credit"));
            case A_OUTPUT -> {
                int fd = r.u8("fd");
                if (fd != 1 && fd != 2) {
                    throw new AgentProtocolException("OUTPUT on stream " + Integer.toUnsignedString(stream) + ": fd "
                            + fd + " is neither 1 nor 2");
                }
                yield new AgentFrame.Output(stream, fd, r.i64("offset"), r.rest());
            }
            case A_EXIT ->
                new AgentFrame.Exit(
                        stream, r.i32("status"), r.bool("signaled"), r.bool("oom_killed"), r.i64("ended_ms"));
            case A_DATA -> new AgentFrame.Data(stream, r.rest());
            case A_END -> new AgentFrame.End(stream);
            case A_ENTRY -> new AgentFrame.Entry(stream, r.info());
            case A_EVENT -> {
                int kind = r.u8("kind");
                if (kind < 1 || kind > 4) {
                    throw new AgentProtocolException(
                            "EVENT on stream " + Integer.toUnsignedString(stream) + ": kind " + kind + " unknown");
                }
                yield new AgentFrame.Event(stream, kind, r.str("path"));
            }
            case A_READY -> new AgentFrame.Ready(stream, r.u32("data_credit"));
            case A_PROC ->
                new AgentFrame.Proc(
                        stream,
                        new AgentProcInfo(
                                r.str("id"),
                                r.u8("kind"),
                                r.u32("pid"),
                                r.i64("started_ms"),
                                r.bool("running"),
                                r.i32("status"),
                                r.bool("signaled"),
                                r.strs("argv"),
                                r.i64("out_start"),
                                r.i64("out_end"),
                                r.i64("err_start"),
                                r.i64("err_end")));
            case A_ERROR ->
                new AgentFrame.Error(stream, (int) Math.min(r.u32("code"), Integer.MAX_VALUE), r.str("message"));
            default ->
                throw new AgentProtocolException(
                        typeName(type, true) + " on stream " + Integer.toUnsignedString(stream) + " is unknown");
        };
        r.end();
        return f;
    }

    /**
     * Decodes one client frame's payload (for fake agents in tests).
     *
     * @param type the frame type
     * @param stream the stream id
     * @param payload exactly the payload
     * @return the frame
     */
    static ClientFrame decodeClient(int type, int stream, ByteBuffer payload) {
        Reader r = new Reader(payload, typeName(type, false) + " on stream " + Integer.toUnsignedString(stream));
        ClientFrame f = switch (type) {
            case HELLO -> new ClientFrame.Hello(stream, r.u16("min_version"), r.u16("max_version"), r.str("client"));
            case PING -> new ClientFrame.Ping(stream, r.i64("token"));
            case TIMERS -> new ClientFrame.Timers(stream, r.i64("deadline_ms"), r.i64("idle_ms"));
            case SPAWN ->
                new ClientFrame.Spawn(
                        stream,
                        (int) r.u32("flags"),
                        r.u16("cols"),
                        r.u16("rows"),
                        r.u32("credit"),
                        r.u32("ring_bytes"),
                        r.u8("overflow"),
                        r.str("cwd"),
                        r.strs("argv"),
                        r.strs("env"));
            case DATA -> new ClientFrame.Data(stream, r.rest());
            case EOF -> new ClientFrame.Eof(stream);
            case SIGNAL -> new ClientFrame.Signal(stream, (int) r.u32("signal"));
            case RESIZE -> new ClientFrame.Resize(stream, r.u16("cols"), r.u16("rows"));
            case CREDIT -> new ClientFrame.Credit(stream, r.u8("fd"), r.u32("bytes"));
            case CLOSE -> new ClientFrame.Close(stream);
            case READ -> new ClientFrame.Read(stream, r.str("path"), r.i64("offset"), r.i64("length"), r.u32("credit"));
            case WRITE -> {
                ClientFrame.Write w =
                        new ClientFrame.Write(stream, r.str("path"), (int) r.u32("mode"), (int) r.u32("flags"));
                r.u32("reserved");
                yield w;
            }
            case LIST -> new ClientFrame.ListDir(stream, r.str("path"), r.u32("depth"), r.u32("credit"));
            case STAT -> new ClientFrame.Stat(stream, r.str("path"));
            case MKDIR -> new ClientFrame.Mkdir(stream, r.str("path"), (int) r.u32("mode"), r.bool("parents"));
            case REMOVE -> new ClientFrame.Remove(stream, r.str("path"), r.bool("recursive"));
            case MOVE -> new ClientFrame.Move(stream, r.str("from"), r.str("to"));
            case SYMLINK -> new ClientFrame.Symlink(stream, r.str("path"), r.str("target"));
            case CHMOD -> new ClientFrame.Chmod(stream, r.str("path"), (int) r.u32("mode"));
            case WATCH -> new ClientFrame.Watch(stream, r.str("path"), r.bool("recursive"), r.u32("credit"));
            case PROCS -> new ClientFrame.Procs(stream, r.u32("credit"));
            case ATTACH ->
                new ClientFrame.Attach(
                        stream,
                        r.str("id"),
                        r.i64("stdout_from"),
                        r.i64("stderr_from"),
                        r.bool("follow"),
                        r.u32("credit"));
            case INPUT -> new ClientFrame.Input(stream, r.str("id"), r.u8("what"), r.rest());
            default ->
                throw new AgentProtocolException(
                        typeName(type, false) + " on stream " + Integer.toUnsignedString(stream) + " is unknown");
        };
        r.end();
        return f;
    }

    /** Turns one frame's header and payload into a decoded frame. */
    @FunctionalInterface
    interface PayloadDecoder<T> {
        T decode(int type, int stream, ByteBuffer payload);
    }

    /**
     * An incremental decoder: feed it buffers as they arrive, it emits each complete frame. It holds at most one
     * frame's bytes (a header and a payload up to the direction's limit) between calls; a whole frame inside one
     * buffer is decoded in place, without a copy.
     *
     * @param <T> the frame type
     */
    static final class Decoder<T> {
        private final int maxPayload;
        private final boolean fromAgent;
        private final PayloadDecoder<T> payloads;
        private final byte[] header = new byte[HEADER];
        private int headerFill;
        private byte[] payload; // the partial payload, or null
        private int payloadFill;
        private int type;
        private int stream;
        private long frames;
        private int lastLength;

        private Decoder(int maxPayload, boolean fromAgent, PayloadDecoder<T> payloads) {
            this.maxPayload = maxPayload;
            this.fromAgent = fromAgent;
            this.payloads = payloads;
        }

        /** A decoder of the agent's frames, for the client. */
        static Decoder<AgentFrame> ofAgent() {
            return new Decoder<>(MAX_AGENT_PAYLOAD, true, AgentFrames::decodeAgent);
        }

        /** A decoder of the client's frames, for fake agents. */
        static Decoder<ClientFrame> ofClient() {
            return new Decoder<>(MAX_CLIENT_PAYLOAD, false, AgentFrames::decodeClient);
        }

        /** Frames decoded so far. */
        long frames() {
            return frames;
        }

        /** The payload length of the frame being emitted (valid during the consumer's call). */
        int lastLength() {
            return lastLength;
        }

        /** Bytes held between calls (a partial frame). */
        int held() {
            return headerFill + (payload == null ? 0 : HEADER + payloadFill);
        }

        /**
         * Consumes all of {@code in}, emitting every frame it completes.
         *
         * @param in bytes that arrived; read, not kept
         * @param out receives each frame, in order
         * @throws AgentProtocolException on a malformed frame; the decoder is then unusable
         */
        void feed(ByteBuffer in, Consumer<? super T> out) {
            while (in.hasRemaining()) {
                if (payload == null) {
                    if (headerFill == 0 && in.remaining() >= HEADER) {
                        int length = header(
                                in.getInt(in.position()),
                                in.get(in.position() + 4) & 0xFF,
                                in.getInt(in.position() + 5));
                        if (in.remaining() >= HEADER + length) {
                            // the common case: a whole frame in the buffer, decoded in place
                            ByteBuffer slice = in.slice(in.position() + HEADER, length);
                            in.position(in.position() + HEADER + length);
                            emit(slice, out);
                            continue;
                        }
                        in.position(in.position() + HEADER);
                        startPayload(length, out);
                        continue;
                    }
                    int n = Math.min(HEADER - headerFill, in.remaining());
                    in.get(header, headerFill, n);
                    headerFill += n;
                    if (headerFill < HEADER) {
                        return;
                    }
                    headerFill = 0;
                    ByteBuffer h = ByteBuffer.wrap(header);
                    int length = header(h.getInt(0), h.get(4) & 0xFF, h.getInt(5));
                    startPayload(length, out);
                } else {
                    int n = Math.min(payload.length - payloadFill, in.remaining());
                    in.get(payload, payloadFill, n);
                    payloadFill += n;
                    if (payloadFill == payload.length) {
                        ByteBuffer whole = ByteBuffer.wrap(payload);
                        payload = null;
                        payloadFill = 0;
                        emit(whole, out);
                    }
                }
            }
        }

        /** Checks a header; returns the payload length. */
        private int header(int rawLength, int type, int stream) {
            long length = rawLength & 0xFFFF_FFFFL;
            String what = typeName(type, fromAgent) + " on stream " + Integer.toUnsignedString(stream);
            if (!(fromAgent ? knownAgentType(type) : knownClientType(type))) {
                throw new AgentProtocolException("frame " + what + " is unknown (after " + frames + " frames)");
            }
            if (length > maxPayload) {
                throw new AgentProtocolException("frame " + what + " has length " + length + ", beyond " + maxPayload);
            }
            this.type = type;
            this.stream = stream;
            return (int) length;
        }

        private void startPayload(int length, Consumer<? super T> out) {
            if (length == 0) {
                emit(ByteBuffer.allocate(0), out);
            } else {
                payload = new byte[length];
                payloadFill = 0;
            }
        }

        private void emit(ByteBuffer p, Consumer<? super T> out) {
            int length = p.remaining();
            T frame = payloads.decode(type, stream, p);
            frames++;
            lastLength = length;
            out.accept(frame);
        }
    }
}
