package dev.sandbox.implementation.agent;

import java.nio.ByteBuffer;

/**
 * Decodes one frame's payload into a frame, both directions: the agent's for the connection, the client's for the
 * tests' fake agents. The payload must parse exactly: a short field, a count beyond its limit, a value out of its
 * range or bytes left over are an {@link AgentProtocolException}.
 */
final class PayloadDecoders {
    private PayloadDecoders() {}

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
        PayloadReader r = new PayloadReader(
                payload, AgentFrames.typeName(type, true) + " on stream " + Integer.toUnsignedString(stream));
        AgentFrame f = switch (type) {
            case AgentFrames.A_OK -> new AgentFrame.Ok(stream, r.remaining() == 0 ? null : r.info());
            case AgentFrames.A_HELLO ->
                new AgentFrame.Hello(
                        stream,
                        new AgentHello(
                                r.u16("version"),
                                r.str("agent"),
                                r.u32("pid"),
                                r.i64("deadline_ms"),
                                r.i64("idle_ms"),
                                r.i64("now_ms")));
            case AgentFrames.A_PONG -> new AgentFrame.Pong(stream, r.i64("token"));
            case AgentFrames.A_CREDIT -> new AgentFrame.Credit(stream, r.u8("fd"), r.u32("bytes"));
            case AgentFrames.A_STARTED ->
                new AgentFrame.Started(stream, r.u32("pid"), r.str("id"), r.u32("data_credit"));
            case AgentFrames.A_OUTPUT -> {
                int fd = r.u8("fd");
                if (fd != 1 && fd != 2) {
                    throw new AgentProtocolException("OUTPUT on stream " + Integer.toUnsignedString(stream) + ": fd "
                            + fd + " is neither 1 nor 2");
                }
                yield new AgentFrame.Output(stream, fd, r.i64("offset"), r.rest());
            }
            case AgentFrames.A_EXIT ->
                new AgentFrame.Exit(
                        stream, r.i32("status"), r.bool("signaled"), r.bool("oom_killed"), r.i64("ended_ms"));
            case AgentFrames.A_DATA -> new AgentFrame.Data(stream, r.rest());
            case AgentFrames.A_END -> new AgentFrame.End(stream);
            case AgentFrames.A_ENTRY -> new AgentFrame.Entry(stream, r.info());
            case AgentFrames.A_EVENT -> {
                int kind = r.u8("kind");
                if (kind < 1 || kind > 4) {
                    throw new AgentProtocolException(
                            "EVENT on stream " + Integer.toUnsignedString(stream) + ": kind " + kind + " unknown");
                }
                yield new AgentFrame.Event(stream, kind, r.str("path"));
            }
            case AgentFrames.A_READY -> new AgentFrame.Ready(stream, r.u32("data_credit"));
            case AgentFrames.A_ACCEPTED ->
                new AgentFrame.Accepted(stream, (int) r.u32("listen_stream"), r.u16("peer_port"), r.u32("data_credit"));
            case AgentFrames.A_PROC ->
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
            case AgentFrames.A_ERROR ->
                new AgentFrame.Error(stream, (int) Math.min(r.u32("code"), Integer.MAX_VALUE), r.str("message"));
            default ->
                throw new AgentProtocolException(AgentFrames.typeName(type, true) + " on stream "
                        + Integer.toUnsignedString(stream) + " is unknown");
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
        PayloadReader r = new PayloadReader(
                payload, AgentFrames.typeName(type, false) + " on stream " + Integer.toUnsignedString(stream));
        ClientFrame f = switch (type) {
            case AgentFrames.HELLO ->
                new ClientFrame.Hello(stream, r.u16("min_version"), r.u16("max_version"), r.str("client"));
            case AgentFrames.PING -> new ClientFrame.Ping(stream, r.i64("token"));
            case AgentFrames.TIMERS -> new ClientFrame.Timers(stream, r.i64("deadline_ms"), r.i64("idle_ms"));
            case AgentFrames.SPAWN ->
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
            case AgentFrames.DATA -> new ClientFrame.Data(stream, r.rest());
            case AgentFrames.EOF -> new ClientFrame.Eof(stream);
            case AgentFrames.SIGNAL -> new ClientFrame.Signal(stream, (int) r.u32("signal"));
            case AgentFrames.RESIZE -> new ClientFrame.Resize(stream, r.u16("cols"), r.u16("rows"));
            case AgentFrames.CREDIT -> new ClientFrame.Credit(stream, r.u8("fd"), r.u32("bytes"));
            case AgentFrames.CLOSE -> new ClientFrame.Close(stream);
            case AgentFrames.READ ->
                new ClientFrame.Read(stream, r.str("path"), r.i64("offset"), r.i64("length"), r.u32("credit"));
            case AgentFrames.WRITE -> {
                ClientFrame.Write w =
                        new ClientFrame.Write(stream, r.str("path"), (int) r.u32("mode"), (int) r.u32("flags"));
                r.u32("reserved");
                yield w;
            }
            case AgentFrames.LIST -> new ClientFrame.ListDir(stream, r.str("path"), r.u32("depth"), r.u32("credit"));
            case AgentFrames.STAT -> new ClientFrame.Stat(stream, r.str("path"));
            case AgentFrames.MKDIR ->
                new ClientFrame.Mkdir(stream, r.str("path"), (int) r.u32("mode"), r.bool("parents"));
            case AgentFrames.REMOVE -> new ClientFrame.Remove(stream, r.str("path"), r.bool("recursive"));
            case AgentFrames.MOVE -> new ClientFrame.Move(stream, r.str("from"), r.str("to"));
            case AgentFrames.SYMLINK -> new ClientFrame.Symlink(stream, r.str("path"), r.str("target"));
            case AgentFrames.CHMOD -> new ClientFrame.Chmod(stream, r.str("path"), (int) r.u32("mode"));
            case AgentFrames.WATCH ->
                new ClientFrame.Watch(stream, r.str("path"), r.bool("recursive"), r.u32("credit"));
            case AgentFrames.PROCS -> new ClientFrame.Procs(stream, r.u32("credit"));
            case AgentFrames.ATTACH ->
                new ClientFrame.Attach(
                        stream,
                        r.str("id"),
                        r.i64("stdout_from"),
                        r.i64("stderr_from"),
                        r.bool("follow"),
                        r.u32("credit"));
            case AgentFrames.INPUT -> new ClientFrame.Input(stream, r.str("id"), r.u8("what"), r.rest());
            case AgentFrames.CONNECT -> new ClientFrame.Connect(stream, r.u16("port"), r.u32("credit"));
            case AgentFrames.LISTEN ->
                new ClientFrame.Listen(stream, r.u16("port"), r.u32("credit"), r.u16("max_conns"));
            default ->
                throw new AgentProtocolException(AgentFrames.typeName(type, false) + " on stream "
                        + Integer.toUnsignedString(stream) + " is unknown");
        };
        r.end();
        return f;
    }
}
