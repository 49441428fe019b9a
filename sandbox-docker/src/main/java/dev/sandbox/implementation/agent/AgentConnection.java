package dev.sandbox.implementation.agent;

import dev.sandbox.BackendException;
import dev.sandbox.ExecEvent;
import dev.sandbox.OffsetUnavailableException;
import dev.sandbox.ProcessNotFoundException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Operators;
import reactor.core.publisher.Sinks;

/**
 * One connection to a sandbox agent (PROTOCOL.md, version 1) over any {@link AgentTransport}: the {@code HELLO}
 * handshake, then any number of multiplexed streams (processes, file operations, watches, background processes).
 *
 * <pre>{@code
 * AgentConnection agent = AgentConnection.open(transport, AgentConnection.Options.defaults()).block(timeout);
 * agent.spawn(AgentSpawn.of("echo", "hi")).events().subscribe(System.out::println);
 * }</pre>
 *
 * <p>Bounded by design: at most {@value #MAX_STREAMS} streams are open (beyond: an {@link AgentErrnoException} with
 * code {@code LIMIT}); every producing stream has at most {@value #WINDOW} bytes credited per fd ({@value #READ_WINDOW}
 * for a file read), and credit is
 * returned only as the subscriber consumes, so a subscriber that stops requesting stops the agent's source (a process
 * blocks in {@code write()}). Everything the client queues to send is per-stream state (a pending request, credit
 * counters, a signal mask, one terminal size, one buffer of stdin) flushed in batches as the transport demands, so
 * the outbound side cannot grow beyond the open streams either. Frames for unknown ids are dropped and counted. An
 * agent that sends a malformed frame or more than it was credited breaks the connection: every open stream fails
 * with an {@link AgentProtocolException}. The end of the transport fails every open stream with the error from
 * {@link Options#lostError()}.
 *
 * <p>Thread-safe; no method blocks. Subscribers are signalled on the transport's thread or on the requesting thread.
 */
public final class AgentConnection {
    private static final Logger LOG = LoggerFactory.getLogger(AgentConnection.class);

    /** Lowest protocol version spoken. */
    public static final int MIN_VERSION = 1;
    /** Highest protocol version spoken. */
    public static final int MAX_VERSION = 1;
    /** Streams open at once per connection. */
    public static final int MAX_STREAMS = 4096;
    /** Bytes credited at most per producing stream and fd. */
    public static final int WINDOW = 256 * 1024;

    /**
     * Credit of a file read: one stream per read, its chunks go straight to the reader, and a round trip through a
     * daemon's exec stream is long enough that a smaller window leaves the pipe idle.
     */
    public static final int READ_WINDOW = 2 * 1024 * 1024;
    /**
     * Bytes credited to a stream of small items ({@code LIST} entries, {@code WATCH} events, {@code PROC}s): each
     * queued item costs an object beyond its bytes, so these get a smaller window.
     */
    public static final int ITEM_WINDOW = 64 * 1024;
    /** Pings in flight at once. */
    static final int MAX_PINGS = 64;
    /** Size a batch of small frames grows to before it is sent. */
    static final int BATCH = 64 * 1024;
    /** Queued chunks beyond which new chunks are merged into queued ones. */
    static final int MERGE_AFTER = 16;
    /** The largest merged chunk. */
    static final int MAX_MERGED = 64 * 1024;
    /** A ceiling on the agent's credit for our DATA, so a hostile sum cannot overflow. */
    static final long MAX_DATA_CREDIT = 1L << 40;

    /**
     * How a connection behaves.
     *
     * @param client the client name sent in {@code HELLO}
     * @param sessionId the session, named in {@link ProcessNotFoundException}
     * @param helloTimeout how long to wait for the agent's {@code HELLO}
     * @param replyTimeout how long a one-answer request ({@code STAT}, {@code MKDIR}, {@code PING}, a background
     *     spawn, ...) waits for its answer
     * @param lostError makes the error that open streams fail with when the transport ends: given the transport's
     *     error, or {@code null} when it completed
     */
    public record Options(
            String client,
            String sessionId,
            Duration helloTimeout,
            Duration replyTimeout,
            Function<Throwable, ? extends Throwable> lostError) {

        /** Validates. */
        public Options {
            Objects.requireNonNull(client, "client");
            Objects.requireNonNull(sessionId, "sessionId");
            Objects.requireNonNull(lostError, "lostError");
            if (helloTimeout == null || helloTimeout.isNegative() || helloTimeout.isZero()) {
                throw new IllegalArgumentException("helloTimeout must be positive, was " + helloTimeout);
            }
            if (replyTimeout == null || replyTimeout.isNegative() || replyTimeout.isZero()) {
                throw new IllegalArgumentException("replyTimeout must be positive, was " + replyTimeout);
            }
        }

        /**
         * Defaults: 10 s for {@code HELLO}, 30 s for answers, and a retryable {@link BackendException} "agent
         * connection lost" when the transport ends.
         *
         * @return the options
         */
        public static Options defaults() {
            return new Options(
                    "dev.sandbox java",
                    "(unknown)",
                    Duration.ofSeconds(10),
                    Duration.ofSeconds(30),
                    cause -> new BackendException("agent connection lost", cause, true));
        }

        /**
         * These options with another session id.
         *
         * @param id the session id
         * @return new options
         */
        public Options withSessionId(String id) {
            return new Options(client, id, helloTimeout, replyTimeout, lostError);
        }

        /**
         * These options with another end-of-transport error.
         *
         * @param errors makes the error from the transport's error (or {@code null})
         * @return new options
         */
        public Options withLostError(Function<Throwable, ? extends Throwable> errors) {
            return new Options(client, sessionId, helloTimeout, replyTimeout, errors);
        }

        /**
         * These options with other timeouts.
         *
         * @param hello for {@code HELLO}
         * @param reply for one-answer requests
         * @return new options
         */
        public Options withTimeouts(Duration hello, Duration reply) {
            return new Options(client, sessionId, hello, reply, lostError);
        }
    }

    private final Options options;
    private final Object lock = new Object();
    // guarded by lock
    private final Map<Integer, Stream> streams = new HashMap<>();
    private final ArrayDeque<Stream> ready = new ArrayDeque<>();
    private final ArrayDeque<ByteBuffer> control = new ArrayDeque<>();
    private final Map<Long, Sinks.One<Long>> pings = new HashMap<>();
    private long nextId = 1;
    private long nextToken = 1;
    private int closing;
    private boolean closed;
    private Throwable failure;
    private boolean helloSeen;
    private AgentHello agentHello;
    // end guarded

    private final Sinks.One<AgentHello> hello = Sinks.one();
    private final Sinks.Empty<Void> closedSink = Sinks.empty();
    private final AtomicLong droppedFrames = new AtomicLong();
    private final AtomicLong droppedBytes = new AtomicLong();
    private final AgentFrames.Decoder<AgentFrame> decoder = AgentFrames.Decoder.ofAgent();
    private final Inbound inbound = new Inbound();
    private volatile FluxSink<ByteBuffer> out;
    private final AtomicInteger outWip = new AtomicInteger();

    private AgentConnection(Options options) {
        this.options = options;
    }

    /**
     * Opens the transport, says {@code HELLO} and waits for the agent's (at most {@link Options#helloTimeout()}).
     * Cancelling the returned mono closes the connection.
     *
     * @param transport the byte pipe
     * @param options the options
     * @return the connection once the agent answered; an {@link AgentVersionException} when it speaks no common
     *     version, an {@link AgentProtocolException} when it answers anything else
     */
    public static Mono<AgentConnection> open(AgentTransport transport, Options options) {
        Objects.requireNonNull(transport, "transport");
        Objects.requireNonNull(options, "options");
        return Mono.defer(() -> {
            AgentConnection c = new AgentConnection(options);
            c.start(transport);
            return c.hello
                    .asMono()
                    .timeout(
                            options.helloTimeout(),
                            Mono.error(() -> new BackendException(
                                    "the agent did not answer HELLO within " + options.helloTimeout(), null, true)))
                    .doOnError(c::fail)
                    .doOnCancel(c::close)
                    .thenReturn(c);
        });
    }

    private void start(AgentTransport transport) {
        control.add(AgentFrames.encode(new ClientFrame.Hello(0, MIN_VERSION, MAX_VERSION, options.client())));
        Flux<ByteBuffer> outbound = Flux.create(
                sink -> {
                    out = sink;
                    sink.onRequest(n -> drainOut());
                },
                FluxSink.OverflowStrategy.ERROR);
        try {
            transport.open(outbound).subscribe(inbound);
        } catch (RuntimeException e) {
            fail(new BackendException("could not open the agent transport", e, true));
        }
    }

    // ---------------------------------------------------------------- public surface

    /**
     * The agent's {@code HELLO}.
     *
     * @return what the agent said about itself
     */
    public AgentHello hello() {
        synchronized (lock) {
            return agentHello;
        }
    }

    /**
     * Starts a process on its own stream. Nothing is sent until {@link AgentProcess#events()} is subscribed: the
     * {@code SPAWN} goes out then, so an unsubscribed process never runs.
     *
     * @param spec what to run
     * @return the process
     */
    public AgentProcess spawn(AgentSpawn spec) {
        return new AgentProcess(this, spec);
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
        return unary(
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
        return new ItemStream<AgentAttachEvent>(this, "ATTACH " + id, WINDOW, 1, 2) {
            private boolean started;

            @Override
            ClientFrame request(int sid) {
                return new ClientFrame.Attach(sid, id, stdoutFrom, stderrFrom, follow, WINDOW);
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
                            throw unexpected(f, what + ", a second STARTED");
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
                    default -> throw unexpected(f, what);
                }
            }
        };
    }

    private Mono<Void> attachError(String id, long stdoutFrom, long stderrFrom, AgentFrame.Error e) {
        if (e.code() == AgentErrnoException.NO_PROCESS) {
            return Mono.error(new ProcessNotFoundException(options.sessionId(), id));
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
        return new ItemStream<AgentProcInfo>(this, "PROCS", ITEM_WINDOW, 0) {
            @Override
            ClientFrame request(int sid) {
                return new ClientFrame.Procs(sid, ITEM_WINDOW);
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
                    default -> throw unexpected(f, what);
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
        return unary("input to " + id, false, sid -> new ClientFrame.Input(sid, id, what, bytes))
                .onErrorMap(
                        e -> e instanceof AgentErrnoException a && a.code() == AgentErrnoException.NO_PROCESS,
                        e -> new ProcessNotFoundException(options.sessionId(), id))
                .then();
    }

    /**
     * Reads a regular file.
     *
     * @param path absolute path
     * @param offset where to start
     * @param length at most this many bytes; {@code -1} (2^64-1): to the end
     * @return the content in chunks of at most 64 KiB; {@link AgentErrnoException} on failure
     */
    public Flux<ByteBuffer> read(String path, long offset, long length) {
        Objects.requireNonNull(path, "path");
        return new ItemStream<ByteBuffer>(this, "read " + path, READ_WINDOW, 0) {
            @Override
            ClientFrame request(int sid) {
                return new ClientFrame.Read(sid, path, offset, length, READ_WINDOW);
            }

            @Override
            ByteBuffer map(Item it) {
                return ByteBuffer.wrap(it.buf, 0, it.len);
            }

            @Override
            public void onFrame(AgentFrame f, int len) {
                switch (f) {
                    case AgentFrame.Data d -> {
                        if (d.bytes().length > 0) {
                            push(Item.chunk(0, 0, d.bytes()));
                        }
                    }
                    case AgentFrame.End e -> complete();
                    case AgentFrame.Error e -> fault(new AgentErrnoException("read " + path, e.code(), e.message()));
                    default -> throw unexpected(f, what);
                }
            }
        };
    }

    /**
     * Writes a file atomically: a temporary file in the target's directory, renamed over it when {@code content}
     * completes. Cancelling aborts the write (the agent removes the temporary file).
     *
     * @param path absolute path
     * @param mode permission bits of a new file
     * @param parents create missing parent directories
     * @param content the bytes
     * @return the new file's info
     */
    public Mono<AgentFileInfo> write(String path, int mode, boolean parents, Publisher<ByteBuffer> content) {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(content, "content");
        return Mono.create(sink -> {
            Stream st = new Stream(new Handler() {
                @Override
                public void onFrame(AgentFrame f, int length) {
                    switch (f) {
                        case AgentFrame.Ready r -> {}
                        case AgentFrame.Ok o -> {
                            if (o.info() == null) {
                                sink.error(new AgentProtocolException(
                                        "OK without info for WRITE on stream " + o.stream()));
                            } else {
                                sink.success(o.info());
                            }
                        }
                        case AgentFrame.Error e ->
                            sink.error(new AgentErrnoException("write " + path, e.code(), e.message()));
                        default -> throw unexpected(f, "WRITE " + path);
                    }
                }

                @Override
                public void fail(Throwable t) {
                    sink.error(t);
                }
            });
            st.source = content;
            sink.onCancel(() -> cancel(st));
            Throwable e = open(st, sid -> new ClientFrame.Write(sid, path, mode, parents ? 1 : 0), 0, 0);
            if (e != null) {
                sink.error(e);
            }
        });
    }

    /**
     * Lists a directory.
     *
     * @param path absolute path
     * @param depth 1: its entries; more: also those of subdirectories to that depth
     * @return the entries
     */
    public Flux<AgentFileInfo> list(String path, int depth) {
        Objects.requireNonNull(path, "path");
        if (depth < 1) {
            return Flux.error(new IllegalArgumentException("depth must be >= 1, was " + depth));
        }
        return new ItemStream<AgentFileInfo>(this, "list " + path, ITEM_WINDOW, 0) {
            @Override
            ClientFrame request(int sid) {
                return new ClientFrame.ListDir(sid, path, depth, ITEM_WINDOW);
            }

            @Override
            AgentFileInfo map(Item it) {
                return (AgentFileInfo) it.value;
            }

            @Override
            public void onFrame(AgentFrame f, int length) {
                switch (f) {
                    case AgentFrame.Entry e -> push(Item.value(e.info(), length));
                    case AgentFrame.End e -> complete();
                    case AgentFrame.Error e -> fault(new AgentErrnoException("list " + path, e.code(), e.message()));
                    default -> throw unexpected(f, what);
                }
            }
        };
    }

    /**
     * {@code lstat} of a path.
     *
     * @param path absolute path
     * @return its info
     */
    public Mono<AgentFileInfo> stat(String path) {
        Objects.requireNonNull(path, "path");
        return unary("stat " + path, false, sid -> new ClientFrame.Stat(sid, path))
                .handle((f, sink) -> {
                    if (f instanceof AgentFrame.Ok ok && ok.info() != null) {
                        sink.next(ok.info());
                    } else {
                        sink.error(new AgentProtocolException("OK without info for STAT on stream " + f.stream()));
                    }
                });
    }

    /**
     * Creates a directory.
     *
     * @param path absolute path
     * @param mode its permission bits
     * @param parents create missing parents, and succeed on an existing directory
     * @return completes when done
     */
    public Mono<Void> mkdir(String path, int mode, boolean parents) {
        Objects.requireNonNull(path, "path");
        return unary("mkdir " + path, false, sid -> new ClientFrame.Mkdir(sid, path, mode, parents))
                .then();
    }

    /**
     * Removes a file or directory.
     *
     * @param path absolute path
     * @param recursive remove a directory's content too (never following symlinks)
     * @return completes when done
     */
    public Mono<Void> remove(String path, boolean recursive) {
        Objects.requireNonNull(path, "path");
        return unary("remove " + path, false, sid -> new ClientFrame.Remove(sid, path, recursive))
                .then();
    }

    /**
     * Renames ({@code rename(2)}).
     *
     * @param from absolute path
     * @param to absolute path
     * @return completes when done
     */
    public Mono<Void> move(String from, String to) {
        Objects.requireNonNull(from, "from");
        Objects.requireNonNull(to, "to");
        return unary("move " + from + " to " + to, false, sid -> new ClientFrame.Move(sid, from, to))
                .then();
    }

    /**
     * Makes a symbolic link ({@code symlink(2)}).
     *
     * @param path absolute path of the link
     * @param target its target, stored as given
     * @return completes when done
     */
    public Mono<Void> symlink(String path, String target) {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(target, "target");
        return unary("symlink " + path, false, sid -> new ClientFrame.Symlink(sid, path, target))
                .then();
    }

    /**
     * Sets permission bits, not following a final symlink (a symlink is left as it is).
     *
     * @param path absolute path
     * @param mode the bits, {@code 07777}
     * @return completes when done
     */
    public Mono<Void> chmod(String path, int mode) {
        Objects.requireNonNull(path, "path");
        return unary("chmod " + path, false, sid -> new ClientFrame.Chmod(sid, path, mode))
                .then();
    }

    /**
     * Watches a directory. The first element is {@link AgentWatchEvent.Kind#READY} once every watch is in place,
     * then changes until cancelled.
     *
     * @param path absolute path of a directory
     * @param recursive also its subdirectories, including new ones
     * @return the events
     */
    public Flux<AgentWatchEvent> watch(String path, boolean recursive) {
        Objects.requireNonNull(path, "path");
        return new ItemStream<AgentWatchEvent>(this, "watch " + path, ITEM_WINDOW, 0) {
            private boolean ready;

            @Override
            ClientFrame request(int sid) {
                return new ClientFrame.Watch(sid, path, recursive, ITEM_WINDOW);
            }

            @Override
            AgentWatchEvent map(Item it) {
                return (AgentWatchEvent) it.value;
            }

            @Override
            public void onFrame(AgentFrame f, int length) {
                switch (f) {
                    case AgentFrame.Ready r -> {
                        if (ready) {
                            throw unexpected(f, what + ", a second READY");
                        }
                        ready = true;
                        push(Item.value(new AgentWatchEvent(AgentWatchEvent.Kind.READY, path), 0));
                    }
                    case AgentFrame.Event e -> {
                        AgentWatchEvent.Kind kind = switch (e.kind()) {
                            case 1 -> AgentWatchEvent.Kind.CREATED;
                            case 2 -> AgentWatchEvent.Kind.MODIFIED;
                            case 3 -> AgentWatchEvent.Kind.DELETED;
                            default -> AgentWatchEvent.Kind.OVERFLOW;
                        };
                        push(Item.value(new AgentWatchEvent(kind, e.path()), length));
                    }
                    case AgentFrame.Error e -> fault(new AgentErrnoException("watch " + path, e.code(), e.message()));
                    case AgentFrame.End e -> complete();
                    default -> throw unexpected(f, what);
                }
            }
        };
    }

    /**
     * Changes the agent's deadline and idle timeout.
     *
     * @param deadlineMs epoch milliseconds, 0 for none
     * @param idleMs milliseconds, 0 for none
     * @return completes when the agent took them
     */
    public Mono<Void> timers(long deadlineMs, long idleMs) {
        return unary("timers", false, sid -> new ClientFrame.Timers(sid, deadlineMs, idleMs))
                .then();
    }

    /**
     * Measures a round trip.
     *
     * @return the time from sending {@code PING} to its {@code PONG}
     */
    public Mono<Duration> ping() {
        return Mono.defer(() -> {
            Sinks.One<Long> pong = Sinks.one();
            long token;
            long started = System.nanoTime();
            synchronized (lock) {
                if (closed) {
                    return Mono.error(failure);
                }
                if (pings.size() >= MAX_PINGS) {
                    return Mono.error(
                            new AgentErrnoException("ping", AgentErrnoException.LIMIT, MAX_PINGS + " pings in flight"));
                }
                token = nextToken++;
                pings.put(token, pong);
                control.add(AgentFrames.encode(new ClientFrame.Ping(0, token)));
            }
            drainOut();
            return pong.asMono()
                    .map(x -> Duration.ofNanos(System.nanoTime() - started))
                    .timeout(options.replyTimeout(), Mono.error(() -> noAnswer("PING")))
                    .doFinally(s -> {
                        synchronized (lock) {
                            pings.remove(token);
                        }
                    });
        });
    }

    /** Closes the connection: the transport is cancelled and every open stream fails. Idempotent. */
    public void close() {
        fail(new BackendException("agent connection closed", null, false));
    }

    /**
     * Completes when the connection ended, for any reason.
     *
     * @return the end
     */
    public Mono<Void> onClose() {
        return closedSink.asMono();
    }

    /**
     * Whether the connection ended.
     *
     * @return true once closed
     */
    public boolean isClosed() {
        synchronized (lock) {
            return closed;
        }
    }

    /**
     * Frames dropped because their stream id was unknown or closed.
     *
     * @return the count
     */
    public long droppedFrames() {
        return droppedFrames.get();
    }

    /**
     * Payload bytes of the dropped frames.
     *
     * @return the bytes
     */
    public long droppedBytes() {
        return droppedBytes.get();
    }

    /**
     * Streams open now (including those whose {@code CLOSE} is not yet sent).
     *
     * @return the count
     */
    public int openStreams() {
        synchronized (lock) {
            return streams.size() + closing;
        }
    }

    /**
     * Bytes the decoder holds between transport buffers (at most one frame).
     *
     * @return the bytes
     */
    public int heldBytes() {
        synchronized (inbound) {
            return decoder.held();
        }
    }

    // ---------------------------------------------------------------- streams

    /** What a stream does with the frames for it; called on the transport's thread, outside the lock. */
    interface Handler {
        void onFrame(AgentFrame f, int payloadLength);

        void fail(Throwable t);
    }

    /** A stream's protocol state: everything to send for it, its credits. Guarded by the connection's lock. */
    static final class Stream {
        final Handler handler;
        int id;
        boolean open;
        ByteBuffer request;
        boolean requestSent;
        boolean closePending;
        long signals;
        boolean resizePending;
        /** A resize or signal was asked for while no data was pending: it goes before the next data. */
        boolean controlFirst;

        int cols;
        int rows;
        final long[] creditOut = new long[3];
        /** Consumed bytes go back as credit once this many accumulated. */
        long creditStep;

        final long[] credit = new long[3];
        final long[] consumed = new long[3];
        boolean queued;
        // outbound data (stdin, a write's content)
        Publisher<ByteBuffer> source;
        Pump pump;
        /**
         * The source called the pump's {@code onSubscribe}: only then can a request reach it. A source may do so later
         * and on another thread (a server's request body subscribes on its event loop), after the agent's credit came.
         */
        boolean pumpSubscribed;

        ByteBuffer dataPending;
        boolean sourceDone;
        /** STARTED or READY arrived: the agent takes DATA and EOF from now on. */
        boolean accepting;

        boolean eofSent;
        boolean pumpRequested;
        long dataCredit;

        Stream(Handler handler) {
            this.handler = handler;
        }
    }

    /**
     * Opens a stream: takes an id, queues its request.
     *
     * @return {@code null}, or why it could not be opened
     */
    Throwable open(Stream st, IntFunction<ClientFrame> request, long creditFd0, long creditOutput) {
        synchronized (lock) {
            if (closed) {
                return failure;
            }
            if (streams.size() + closing >= MAX_STREAMS) {
                return new AgentErrnoException(
                        "open a stream",
                        AgentErrnoException.LIMIT,
                        MAX_STREAMS + " streams are open on this connection");
            }
            if (nextId > Integer.MAX_VALUE) {
                return new BackendException("this agent connection used all its stream ids", null, true);
            }
            int id = (int) nextId;
            try {
                st.request = AgentFrames.encode(request.apply(id));
            } catch (IllegalArgumentException e) {
                return e;
            }
            nextId++;
            st.id = id;
            st.open = true;
            st.credit[0] = creditFd0;
            st.creditStep = Math.max(1, Math.max(creditFd0, creditOutput) / 4);
            st.credit[1] = creditOutput;
            st.credit[2] = creditOutput;
            streams.put(id, st);
            markReady(st);
            if (st.source != null) {
                st.pump = new Pump(st);
            }
        }
        if (st.pump != null) {
            st.source.subscribe(st.pump);
        }
        drainOut();
        return null;
    }

    /** The subscriber gave up: {@code CLOSE} (the agent kills a foreground process, aborts a write). */
    void cancel(Stream st) {
        synchronized (lock) {
            if (!st.open) {
                return;
            }
            leave(st);
            if (st.requestSent) {
                st.closePending = true;
                closing++;
                markReady(st);
            } else {
                st.request = null; // never sent: the agent never heard of it
            }
        }
        disposePump(st);
        drainOut();
    }

    /** Takes a stream out of the open ones; with the lock. */
    private void leave(Stream st) {
        st.open = false;
        streams.remove(st.id);
        st.dataPending = null;
        st.signals = 0;
        st.resizePending = false;
        java.util.Arrays.fill(st.creditOut, 0);
    }

    private static void disposePump(Stream st) {
        Pump p = st.pump;
        if (p != null) {
            p.dispose();
        }
    }

    void signal(Stream st, int signal) {
        if (signal < 1 || signal > 64) {
            throw new IllegalArgumentException("signal must be 1..64, was " + signal);
        }
        synchronized (lock) {
            if (!st.open) {
                return;
            }
            st.signals |= 1L << (signal - 1);
            st.controlFirst |= st.dataPending == null;
            markReady(st);
        }
        drainOut();
    }

    void resize(Stream st, int cols, int rows) {
        if (cols < 1 || cols > 0xFFFF || rows < 1 || rows > 0xFFFF) {
            throw new IllegalArgumentException("terminal size must be 1..65535, was " + cols + "x" + rows);
        }
        synchronized (lock) {
            if (!st.open) {
                return;
            }
            st.resizePending = true;
            st.cols = cols;
            st.rows = rows;
            st.controlFirst |= st.dataPending == null;
            markReady(st);
        }
        drainOut();
    }

    /** The subscriber consumed an item: its bytes go back to the agent as credit, in steps. */
    void consumed(Stream st, int fd, int cost) {
        if (cost <= 0) {
            return;
        }
        synchronized (lock) {
            if (!st.open) {
                return;
            }
            st.consumed[fd] += cost;
            if (st.consumed[fd] < st.creditStep) {
                return;
            }
            st.creditOut[fd] += st.consumed[fd];
            st.credit[fd] += st.consumed[fd];
            st.consumed[fd] = 0;
            markReady(st);
        }
        drainOut();
    }

    private void markReady(Stream st) {
        if (!st.queued) {
            st.queued = true;
            ready.add(st);
        }
    }

    /** One-answer requests: {@code OK} (or {@code STARTED} then {@code OK}) or {@code ERROR}. */
    private Mono<AgentFrame> unary(String what, boolean started, IntFunction<ClientFrame> request) {
        Mono<AgentFrame> m = Mono.create((MonoSink<AgentFrame> sink) -> {
            Stream st = new Stream(new Handler() {
                private AgentFrame.Started start;

                @Override
                public void onFrame(AgentFrame f, int length) {
                    switch (f) {
                        case AgentFrame.Ok ok -> sink.success(start != null ? start : ok);
                        case AgentFrame.Started s when started && start == null -> start = s;
                        case AgentFrame.Error e -> sink.error(new AgentErrnoException(what, e.code(), e.message()));
                        default -> throw unexpected(f, what);
                    }
                }

                @Override
                public void fail(Throwable t) {
                    sink.error(t);
                }
            });
            sink.onCancel(() -> cancel(st));
            Throwable e = open(st, request, 0, 0);
            if (e != null) {
                sink.error(e);
            }
        });
        return m.timeout(options.replyTimeout(), Mono.error(() -> noAnswer(what)));
    }

    private BackendException noAnswer(String what) {
        return new BackendException(
                "the agent did not answer " + what + " within " + options.replyTimeout(), new TimeoutException(), true);
    }

    static AgentProtocolException unexpected(AgentFrame f, String what) {
        return new AgentProtocolException(
                "unexpected " + f.getClass().getSimpleName().toUpperCase(java.util.Locale.ROOT) + " on stream "
                        + Integer.toUnsignedString(f.stream()) + " (" + what + ")");
    }

    // ---------------------------------------------------------------- inbound

    /** Reads the transport continuously; credit bounds what it can bring. */
    private final class Inbound extends BaseSubscriber<ByteBuffer> {
        @Override
        protected void hookOnSubscribe(Subscription s) {
            s.request(1);
        }

        @Override
        protected void hookOnNext(ByteBuffer buf) {
            try {
                synchronized (this) {
                    decoder.feed(buf, AgentConnection.this::dispatch);
                }
            } catch (AgentProtocolException e) {
                fail(e);
                return;
            } catch (RuntimeException e) {
                fail(new AgentProtocolException("frame handling failed: " + e));
                return;
            }
            request(1);
        }

        @Override
        protected void hookOnComplete() {
            fail(options.lostError().apply(null));
        }

        @Override
        protected void hookOnError(Throwable t) {
            fail(options.lostError().apply(t));
        }
    }

    private void dispatch(AgentFrame f) {
        int length = decoder.lastLength();
        if (f.stream() == 0) {
            connectionFrame(f);
            return;
        }
        Stream st;
        boolean pull = false;
        synchronized (lock) {
            if (!helloSeen) {
                throw new AgentProtocolException("expected HELLO first, got " + frameName(f) + " on stream "
                        + Integer.toUnsignedString(f.stream()));
            }
            st = streams.get(f.stream());
            if (st == null) {
                droppedFrames.incrementAndGet();
                droppedBytes.addAndGet(length);
                return;
            }
            int fd = 0;
            long cost = 0;
            switch (f) {
                case AgentFrame.Output o -> {
                    fd = o.fd();
                    cost = o.bytes().length;
                }
                case AgentFrame.Data d -> cost = length;
                case AgentFrame.Entry e -> cost = length;
                case AgentFrame.Event e -> cost = length;
                case AgentFrame.Proc p -> cost = length;
                case AgentFrame.Started s -> {
                    st.accepting = true;
                    pull = addDataCredit(st, s.dataCredit());
                }
                case AgentFrame.Ready r -> {
                    st.accepting = true;
                    pull = addDataCredit(st, r.dataCredit());
                }
                case AgentFrame.Credit c -> {
                    if (c.fd() != 0) {
                        throw new AgentProtocolException("CREDIT for fd " + c.fd() + " on stream " + st.id
                                + " (only 0 is for the client's DATA)");
                    }
                    pull = addDataCredit(st, c.bytes());
                }
                default -> {}
            }
            if (cost > st.credit[fd]) {
                throw new AgentProtocolException(frameName(f) + " on stream " + st.id + " carries " + cost
                        + " bytes for fd " + fd + ", beyond its credit of " + st.credit[fd]);
            }
            st.credit[fd] -= cost;
            if (f instanceof AgentFrame.Ok
                    || f instanceof AgentFrame.End
                    || f instanceof AgentFrame.Exit
                    || f instanceof AgentFrame.Error) {
                leave(st);
            }
        }
        if (f instanceof AgentFrame.Credit) {
            if (pull) {
                drainOut();
            }
            pullData(st);
            return;
        }
        if (!st.open) {
            disposePump(st);
        }
        st.handler.onFrame(f, length);
        if (pull) {
            drainOut();
            pullData(st);
        }
    }

    private boolean addDataCredit(Stream st, long bytes) {
        st.dataCredit = Math.min(MAX_DATA_CREDIT, st.dataCredit + bytes);
        if (st.dataPending != null || (st.sourceDone && !st.eofSent)) {
            markReady(st);
        }
        return true;
    }

    private static String frameName(AgentFrame f) {
        return f.getClass().getSimpleName().toUpperCase(java.util.Locale.ROOT);
    }

    private void connectionFrame(AgentFrame f) {
        switch (f) {
            case AgentFrame.Hello h -> {
                synchronized (lock) {
                    if (helloSeen) {
                        throw new AgentProtocolException("a second HELLO on stream 0");
                    }
                    int v = h.hello().version();
                    if (v < MIN_VERSION || v > MAX_VERSION) {
                        throw new AgentVersionException("the agent chose version " + v + "; the client speaks "
                                + MIN_VERSION + ".." + MAX_VERSION);
                    }
                    helloSeen = true;
                    agentHello = h.hello();
                }
                hello.tryEmitValue(h.hello());
            }
            case AgentFrame.Pong p -> {
                Sinks.One<Long> s;
                synchronized (lock) {
                    s = pings.remove(p.token());
                }
                if (s != null) {
                    s.tryEmitValue(p.token());
                } else {
                    droppedFrames.incrementAndGet();
                    droppedBytes.addAndGet(8);
                }
            }
            case AgentFrame.Error e -> {
                if (e.code() == AgentErrnoException.VERSION) {
                    throw new AgentVersionException("no common protocol version: the client speaks " + MIN_VERSION
                            + ".." + MAX_VERSION + "; the agent said: " + e.message());
                }
                if (e.code() == AgentErrnoException.BAD_FRAME) {
                    throw new AgentProtocolException("the agent refused a frame of the client: " + e.message());
                }
                fail(new AgentErrnoException("the agent connection", e.code(), e.message()));
            }
            default -> throw new AgentProtocolException("unexpected " + frameName(f) + " on stream 0");
        }
    }

    /** Ends the connection: every open stream fails with {@code t}. Idempotent. */
    void fail(Throwable t) {
        List<Stream> all;
        List<Sinks.One<Long>> waiting;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            failure = t;
            all = new ArrayList<>(streams.values());
            for (Stream st : all) {
                leave(st);
            }
            streams.clear();
            ready.clear();
            control.clear();
            waiting = new ArrayList<>(pings.values());
            pings.clear();
        }
        LOG.debug("agent connection ended: {}", t.toString());
        inbound.dispose();
        FluxSink<ByteBuffer> o = out;
        if (o != null) {
            o.complete();
        }
        hello.tryEmitError(t);
        for (Stream st : all) {
            disposePump(st);
            try {
                st.handler.fail(t);
            } catch (RuntimeException e) {
                LOG.debug("a stream's failure handler threw", e);
            }
        }
        for (Sinks.One<Long> p : waiting) {
            p.tryEmitError(t);
        }
        closedSink.tryEmitEmpty();
    }

    // ---------------------------------------------------------------- outbound

    /** Sends what is pending, as the transport demands, in batches. */
    private void drainOut() {
        if (outWip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            FluxSink<ByteBuffer> sink = out;
            while (sink != null && sink.requestedFromDownstream() > 0) {
                List<Stream> pulls = new ArrayList<>(0);
                ByteBuffer batch;
                synchronized (lock) {
                    batch = closed ? null : batch(pulls);
                }
                for (Stream st : pulls) {
                    pullData(st);
                }
                if (batch == null) {
                    break;
                }
                sink.next(batch);
            }
            missed = outWip.addAndGet(-missed);
        } while (missed != 0);
    }

    /** Collects frames up to {@link #BATCH} bytes (or one larger frame); with the lock. */
    private ByteBuffer batch(List<Stream> pulls) {
        Batch b = new Batch();
        while (!control.isEmpty()) {
            if (!b.add(control.peek())) {
                return b.build();
            }
            control.poll();
        }
        Stream st;
        while ((st = ready.poll()) != null) {
            st.queued = false;
            if (!serialize(st, b, pulls)) {
                st.queued = true;
                ready.addFirst(st);
                break;
            }
        }
        return b.build();
    }

    /** Writes a stream's pending frames; {@code false} when the batch filled first. */
    private boolean serialize(Stream st, Batch b, List<Stream> pulls) {
        if (st.request != null) {
            if (!b.add(st.request)) {
                return false;
            }
            st.request = null;
            st.requestSent = true;
        }
        if (st.closePending) {
            if (!b.add(AgentFrames.encode(new ClientFrame.Close(st.id)))) {
                return false;
            }
            st.closePending = false;
            closing--;
            return true;
        }
        if (!st.open) {
            return true;
        }
        if (st.controlFirst) {
            // a resize or signal asked for before this data was handed over goes first: the call order
            if (!controls(st, b)) {
                return false;
            }
            st.controlFirst = false;
        }
        while (st.dataPending != null && st.dataCredit > 0) {
            int room = b.dataRoom();
            if (room <= 0) {
                return false;
            }
            int n = (int)
                    Math.min(Math.min(st.dataPending.remaining(), st.dataCredit), Math.min(AgentFrames.MAX_DATA, room));
            ByteBuffer head = ByteBuffer.allocate(AgentFrames.HEADER)
                    .putInt(n)
                    .put((byte) AgentFrames.DATA)
                    .putInt(st.id)
                    .flip();
            ByteBuffer body = st.dataPending.slice(st.dataPending.position(), n);
            st.dataPending.position(st.dataPending.position() + n);
            b.addData(head, body);
            st.dataCredit -= n;
            if (!st.dataPending.hasRemaining()) {
                st.dataPending = null;
                pulls.add(st);
            }
        }
        if (st.source != null && st.sourceDone && st.dataPending == null && !st.eofSent && st.accepting) {
            if (!b.add(AgentFrames.encode(new ClientFrame.Eof(st.id)))) {
                return false;
            }
            st.eofSent = true;
        }
        if (!controls(st, b)) {
            return false;
        }
        for (int fd = 0; fd < 3; fd++) {
            if (st.creditOut[fd] > 0) {
                long n = Math.min(st.creditOut[fd], 0xFFFF_FFFFL);
                if (!b.add(AgentFrames.encode(new ClientFrame.Credit(st.id, fd, n)))) {
                    return false;
                }
                st.creditOut[fd] -= n;
            }
        }
        return true;
    }

    /** Writes a pending resize and signals; {@code false} when the batch filled first. */
    private static boolean controls(Stream st, Batch b) {
        if (st.resizePending) {
            if (!b.add(AgentFrames.encode(new ClientFrame.Resize(st.id, st.cols, st.rows)))) {
                return false;
            }
            st.resizePending = false;
        }
        while (st.signals != 0) {
            int signal = Long.numberOfTrailingZeros(st.signals) + 1;
            if (!b.add(AgentFrames.encode(new ClientFrame.Signal(st.id, signal)))) {
                return false;
            }
            st.signals &= ~(1L << (signal - 1));
        }
        return true;
    }

    /** Frames gathered for one write. */
    private static final class Batch {
        private final List<ByteBuffer> parts = new ArrayList<>();
        private int size;

        boolean add(ByteBuffer frame) {
            if (size > 0 && size + frame.remaining() > BATCH) {
                return false;
            }
            parts.add(frame);
            size += frame.remaining();
            return true;
        }

        /** Adds a DATA frame that {@link #dataRoom()} made room for. */
        void addData(ByteBuffer head, ByteBuffer body) {
            parts.add(head);
            parts.add(body);
            size += head.remaining() + body.remaining();
        }

        /** Room for one more DATA payload. */
        int dataRoom() {
            return size == 0 ? AgentFrames.MAX_DATA : BATCH - size - AgentFrames.HEADER;
        }

        ByteBuffer build() {
            if (parts.isEmpty()) {
                return null;
            }
            if (parts.size() == 1) {
                return parts.get(0).duplicate();
            }
            ByteBuffer all = ByteBuffer.allocate(size);
            for (ByteBuffer p : parts) {
                all.put(p.duplicate());
            }
            return all.flip();
        }
    }

    /** Asks the data source for one more buffer when the agent's credit allows and nothing is pending. */
    private void pullData(Stream st) {
        Pump p;
        synchronized (lock) {
            p = st.pump;
            if (p == null
                    || !st.pumpSubscribed
                    || !st.open
                    || st.dataPending != null
                    || st.sourceDone
                    || st.pumpRequested
                    || st.dataCredit <= 0) {
                return;
            }
            st.pumpRequested = true;
        }
        p.request(1);
    }

    /** Feeds a stream's {@code DATA} from its source, one buffer at a time within the agent's credit. */
    private final class Pump extends BaseSubscriber<ByteBuffer> {
        private final Stream st;

        Pump(Stream st) {
            this.st = st;
        }

        @Override
        protected void hookOnSubscribe(Subscription s) {
            // a request made before this point would be lost: pullData waits for it, then asks if credit came
            synchronized (lock) {
                st.pumpSubscribed = true;
            }
            pullData(st);
        }

        @Override
        protected void hookOnNext(ByteBuffer buf) {
            synchronized (lock) {
                st.pumpRequested = false;
                if (!st.open) {
                    return;
                }
                if (buf.hasRemaining()) {
                    st.dataPending = buf;
                    markReady(st);
                }
            }
            drainOut();
            pullData(st);
        }

        @Override
        protected void hookOnComplete() {
            synchronized (lock) {
                st.sourceDone = true;
                if (st.open) {
                    markReady(st);
                }
            }
            drainOut();
        }

        @Override
        protected void hookOnError(Throwable t) {
            boolean wasOpen;
            synchronized (lock) {
                wasOpen = st.open;
            }
            AgentConnection.this.cancel(st);
            if (wasOpen) {
                st.handler.fail(t);
            }
        }
    }

    // ---------------------------------------------------------------- inboxes

    /** A queued item: a chunk of bytes (mergeable) or a value. */
    static final class Item {
        final int fd;
        final long offset;
        byte[] buf;
        int len;
        final Object value;
        final int cost;

        private Item(int fd, long offset, byte[] buf, Object value, int cost) {
            this.fd = fd;
            this.offset = offset;
            this.buf = buf;
            this.len = buf == null ? 0 : buf.length;
            this.value = value;
            this.cost = cost;
        }

        static Item chunk(int fd, long offset, byte[] bytes) {
            return new Item(fd, offset, bytes, null, 0);
        }

        static Item value(Object value, int cost) {
            return new Item(0, 0, null, value, cost);
        }

        int cost() {
            return value == null ? len : cost;
        }

        void append(Item it) {
            if (len + it.len > buf.length) {
                buf = java.util.Arrays.copyOf(buf, Math.min(MAX_MERGED, Math.max(len + it.len, len * 2)));
            }
            System.arraycopy(it.buf, 0, buf, len, it.len);
            len += it.len;
        }

        /** The bytes, exactly. */
        byte[] bytes() {
            return len == buf.length ? buf : java.util.Arrays.copyOf(buf, len);
        }
    }

    /**
     * A stream whose answers are many items, delivered as demanded. Bounded: the agent's credit bounds the bytes
     * queued, and chunks merge once more than {@value #MERGE_AFTER} wait, so their count stays small too.
     */
    abstract static class ItemStream<T> extends Flux<T> implements Subscription, Handler {
        final AgentConnection conn;
        final String what;
        final Stream st;
        private final int[] outputFds;
        private final int window;
        private final ArrayDeque<Item> queue = new ArrayDeque<>();
        private final AtomicInteger wip = new AtomicInteger();
        private CoreSubscriber<? super T> actual; // guarded by this
        private long requested;
        private boolean done;
        private Throwable error;
        private boolean cancelled;
        private boolean terminated;

        /**
         * @param outputFds the fds credited as output (1 and 2), or 0: the stream is credited on fd 0
         */
        ItemStream(AgentConnection conn, String what, int window, int... outputFds) {
            this.conn = conn;
            this.window = window;
            this.what = what;
            this.outputFds = outputFds;
            this.st = new Stream(this);
        }

        abstract ClientFrame request(int id);

        abstract T map(Item item);

        @Override
        public abstract void onFrame(AgentFrame f, int length);

        /** Called before the request goes out; may end the stream at once. */
        boolean beforeOpen() {
            return true;
        }

        @Override
        public void subscribe(CoreSubscriber<? super T> s) {
            synchronized (this) {
                if (actual != null) {
                    Operators.error(s, new IllegalStateException(what + " may be subscribed once"));
                    return;
                }
                actual = s;
            }
            s.onSubscribe(this);
            if (!beforeOpen()) {
                return;
            }
            boolean output = outputFds.length > 0 && outputFds[0] != 0;
            Throwable e = conn.open(st, this::request, output ? 0 : window, output ? window : 0);
            if (e != null) {
                fault(e);
            }
        }

        void push(Item it) {
            synchronized (this) {
                if (cancelled || done) {
                    return;
                }
                if (it.value == null && queue.size() >= MERGE_AFTER && merge(it)) {
                    // merged
                } else {
                    queue.add(it);
                }
            }
            drain();
        }

        /** Merges a chunk into the last queued chunk of its fd (the tail, or the one before it); with this. */
        private boolean merge(Item it) {
            Item tail = queue.peekLast();
            if (tail == null || tail.value != null) {
                return false;
            }
            if (tail.fd == it.fd) {
                if (contiguous(tail, it) && tail.len + it.len <= MAX_MERGED) {
                    tail.append(it);
                    return true;
                }
                return false;
            }
            Item last = queue.pollLast();
            Item prev = queue.peekLast();
            boolean merged = false;
            if (prev != null
                    && prev.value == null
                    && prev.fd == it.fd
                    && contiguous(prev, it)
                    && prev.len + it.len <= MAX_MERGED) {
                prev.append(it);
                merged = true;
            }
            queue.addLast(last);
            return merged;
        }

        private static boolean contiguous(Item a, Item b) {
            return a.fd == 0 || a.offset + a.len == b.offset;
        }

        void complete() {
            synchronized (this) {
                if (done) {
                    return;
                }
                done = true;
            }
            drain();
        }

        void fault(Throwable t) {
            synchronized (this) {
                if (done) {
                    return;
                }
                done = true;
                error = t;
                // errors are not queued behind items a subscriber may never request: what was queued is dropped
                queue.clear();
            }
            drain();
        }

        @Override
        public void fail(Throwable t) {
            fault(t);
        }

        @Override
        public void request(long n) {
            if (n <= 0) {
                fault(new IllegalArgumentException("request must be positive, was " + n));
                conn.cancel(st);
                return;
            }
            synchronized (this) {
                requested = Operators.addCap(requested, n);
            }
            drain();
        }

        @Override
        public void cancel() {
            synchronized (this) {
                if (cancelled) {
                    return;
                }
                cancelled = true;
                queue.clear();
            }
            onCancel();
            conn.cancel(st);
        }

        /** Hook for subclasses, before the {@code CLOSE}. */
        void onCancel() {}

        private void drain() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                for (; ; ) {
                    Item it = null;
                    boolean end = false;
                    Throwable err = null;
                    CoreSubscriber<? super T> a;
                    synchronized (this) {
                        a = actual;
                        if (cancelled || terminated || a == null) {
                            break;
                        }
                        if (requested > 0 && !queue.isEmpty()) {
                            it = queue.poll();
                            if (requested != Long.MAX_VALUE) {
                                requested--;
                            }
                        } else if (queue.isEmpty() && done) {
                            end = true;
                            terminated = true;
                            err = error;
                        }
                    }
                    if (it != null) {
                        try {
                            a.onNext(map(it));
                        } catch (Throwable e) {
                            // a subscriber that throws fails its own stream, not the connection it shares
                            Exceptions.throwIfFatal(e);
                            cancel();
                            synchronized (this) {
                                terminated = true;
                            }
                            a.onError(e);
                            break;
                        }
                        conn.consumed(st, it.fd, it.cost());
                        continue;
                    }
                    if (end) {
                        if (err != null) {
                            a.onError(err);
                        } else {
                            a.onComplete();
                        }
                    }
                    break;
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }
    }
}
