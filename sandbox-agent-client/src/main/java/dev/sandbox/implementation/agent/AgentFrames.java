package dev.sandbox.implementation.agent;

/**
 * The frames of PROTOCOL.md: a 9-byte header ({@code u32 length, u8 type, u32 stream}) and a payload. This class is
 * the vocabulary: the limits, the frame types and their names. {@link FrameEncoder} encodes frames (with a {@link
 * PayloadWriter}); a bounded incremental {@link FrameDecoder} splits bytes into frames and {@link PayloadDecoders}
 * parses each payload (with a {@link PayloadReader}), validating every count and length against the bytes present and
 * the protocol's limits.
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
    static final int CONNECT = 0x33;
    static final int LISTEN = 0x34;
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
    static final int A_ACCEPTED = 0x9A;
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
                    case A_ACCEPTED -> "ACCEPTED";
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
                    case CONNECT -> "CONNECT";
                    case LISTEN -> "LISTEN";
                    default -> null;
                };
        return name != null ? name : String.format("type 0x%02x", type);
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
                    A_ACCEPTED,
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
                    INPUT,
                    CONNECT,
                    LISTEN -> true;
            default -> false;
        };
    }
}
