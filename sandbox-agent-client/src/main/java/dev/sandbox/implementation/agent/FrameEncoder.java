package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;

/**
 * Encodes frames, both directions: the client's for the connection, the agent's for the tests' fake agents. A field
 * beyond its limit is an {@link IllegalArgumentException} naming the frame and the field.
 */
final class FrameEncoder {
    private FrameEncoder() {}

    private static PayloadWriter client(int type, int stream, int hint) {
        return new PayloadWriter(type, stream, hint, AgentFrames.MAX_CLIENT_PAYLOAD);
    }

    private static PayloadWriter agent(int type, int stream, int hint) {
        return new PayloadWriter(type, stream, hint, AgentFrames.MAX_AGENT_PAYLOAD);
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
                client(AgentFrames.HELLO, h.stream(), 16)
                        .u16(h.minVersion())
                        .u16(h.maxVersion())
                        .str("client", h.client())
                        .finish();
            case ClientFrame.Ping p ->
                client(AgentFrames.PING, p.stream(), 8).u64(p.token()).finish();
            case ClientFrame.Timers t ->
                client(AgentFrames.TIMERS, t.stream(), 16)
                        .u64(t.deadlineMs())
                        .u64(t.idleMs())
                        .finish();
            case ClientFrame.Spawn s ->
                client(AgentFrames.SPAWN, s.stream(), 64)
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
                if (d.bytes().length < 1 || d.bytes().length > AgentFrames.MAX_DATA) {
                    throw new IllegalArgumentException(
                            "DATA of " + d.bytes().length + " bytes (1.." + AgentFrames.MAX_DATA + ")");
                }
                yield client(AgentFrames.DATA, d.stream(), d.bytes().length)
                        .bytes(d.bytes())
                        .finish();
            }
            case ClientFrame.Eof e -> client(AgentFrames.EOF, e.stream(), 0).finish();
            case ClientFrame.Signal s ->
                client(AgentFrames.SIGNAL, s.stream(), 4).u32(s.signal()).finish();
            case ClientFrame.Resize r ->
                client(AgentFrames.RESIZE, r.stream(), 4)
                        .u16(r.cols())
                        .u16(r.rows())
                        .finish();
            case ClientFrame.Credit c ->
                client(AgentFrames.CREDIT, c.stream(), 5)
                        .u8(c.fd())
                        .u32(c.bytes())
                        .finish();
            case ClientFrame.Close c -> client(AgentFrames.CLOSE, c.stream(), 0).finish();
            case ClientFrame.Read r ->
                client(AgentFrames.READ, r.stream(), 32)
                        .str("path", r.path())
                        .u64(r.offset())
                        .u64(r.length())
                        .u32(r.credit())
                        .finish();
            case ClientFrame.Write w ->
                client(AgentFrames.WRITE, w.stream(), 32)
                        .str("path", w.path())
                        .u32(w.mode())
                        .u32(w.flags())
                        .u32(0)
                        .finish();
            case ClientFrame.ListDir l ->
                client(AgentFrames.LIST, l.stream(), 32)
                        .str("path", l.path())
                        .u32(l.depth())
                        .u32(l.credit())
                        .finish();
            case ClientFrame.Stat s ->
                client(AgentFrames.STAT, s.stream(), 32).str("path", s.path()).finish();
            case ClientFrame.Mkdir m ->
                client(AgentFrames.MKDIR, m.stream(), 32)
                        .str("path", m.path())
                        .u32(m.mode())
                        .u8(m.parents() ? 1 : 0)
                        .finish();
            case ClientFrame.Remove r ->
                client(AgentFrames.REMOVE, r.stream(), 32)
                        .str("path", r.path())
                        .u8(r.recursive() ? 1 : 0)
                        .finish();
            case ClientFrame.Move m ->
                client(AgentFrames.MOVE, m.stream(), 64)
                        .str("from", m.from())
                        .str("to", m.to())
                        .finish();
            case ClientFrame.Symlink l ->
                client(AgentFrames.SYMLINK, l.stream(), 64)
                        .str("path", l.path())
                        .str("target", l.target())
                        .finish();
            case ClientFrame.Chmod m ->
                client(AgentFrames.CHMOD, m.stream(), 32)
                        .str("path", m.path())
                        .u32(m.mode())
                        .finish();
            case ClientFrame.Watch w ->
                client(AgentFrames.WATCH, w.stream(), 32)
                        .str("path", w.path())
                        .u8(w.recursive() ? 1 : 0)
                        .u32(w.credit())
                        .finish();
            case ClientFrame.Procs p ->
                client(AgentFrames.PROCS, p.stream(), 4).u32(p.credit()).finish();
            case ClientFrame.Attach a ->
                client(AgentFrames.ATTACH, a.stream(), 32)
                        .str("id", a.id())
                        .u64(a.stdoutFrom())
                        .u64(a.stderrFrom())
                        .u8(a.follow() ? 1 : 0)
                        .u32(a.credit())
                        .finish();
            case ClientFrame.Input i ->
                client(AgentFrames.INPUT, i.stream(), 16 + i.bytes().length)
                        .str("id", i.id())
                        .u8(i.what())
                        .bytes(i.bytes())
                        .finish();
            case ClientFrame.Connect c ->
                client(AgentFrames.CONNECT, c.stream(), 6)
                        .u16(c.port())
                        .u32(c.credit())
                        .finish();
            case ClientFrame.Listen l ->
                client(AgentFrames.LISTEN, l.stream(), 8)
                        .u16(l.port())
                        .u32(l.credit())
                        .u16(l.maxConns())
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
                        ? agent(AgentFrames.A_OK, o.stream(), 0).finish()
                        : agent(AgentFrames.A_OK, o.stream(), 64).info(o.info()).finish();
            case AgentFrame.Hello h ->
                agent(AgentFrames.A_HELLO, h.stream(), 48)
                        .u16(h.hello().version())
                        .str("agent", h.hello().agent())
                        .u32(h.hello().pid())
                        .u64(h.hello().deadlineMs())
                        .u64(h.hello().idleMs())
                        .u64(h.hello().nowMs())
                        .finish();
            case AgentFrame.Pong p ->
                agent(AgentFrames.A_PONG, p.stream(), 8).u64(p.token()).finish();
            case AgentFrame.Credit c ->
                agent(AgentFrames.A_CREDIT, c.stream(), 5)
                        .u8(c.fd())
                        .u32(c.bytes())
                        .finish();
            case AgentFrame.Started s ->
                agent(AgentFrames.A_STARTED, s.stream(), 16)
                        .u32(s.pid())
                        .str("id", s.id())
                        .u32(s.dataCredit())
                        .finish();
            case AgentFrame.Output o ->
                agent(AgentFrames.A_OUTPUT, o.stream(), 9 + o.bytes().length)
                        .u8(o.fd())
                        .u64(o.offset())
                        .bytes(o.bytes())
                        .finish();
            case AgentFrame.Exit e ->
                agent(AgentFrames.A_EXIT, e.stream(), 14)
                        .u32(e.status())
                        .u8(e.signaled() ? 1 : 0)
                        .u8(e.oomKilled() ? 1 : 0)
                        .u64(e.endedMs())
                        .finish();
            case AgentFrame.Data d ->
                agent(AgentFrames.A_DATA, d.stream(), d.bytes().length)
                        .bytes(d.bytes())
                        .finish();
            case AgentFrame.End e -> agent(AgentFrames.A_END, e.stream(), 0).finish();
            case AgentFrame.Entry e ->
                agent(AgentFrames.A_ENTRY, e.stream(), 64).info(e.info()).finish();
            case AgentFrame.Event e ->
                agent(AgentFrames.A_EVENT, e.stream(), 32)
                        .u8(e.kind())
                        .str("path", e.path())
                        .finish();
            case AgentFrame.Ready r ->
                agent(AgentFrames.A_READY, r.stream(), 4).u32(r.dataCredit()).finish();
            case AgentFrame.Accepted a ->
                agent(AgentFrames.A_ACCEPTED, a.stream(), 10)
                        .u32(Integer.toUnsignedLong(a.listenStream()))
                        .u16(a.peerPort())
                        .u32(a.dataCredit())
                        .finish();
            case AgentFrame.Proc p -> {
                AgentProcInfo i = p.info();
                yield agent(AgentFrames.A_PROC, p.stream(), 96)
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
                agent(AgentFrames.A_ERROR, e.stream(), 32)
                        .u32(e.code())
                        .str("message", e.message())
                        .finish();
        };
    }
}
