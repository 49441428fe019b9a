package dev.sandbox.implementation.agent;

import dev.sandbox.BackendException;
import dev.sandbox.ProcessNotFoundException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * One connection to a sandbox agent (PROTOCOL.md, version 1) over any {@link AgentTransport}: the {@code HELLO}
 * handshake, then any number of multiplexed streams: processes ({@link #processes()}) and file operations and
 * watches ({@link #files()}).
 *
 * <pre>{@code
 * AgentConnection agent = AgentConnection.open(transport, AgentConnection.Options.defaults()).block(timeout);
 * agent.processes().spawn(AgentSpawn.of("echo", "hi")).events().subscribe(System.out::println);
 * }</pre>
 *
 * <p>This class keeps the connection's life (the handshake, the end, pings) and its table of streams ({@link
 * AgentStream}); a {@link FrameReader} routes what arrives, a {@link FrameWriter} batches what goes out, each
 * stream's credit is a {@link StreamWindow}, a {@link DataPump} feeds a stream's {@code DATA}, and an {@link
 * ItemStream} delivers a stream's answers as demanded.
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
    /** Guards the stream table, every stream's state and the writer's queues. */
    final Object lock = new Object();
    // guarded by lock
    private final Map<Integer, AgentStream> streams = new HashMap<>();
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
    final FrameWriter writer = new FrameWriter(this);
    private final FrameReader reader = new FrameReader(this);
    private final AgentProcessOps processes = new AgentProcessOps(this);
    private final AgentFileOps files = new AgentFileOps(this);
    private final AgentNetOps net = new AgentNetOps(this);

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
        writer.queue(new ClientFrame.Hello(0, MIN_VERSION, MAX_VERSION, options.client()));
        try {
            transport.open(writer.outbound()).subscribe(reader);
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
     * Foreground and background processes.
     *
     * @return the processes of this connection
     */
    public AgentProcessOps processes() {
        return processes;
    }

    /**
     * File operations.
     *
     * @return the file operations of this connection
     */
    public AgentFileOps files() {
        return files;
    }

    /**
     * Connections to TCP ports inside the sandbox.
     *
     * @return the network operations of this connection
     */
    public AgentNetOps net() {
        return net;
    }

    /**
     * Changes the agent's deadline and idle timeout.
     *
     * @param deadlineMs epoch milliseconds, 0 for none
     * @param idleMs milliseconds, 0 for none
     * @return completes when the agent took them
     */
    public Mono<Void> timers(long deadlineMs, long idleMs) {
        return UnaryCall.send(this, "timers", false, sid -> new ClientFrame.Timers(sid, deadlineMs, idleMs))
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
                writer.queue(new ClientFrame.Ping(0, token));
            }
            writer.drain();
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
        return reader.held();
    }

    /**
     * How this connection behaves.
     *
     * @return its options
     */
    Options options() {
        return options;
    }

    // ---------------------------------------------------------------- the stream table

    /**
     * Opens a stream: takes an id, queues its request.
     *
     * @return {@code null}, or why it could not be opened
     */
    Throwable open(AgentStream st, IntFunction<ClientFrame> request, long creditFd0, long creditOutput) {
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
                st.request = FrameEncoder.encode(request.apply(id));
            } catch (IllegalArgumentException e) {
                return e;
            }
            nextId++;
            st.id = id;
            st.open = true;
            st.window.open(creditFd0, creditOutput);
            streams.put(id, st);
            writer.markReady(st);
            if (st.source != null) {
                st.pump = new DataPump(this, st);
            }
        }
        if (st.pump != null) {
            st.source.subscribe(st.pump);
        }
        writer.drain();
        return null;
    }

    /**
     * Takes a stream the agent opened ({@code ACCEPTED} of a {@code LISTEN}) into the table, on the reader's thread
     * before any later frame for it. Past {@link #MAX_STREAMS} the stream is closed at once.
     *
     * @param st the stream
     * @param id the agent's id (2^31 and up)
     * @param creditFd0 the credit the agent has for its {@code DATA}
     * @param dataCredit the agent's credit for the client's {@code DATA}
     * @return whether the stream is open
     */
    boolean adopt(AgentStream st, int id, long creditFd0, long dataCredit) {
        boolean open;
        synchronized (lock) {
            st.id = id;
            st.requestSent = true; // the agent opened it: no request to send
            st.window.open(creditFd0, 0);
            st.window.grantData(dataCredit);
            st.accepting = true;
            open = !closed && streams.size() + closing < MAX_STREAMS;
            st.open = true;
            streams.put(id, st);
        }
        if (!open) {
            cancel(st);
        }
        return open;
    }

    /**
     * Starts feeding an open stream's {@code DATA} from a source (an adopted stream, whose source comes after it).
     *
     * @param st the stream
     * @param source the bytes; its completion is the stream's {@code EOF}
     */
    void feed(AgentStream st, org.reactivestreams.Publisher<ByteBuffer> source) {
        synchronized (lock) {
            if (!st.open || st.pump != null) {
                return;
            }
            st.source = source;
            st.pump = new DataPump(this, st);
        }
        source.subscribe(st.pump);
    }

    /** The subscriber gave up: {@code CLOSE} (the agent kills a foreground process, aborts a write). */
    void cancel(AgentStream st) {
        synchronized (lock) {
            if (!st.open) {
                return;
            }
            leave(st);
            if (st.requestSent) {
                st.closePending = true;
                closing++;
                writer.markReady(st);
            } else {
                st.request = null; // never sent: the agent never heard of it
            }
        }
        DataPump.dispose(st);
        writer.drain();
    }

    /** Takes a stream out of the open ones; with the lock. */
    void leave(AgentStream st) {
        st.open = false;
        streams.remove(st.id);
        st.dataPending = null;
        st.signals = 0;
        st.resizePending = false;
        st.window.dropCreditToSend();
    }

    /** The error of a request the agent did not answer within {@link Options#replyTimeout()}. */
    BackendException noAnswer(String what) {
        return new BackendException(
                "the agent did not answer " + what + " within " + options.replyTimeout(), new TimeoutException(), true);
    }

    // ---------------------------------------------------------------- what the reader reports, with the lock

    boolean closedLocked() {
        return closed;
    }

    boolean helloSeenLocked() {
        return helloSeen;
    }

    AgentStream streamLocked(int id) {
        return streams.get(id);
    }

    /** The writer sent a pending {@code CLOSE}: the stream is gone on both sides. */
    void closeSent() {
        closing--;
    }

    /** A frame for an unknown stream was dropped. */
    void dropped(int payloadLength) {
        droppedFrames.incrementAndGet();
        droppedBytes.addAndGet(payloadLength);
    }

    /** The agent's {@code HELLO} arrived. */
    void helloArrived(AgentHello h) {
        synchronized (lock) {
            if (helloSeen) {
                throw new AgentProtocolException("a second HELLO on stream 0");
            }
            int v = h.version();
            if (v < MIN_VERSION || v > MAX_VERSION) {
                throw new AgentVersionException(
                        "the agent chose version " + v + "; the client speaks " + MIN_VERSION + ".." + MAX_VERSION);
            }
            helloSeen = true;
            agentHello = h;
        }
        hello.tryEmitValue(h);
    }

    /** A {@code PONG} arrived. */
    void pongArrived(long token) {
        Sinks.One<Long> s;
        synchronized (lock) {
            s = pings.remove(token);
        }
        if (s != null) {
            s.tryEmitValue(token);
        } else {
            dropped(8);
        }
    }

    /** Ends the connection: every open stream fails with {@code t}. Idempotent. */
    void fail(Throwable t) {
        List<AgentStream> all;
        List<Sinks.One<Long>> waiting;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            failure = t;
            all = new ArrayList<>(streams.values());
            for (AgentStream st : all) {
                leave(st);
            }
            streams.clear();
            writer.clear();
            waiting = new ArrayList<>(pings.values());
            pings.clear();
        }
        LOG.debug("agent connection ended: {}", t.toString());
        reader.dispose();
        writer.complete();
        hello.tryEmitError(t);
        for (AgentStream st : all) {
            DataPump.dispose(st);
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
}
