package dev.sandbox.implementation.agent;

import dev.sandbox.ExecEvent;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.ProcessNotFoundException;
import java.nio.ByteBuffer;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The processes of one {@link AgentConnection} ({@link AgentConnection#processes()}): foreground processes, each on
 * its own stream, and background processes, which the agent keeps with their output in rings after their stream
 * ended, read back with {@link #attach(String, long, long, boolean)} and fed, signalled and resized by id.
 */
public final class AgentProcessOps {
    private final AgentConnection conn;

    AgentProcessOps(AgentConnection conn) {
        this.conn = conn;
    }

    /**
     * Starts a process on its own stream. Nothing is sent until {@link AgentProcess#events()} is subscribed: the
     * {@code SPAWN} goes out then, so an unsubscribed process never runs.
     *
     * @param spec what to run
     * @return the process
     */
    public AgentProcess spawn(AgentSpawn spec) {
        return new AgentProcess(conn, spec);
    }

    /**
     * Starts a background process: the agent keeps it and its output in rings after this stream ends.
     *
     * @param spec what to run; a non-null {@link AgentSpawn#stdin()} asks for a stdin pipe, fed with {@link
     *     #input(String, byte[])} (the publisher itself is not read)
     * @param ringBytes bytes kept per output fd (65,536 .. 64 MiB)
     * @param throttle {@code true}: stop reading the process while its ring is full of unread bytes; {@code false}:
     *     drop the oldest bytes
     * @return the id and pid
     */
    public Mono<AgentStarted> spawnBackground(AgentSpawn spec, long ringBytes, boolean throttle) {
        if (ringBytes < 65_536 || ringBytes > 64L * 1024 * 1024) {
            return Mono.error(new IllegalArgumentException("ringBytes must be 65536 .. 67108864, was " + ringBytes));
        }
        if (spec.pty() && throttle) {
            return Mono.error(new IllegalArgumentException(
                    "a terminal's ring drops the oldest bytes: throttle must be" + " false with a terminal"));
        }
        int flags = AgentFrames.FLAG_BACKGROUND
                | (spec.pty() ? AgentFrames.FLAG_PTY : 0)
                | (spec.stdin() != null ? AgentFrames.FLAG_STDIN : 0);
        return UnaryCall.send(
                        conn,
                        "spawn " + spec.argv().get(0),
                        true,
                        id -> new ClientFrame.Spawn(
                                id,
                                flags,
                                spec.cols(),
                                spec.rows(),
                                0,
                                ringBytes,
                                throttle ? 1 : 0,
                                spec.cwd(),
                                spec.argv(),
                                spec.envEntries()))
                .map(f -> {
                    if (f instanceof AgentFrame.Started s) {
                        return new AgentStarted(s.pid(), s.id());
                    }
                    throw new AgentProtocolException(
                            "OK without STARTED for a background SPAWN on stream " + f.stream());
                })
                .onErrorMap(AgentErrnoException.class, AgentProcess::launchError);
    }

    /**
     * Reads a background process's output from its rings.
     *
     * @param id the process id
     * @param stdoutFrom the stdout offset to start at
     * @param stderrFrom the stderr offset to start at
     * @param follow keep following until the process exits; else end with what the rings hold now
     * @return {@link AgentAttachEvent.Started}, outputs, and an exit if it ended; {@link OffsetUnavailableException}
     *     for an offset the ring dropped, {@link ProcessNotFoundException} for an unknown id
     */
    public Flux<AgentAttachEvent> attach(String id, long stdoutFrom, long stderrFrom, boolean follow) {
        Objects.requireNonNull(id, "id");
        if (stdoutFrom < 0 || stderrFrom < 0) {
            return Flux.error(new IllegalArgumentException(
                    "offsets must be >= 0, were stdout " + stdoutFrom + " stderr " + stderrFrom));
        }
        return new ItemStream<AgentAttachEvent>(conn, "ATTACH " + id, AgentConnection.WINDOW, 1, 2) {
            private boolean started;

            @Override
            ClientFrame request(int sid) {
                return new ClientFrame.Attach(sid, id, stdoutFrom, stderrFrom, follow, AgentConnection.WINDOW);
            }

            @Override
            AgentAttachEvent map(Item it) {
                return it.value == null
                        ? new AgentAttachEvent.Output(it.fd, it.offset, it.bytes())
                        : (AgentAttachEvent) it.value;
            }

            @Override
            public void onFrame(AgentFrame f, int length) {
                switch (f) {
                    case AgentFrame.Started s -> {
                        if (started) {
                            throw AgentStream.unexpected(f, what + ", a second STARTED");
                        }
                        started = true;
                        push(Item.value(new AgentAttachEvent.Started(s.pid(), s.id()), 0));
                    }
                    case AgentFrame.Output o -> {
                        if (o.bytes().length > 0) { // an empty chunk would be queued at no cost: never
                            push(Item.chunk(o.fd(), o.offset(), o.bytes()));
                        }
                    }
                    case AgentFrame.Exit e -> {
                        push(Item.value(
                                new AgentAttachEvent.Exit(e.status(), e.signaled(), e.oomKilled(), e.endedMs()), 0));
                        complete();
                    }
                    case AgentFrame.End e -> complete();
                    case AgentFrame.Error e ->
                        attachError(id, stdoutFrom, stderrFrom, e).subscribe(x -> {}, this::fault);
                    default -> throw AgentStream.unexpected(f, what);
                }
            }
        };
    }

    private Mono<Void> attachError(String id, long stdoutFrom, long stderrFrom, AgentFrame.Error e) {
        if (e.code() == AgentErrnoException.NO_PROCESS) {
            return Mono.error(new ProcessNotFoundException(conn.options().sessionId(), id));
        }
        if (e.code() != AgentErrnoException.OFFSET_GONE) {
            return Mono.error(new AgentErrnoException("attach " + id, e.code(), e.message()));
        }
        // "stdout <start>" or "stderr <start>": the ring's end comes from PROCS
        String[] parts = e.message().trim().split(" ");
        boolean stdout = parts.length > 0 && parts[0].equals("stdout");
        long start;
        try {
            start = parts.length == 2 ? Long.parseLong(parts[1]) : -1;
        } catch (NumberFormatException x) {
            start = -1;
        }
        if (start < 0 || !(stdout || parts[0].equals("stderr"))) {
            return Mono.error(new AgentProtocolException("OFFSET_GONE for " + id + " with message '" + e.message()
                    + "' instead of 'stdout <start>' or 'stderr <start>'"));
        }
        long first = start;
        ExecEvent.StreamKind kind = stdout ? ExecEvent.StreamKind.STDOUT : ExecEvent.StreamKind.STDERR;
        long requested = stdout ? stdoutFrom : stderrFrom;
        return procs().filter(p -> p.id().equals(id))
                .next()
                .map(p -> stdout ? p.outEnd() : p.errEnd())
                .onErrorReturn(first)
                .defaultIfEmpty(first)
                .flatMap(end -> Mono.error(new OffsetUnavailableException(id, kind, requested, first, end)));
    }

    /**
     * Lists the background processes, oldest first.
     *
     * @return the processes
     */
    public Flux<AgentProcInfo> procs() {
        return new ItemStream<AgentProcInfo>(conn, "PROCS", AgentConnection.ITEM_WINDOW, 0) {
            @Override
            ClientFrame request(int sid) {
                return new ClientFrame.Procs(sid, AgentConnection.ITEM_WINDOW);
            }

            @Override
            AgentProcInfo map(Item it) {
                return (AgentProcInfo) it.value;
            }

            @Override
            public void onFrame(AgentFrame f, int length) {
                switch (f) {
                    case AgentFrame.Proc p -> push(Item.value(p.info(), length));
                    case AgentFrame.End e -> complete();
                    case AgentFrame.Error e -> fault(new AgentErrnoException("procs", e.code(), e.message()));
                    default -> throw AgentStream.unexpected(f, what);
                }
            }
        };
    }

    /**
     * Writes to a background process's stdin (at most 64 KiB).
     *
     * @param id the process
     * @param bytes the bytes
     * @return completes when the pipe took them; {@link AgentErrnoException} {@code EAGAIN} when it is full
     */
    public Mono<Void> input(String id, byte[] bytes) {
        if (bytes.length > AgentFrames.MAX_DATA) {
            return Mono.error(new IllegalArgumentException("input of " + bytes.length + " bytes, more than 65536"));
        }
        return inputFrame(id, 0, bytes);
    }

    /**
     * Closes a background process's stdin.
     *
     * @param id the process
     * @return completes when closed
     */
    public Mono<Void> closeInput(String id) {
        return inputFrame(id, 1, new byte[0]);
    }

    /**
     * Signals a background process's group.
     *
     * @param id the process
     * @param signal the signal number
     * @return completes when sent
     */
    public Mono<Void> signal(String id, int signal) {
        return inputFrame(id, 2, ByteBuffer.allocate(4).putInt(signal).array());
    }

    /**
     * Resizes a background process's terminal.
     *
     * @param id the process
     * @param cols columns
     * @param rows rows
     * @return completes when done
     */
    public Mono<Void> resize(String id, int cols, int rows) {
        return inputFrame(
                id,
                3,
                ByteBuffer.allocate(4)
                        .putShort((short) cols)
                        .putShort((short) rows)
                        .array());
    }

    private Mono<Void> inputFrame(String id, int what, byte[] bytes) {
        Objects.requireNonNull(id, "id");
        return UnaryCall.send(conn, "input to " + id, false, sid -> new ClientFrame.Input(sid, id, what, bytes))
                .onErrorMap(
                        e -> e instanceof AgentErrnoException a && a.code() == AgentErrnoException.NO_PROCESS,
                        e -> new ProcessNotFoundException(conn.options().sessionId(), id))
                .then();
    }
}
